"""Rotating backups of the ledger, beside it: one a day, the last seven, 0600.

Each is made with SQLite's online backup API (a consistent copy while other processes read and write:
in WAL mode the copy's read transaction blocks no writer), into a temp file beside the ledger, checked
with `integrity_check` after writing, then renamed into place, so a backup is whole and sound or not
there at all. A ledger that fails the check is never backed up over a good backup. A rebuild merges the
newest sound backup with what the damaged file still holds (salvage.py).
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import time
from pathlib import Path

from .. import files as fsutil

log = logging.getLogger(__name__)

KEEP = 7
EVERY_S = 86400.0
_NAME = re.compile(r"\.backup-(\d{8}-\d{6})$")


def backups(ledger: Path) -> list[Path]:
    """The ledger's backups, newest first."""
    try:
        names = os.listdir(ledger.parent)
    except OSError:
        return []
    prefix = f"{ledger.name}.backup-"
    found = [n for n in names if n.startswith(prefix) and _NAME.search(n)]
    return [ledger.parent / n for n in sorted(found, reverse=True)]


def due(ledger: Path, now: float | None = None) -> bool:
    """No backup was made in the day before `now` (by the time in its name: when it was made)."""
    now = time.time() if now is None else now
    for b in backups(ledger)[:1]:
        found = _NAME.search(b.name)
        try:
            made = time.mktime(time.strptime(found[1], "%Y%m%d-%H%M%S")) if found else 0.0
        except (ValueError, OverflowError):
            return True
        return not 0 <= now - made < EVERY_S
    return True


def make(db: sqlite3.Connection, ledger: Path, now: float | None = None) -> Path | None:
    """A backup of the open ledger `db` (at `ledger`), checked; the oldest beyond KEEP removed. None when the
    copy failed its check or could not be written (logged: a backup never fails the caller)."""
    now = time.time() if now is None else now
    name = f"{ledger.name}.backup-{time.strftime('%Y%m%d-%H%M%S', time.localtime(now))}"
    target = ledger.parent / name
    tmp = ledger.parent / f".{name}.{os.getpid()}.tmp"  # two processes due at once never share one
    try:
        fd = fsutil.open_private(tmp, os.O_RDWR | os.O_CREAT | os.O_TRUNC)
        os.close(fd)
        copy = sqlite3.connect(tmp, isolation_level=None)
        try:
            db.backup(copy)
            copy.execute("PRAGMA journal_mode=DELETE")
            verdict = copy.execute("PRAGMA integrity_check(1)").fetchone()[0]
        finally:
            copy.close()
        if verdict != "ok":
            log.warning("no backup of %s: the copy failed SQLite's integrity check (%s)", ledger, verdict)
            tmp.unlink(missing_ok=True)
            return None
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except (OSError, sqlite3.Error) as exc:
        log.warning("no backup of %s: %s", ledger, exc)
        tmp.unlink(missing_ok=True)
        return None
    for old in backups(ledger)[KEEP:]:
        old.unlink(missing_ok=True)
    return target


def daily(db: sqlite3.Connection, ledger: Path, now: float | None = None) -> Path | None:
    """`make` when one is due and the ledger holds a call (the cheap checks first: one folder listing)."""
    if not due(ledger, now):
        return None
    try:
        if db.execute("SELECT 1 FROM calls LIMIT 1").fetchone() is None:
            return None
    except sqlite3.Error:
        return None
    return make(db, ledger, now)


def newest_sound(ledger: Path) -> Path | None:
    """The newest backup that opens and passes SQLite's quick check."""
    for b in backups(ledger):
        try:
            src = sqlite3.connect(f"{b.absolute().as_uri()}?mode=ro", uri=True, isolation_level=None)
        except sqlite3.Error:
            continue
        try:
            if src.execute("PRAGMA quick_check(1)").fetchone()[0] == "ok":
                return b
        except sqlite3.Error:
            pass
        finally:
            src.close()
    return None
