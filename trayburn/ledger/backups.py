"""The ledger's backups beside it: one a day, the last seven of trayburn's own kept, 0600; which of them a
rebuild may trust; what `doctor` says of them.

Each is made with SQLite's online backup API (a consistent copy while other processes read and write: in
WAL mode the copy's read transaction blocks no writer) into a temp file beside the ledger, marked as
trayburn's (a `trayburn_backup` table: when it was made, by this clock), checked with `integrity_check`,
then renamed into place: a backup is whole and sound or not there at all. A ledger that fails the check is
never backed up.

Time is never taken from a name. A backup is aged by its file's mtime (when it was written); one whose
mtime is in the future (a clock that ran ahead, a restored snapshot) is of no known age: it never counts as
the day's backup and is the first of trayburn's own to be rotated out. Only trayburn's own backups (marked,
or an older trayburn's: named for the moment its mtime says) are ever deleted, and only beyond the seven
newest; a file planted under a backup's name is never deleted and never pushes one out.

A backup is trusted by a rebuild only when it is sound (`problem`): a regular file of this user's, with
the ledger's schema (a known `user_version`; the sessions, files and calls tables with their key columns)
that passes SQLite's `integrity_check`. It is opened read-only and immutable, so a stray `-journal` or
`-wal` beside it is never applied to it, and no lock is taken on it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import sqlite3
import stat
import time
from pathlib import Path
from typing import NamedTuple

from ..files import atomic_write, open_private, read_file

log = logging.getLogger(__name__)

BACKUPS_KEPT = 7
BACKUP_EVERY_S = 86400.0
AHEAD_S = 300.0  # an mtime this far past the clock is still "now" (a coarse or drifting clock); beyond, the future
_NAME = re.compile(r"\.backup-(\d{8}-\d{6})(?:-\d+)?$")
MARK = "trayburn_backup"  # the table that marks a backup as trayburn's own
OLDEST_SCHEMA = 2  # the oldest ledger schema a rebuild merges from (schema 1 kept calls by path)
KEY_COLUMNS = {
    "sessions": {"id"},
    "files": {"id", "path", "session_id", "kind"},
    "calls": {"key", "session_id", "file_id", "ts_ms", "input", "output", "cache_read", "cache_write"},
}
STATE = "backups.json"  # beside the ledger: the last failure to make one (for `doctor`)


class Backup(NamedTuple):
    path: Path
    mtime: float  # when it was written (the file's own time)
    uid: int


def listed(ledger: Path, now: float | None = None) -> list[Backup]:
    """The regular files named like the ledger's backups (a FIFO, device or link is left alone: opening a
    FIFO waits for a writer that never comes), newest first by their own time; those of no known age (an
    mtime in the future) last."""
    try:
        names = os.listdir(ledger.parent)
    except OSError:
        return []
    prefix = f"{ledger.name}.backup-"
    found = []
    for name in names:
        if not name.startswith(prefix) or not _NAME.search(name):
            continue
        try:
            st = os.lstat(ledger.parent / name)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            found.append(Backup(ledger.parent / name, st.st_mtime, st.st_uid))
    now = time.time() if now is None else now
    return sorted(found, key=lambda b: (_future(b, now), -b.mtime, b.path.name))


def backups(ledger: Path) -> list[Path]:
    """`listed`, as paths."""
    return [b.path for b in listed(ledger)]


def _future(b: Backup, now: float) -> bool:
    return b.mtime > now + AHEAD_S


def backup_due(ledger: Path, now: float | None = None) -> bool:
    """No backup of trayburn's was written in the day before `now` (by its mtime; never by its name)."""
    now = time.time() if now is None else now
    for b in listed(ledger, now):
        if b.mtime <= now - BACKUP_EVERY_S:
            return True  # the newest of a known age is older than a day (the rest are older still)
        if not _future(b, now) and _ours(b):
            return False
    return True


def make_backup(db: sqlite3.Connection, ledger: Path, now: float | None = None) -> Path | None:
    """A backup of the open ledger `db` (at `ledger`), marked and checked; trayburn's own beyond BACKUPS_KEPT
    removed (`rotate`). None when the copy failed its check or could not be written (logged, and kept for
    `doctor`: a backup never fails the caller)."""
    now = time.time() if now is None else now
    name = f"{ledger.name}.backup-{time.strftime('%Y%m%d-%H%M%S', time.localtime(now))}"
    target = _free_name(ledger.parent / name)
    tmp = ledger.parent / f".{name}.{os.getpid()}.tmp"  # two processes due at once never share one
    try:
        os.close(open_private(tmp, os.O_RDWR | os.O_CREAT | os.O_TRUNC))
        copy = sqlite3.connect(tmp, isolation_level=None)
        try:
            db.backup(copy)
            copy.execute("PRAGMA journal_mode=DELETE")
            copy.execute(f"CREATE TABLE IF NOT EXISTS {MARK}(made_ms INTEGER NOT NULL)")
            copy.execute(f"DELETE FROM {MARK}")
            copy.execute(f"INSERT INTO {MARK}(made_ms) VALUES(?)", (int(now * 1000),))
            verdict = copy.execute("PRAGMA integrity_check(1)").fetchone()[0]
        finally:
            copy.close()
        if verdict != "ok":
            _failed(ledger, f"the copy failed SQLite's integrity check ({verdict})", now)
            tmp.unlink(missing_ok=True)
            return None
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.utime(tmp, (now, now))
        os.replace(tmp, target)
    except (OSError, sqlite3.Error) as exc:
        _failed(ledger, str(exc), now)
        tmp.unlink(missing_ok=True)
        return None
    _succeeded(ledger)
    rotate(ledger, now)
    return target


def _free_name(target: Path) -> Path:
    """`target`, or with `-2`, `-3`… when a file (made within the same second, or planted) has that name:
    a backup never replaces a file it did not make."""
    n = 1
    while os.path.lexists(target):
        n += 1
        target = target.with_name(f"{_NAME.sub('', target.name)}.backup-{_stamp(target.name)}-{n}")
    return target


def _stamp(name: str) -> str:
    found = _NAME.search(name)
    return found[1] if found else ""


def rotate(ledger: Path, now: float | None = None) -> list[Path]:
    """trayburn's own backups beyond the BACKUPS_KEPT newest, removed (those of no known age first); the
    paths removed. A file it did not make is never removed, nor counted."""
    now = time.time() if now is None else now
    ours = [b for b in listed(ledger, now) if _ours(b)]
    removed = []
    for b in ours[BACKUPS_KEPT:]:
        with contextlib.suppress(OSError):
            b.path.unlink()
            removed.append(b.path)
    return removed


def daily_backup(db: sqlite3.Connection, ledger: Path, now: float | None = None) -> Path | None:
    """`make_backup` when one is due and the ledger holds a call (the cheap checks first: one folder listing)."""
    if not backup_due(ledger, now):
        return None
    try:
        if db.execute("SELECT 1 FROM calls LIMIT 1").fetchone() is None:
            return None
    except sqlite3.Error:
        return None
    return make_backup(db, ledger, now)


def _ours(b: Backup) -> bool:
    """Made by trayburn: marked as its own, or made by an older trayburn (no mark, but named for the very
    second its mtime says it was written). This user's, and a database SQLite opens."""
    if hasattr(os, "getuid") and b.uid != os.getuid():
        return False
    try:
        db = open_backup(b.path)
    except sqlite3.Error:
        return False
    try:
        try:
            return db.execute(f"SELECT made_ms FROM {MARK}").fetchone() is not None
        except sqlite3.Error:
            pass
        try:
            named = time.mktime(time.strptime(_stamp(b.path.name), "%Y%m%d-%H%M%S"))
        except (ValueError, OverflowError):
            return False
        return abs(named - b.mtime) < 2 and _schema_problem(db, 99) is None
    finally:
        db.close()


def open_backup(path: Path) -> sqlite3.Connection:
    """A backup opened read-only and immutable (no lock taken, no journal or WAL beside it applied), never
    through a link, never a file that is not a regular one (checked on a descriptor opened without blocking)."""
    if not _regular(path):
        raise sqlite3.OperationalError(f"{path.name} is not a regular file")
    return sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro&immutable=1", uri=True, isolation_level=None)


def _regular(path: Path) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode)
    finally:
        os.close(fd)


def problem(b: Backup, newest_schema: int) -> str | None:
    """Why the backup cannot be trusted (None: it is sound): another user's, not a regular file, not a ledger
    (no schema, another program's database, tables without the ledger's key columns), or SQLite's integrity
    check fails."""
    if hasattr(os, "getuid") and b.uid != os.getuid():
        return "it belongs to another user"
    try:
        db = open_backup(b.path)
    except sqlite3.Error as exc:
        return str(exc)
    try:
        wrong = _schema_problem(db, newest_schema)
        if wrong is not None:
            return wrong
        verdict = db.execute("PRAGMA integrity_check(1)").fetchone()[0]
        return None if verdict == "ok" else f"it fails SQLite's integrity check ({verdict})"
    except sqlite3.Error as exc:
        return str(exc)
    finally:
        db.close()


def _schema_problem(db: sqlite3.Connection, newest_schema: int) -> str | None:
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.Error as exc:
        return str(exc)
    if not OLDEST_SCHEMA <= version <= newest_schema:
        return f"it is not a trayburn ledger trayburn can read (schema {version})"
    for table, needed in KEY_COLUMNS.items():
        have = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
        if not needed <= have:
            missing = ", ".join(sorted(needed - have))
            return f"its {table} table lacks {missing}" if have else f"it has no {table} table"
    return None


# ---- what doctor says -----------------------------------------------------------------------------------


def _failed(ledger: Path, why: str, now: float) -> None:
    log.warning("no backup of %s: %s", ledger, why)
    with contextlib.suppress(OSError):
        atomic_write(ledger.parent / STATE, json.dumps({"failed_ms": int(now * 1000), "failure": why}).encode())


def _succeeded(ledger: Path) -> None:
    with contextlib.suppress(OSError):
        (ledger.parent / STATE).unlink(missing_ok=True)


def report(ledger: Path, now: float | None = None) -> dict:
    """For `doctor`: how many backups trayburn keeps, the newest and its age, the last failure to make one
    (since the last success), and files named like a backup that are not trayburn's (never deleted)."""
    now = time.time() if now is None else now
    found = listed(ledger, now)
    ours = [b for b in found if _ours(b)]
    newest = next((b for b in ours if not _future(b, now)), None)
    failure = None
    with contextlib.suppress(OSError, ValueError, TypeError):
        doc = json.loads(read_file(ledger.parent / STATE, 64_000, follow=False))
        failure = {"at_ms": int(doc["failed_ms"]), "reason": str(doc["failure"])}
    return {
        "count": len(ours),
        "kept": BACKUPS_KEPT,
        "newest": None if newest is None else {"path": str(newest.path), "age_s": max(0.0, now - newest.mtime)},
        "last_failure": failure,
        "not_trayburns": [str(b.path) for b in found if b not in ours],
        "future": [str(b.path) for b in ours if _future(b, now)],
    }


def newest_sound(ledger: Path, newest_schema: int = 99) -> Path | None:
    """The newest backup a rebuild would trust (`problem` says why the others are not)."""
    return next((b.path for b in listed(ledger) if problem(b, newest_schema) is None), None)
