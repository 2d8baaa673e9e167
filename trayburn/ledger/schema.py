"""The ledger's tables, their versions and migrations, opening a ledger file (with recovery), and what
SQLite's error codes mean for the ledger (the typed errors trayburn raises for them). Never moves a ledger
aside for anything but corruption.

The ledger is sacred: only SQLite saying the file is corrupt (SQLITE_CORRUPT, SQLITE_NOTADB) or a
failed integrity check lets trayburn move it aside. A full disk, an I/O error, a file that cannot be
opened or written (FULL, IOERR, CANTOPEN, READONLY, PERM) leave it exactly as it is: the error says
what is wrong, and what can still be read is served, marked stale.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple

from .. import files
from ..errors import CantWrite, Exit, TrayburnError
from .writer import LedgerConnection

if TYPE_CHECKING:  # (salvage.py is loaded only to rebuild a damaged ledger)
    from .salvage import Salvaged

NEARLY_FULL = 1 << 20  # bytes free under which an I/O error is taken for a full disk

Verdict = Literal["corrupt", "busy", "full", "io", "read_only", "other"]

_PRIMARY: dict[int, Verdict] = {
    sqlite3.SQLITE_CORRUPT: "corrupt",
    sqlite3.SQLITE_NOTADB: "corrupt",
    sqlite3.SQLITE_BUSY: "busy",
    sqlite3.SQLITE_LOCKED: "busy",
    sqlite3.SQLITE_FULL: "full",
    sqlite3.SQLITE_IOERR: "io",
    sqlite3.SQLITE_CANTOPEN: "read_only",
    sqlite3.SQLITE_READONLY: "read_only",
    sqlite3.SQLITE_PERM: "read_only",
}
_WORDS: list[tuple[str, Verdict]] = [  # only for an error without a code (not raised by SQLite itself)
    ("malformed", "corrupt"),
    ("not a database", "corrupt"),
    ("locked", "busy"),
    ("disk is full", "full"),
    ("disk i/o", "io"),
    ("readonly", "read_only"),
    ("unable to open", "read_only"),
]


def verdict(exc: BaseException) -> Verdict:
    """What an error from SQLite (or from the OS, opening the ledger file) says about the ledger."""
    if isinstance(exc, OSError):
        if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
            return "full"
        return "read_only" if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS) else "io"
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return _PRIMARY.get(code & 0xFF, "other")
    text = str(exc).lower()
    return next((v for words, v in _WORDS if words in text), "other")


class LedgerError(TrayburnError):
    """The ledger cannot be used; the message says why and what to do."""

    kind, code = "ledger", Exit.LEDGER


class LedgerDamaged(LedgerError):
    """A query met a damaged page of the ledger (SQLite's corruption error): `Ledger.repair` moves it aside and
    rebuilds it (its pages, its backups, then Cline's files); the command that met it answers after that."""

    kind, code = "ledger_damaged", Exit.LEDGER


class LedgerBusy(LedgerError):
    """Another process held the ledger's lock for longer than `busy_timeout_s`: nothing was changed;
    try again later (the next poll)."""

    kind, code = "ledger_busy", Exit.BUSY


class LedgerUnavailable(LedgerError):
    """The ledger cannot be written now (nothing was changed, nothing moved aside); what it holds may
    still be read, as of its last refresh. `Ledger.fault` holds one while it lasts."""

    kind, code = "ledger_io", Exit.IO_ERROR
    what = "could not be read or written (an I/O error)"
    todo = "check the disk"

    def __init__(self, path: Path, exc: BaseException):
        super().__init__(f"the ledger {path} {self.what} ({exc}); nothing was changed or moved; {self.todo}")
        self.path = path


class LedgerFull(LedgerUnavailable):
    kind, code = "ledger_disk_full", Exit.IO_ERROR
    what = "cannot be written: the disk is full"
    todo = "free some space (the figures are as of the last refresh until then)"


class LedgerReadOnly(LedgerUnavailable):
    kind, code = "ledger_read_only", Exit.CANT_WRITE
    what = "cannot be opened for writing"
    todo = "check its permissions and its folder's (the figures are as of the last refresh until then)"


def unavailable(path: Path, exc: BaseException) -> LedgerUnavailable:
    """The typed error for a fault that leaves the ledger as it is. SQLite says only "disk I/O error"
    when a full disk stops it sizing its shared-memory file: the free space then says which it was."""
    kind = verdict(exc)
    if kind == "io" and _says_io(exc) and _nearly_full(path.parent):
        kind = "full"
    cls = LedgerFull if kind == "full" else LedgerReadOnly if kind == "read_only" else LedgerUnavailable
    return cls(path, exc)


def _says_io(exc: BaseException) -> bool:
    """An I/O error as such (SQLite's, or EIO), not an OS error that names another cause (a folder gone)."""
    return not isinstance(exc, OSError) or exc.errno == errno.EIO


def _nearly_full(folder: Path) -> bool:
    """Little space left on a disk that has a size (/proc and some FUSE mounts give 0 blocks, 0 free)."""
    try:
        st = os.statvfs(folder)
    except (OSError, AttributeError):  # no statvfs on Windows
        return False
    return st.f_blocks > 0 and st.f_bavail * st.f_frsize < NEARLY_FULL


def busy_error(path: Path, waited_s: float, exc: sqlite3.Error) -> LedgerBusy:
    return LedgerBusy(f"the ledger {path} is locked by another process (waited {waited_s:g} s: {exc}); try again later")


def is_busy(exc: sqlite3.Error) -> bool:
    """SQLITE_BUSY or SQLITE_LOCKED ("database is locked"): another connection holds the lock."""
    return verdict(exc) == "busy"


log = logging.getLogger(__name__)

SCHEMA_VERSION = 7

# `feed`: the trayburn Source that wrote the row ("cline_cli", later "vscode_tasks", "machine:<id>"): a
# refresh of one feed marks only that feed's files gone and its sessions removed. `origin`: the machine a
# session (or a file) came from; NULL: this machine.
SESSIONS_TABLE = """
CREATE TABLE sessions(
  id TEXT PRIMARY KEY, folder TEXT, started_ms INTEGER, ended_ms INTEGER, status TEXT, title TEXT,
  prompt TEXT, cwd TEXT, workspace_root TEXT, model TEXT, provider TEXT, source TEXT, forked_from TEXT,
  removed INTEGER NOT NULL DEFAULT 0, origin TEXT, feed TEXT NOT NULL DEFAULT 'cline_cli');
"""
# A call refers to its file by id (not by path: most of a call's row would be its path). Its identity
# is (key, file_id); that index also finds a key's copies. The day index holds counted calls only.
FILES_TABLE = """
CREATE TABLE files(
  id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, session_id TEXT NOT NULL, kind TEXT NOT NULL, agent TEXT,
  size INTEGER, mtime_ns INTEGER, inode INTEGER,
  bad_size INTEGER, bad_mtime_ns INTEGER, bad_inode INTEGER, error TEXT,
  gone INTEGER NOT NULL DEFAULT 0, origin TEXT, feed TEXT NOT NULL DEFAULT 'cline_cli', ctime_ns INTEGER,
  bad_ctime_ns INTEGER, meta TEXT);
"""
CALLS_TABLE = """
CREATE TABLE calls(
  id INTEGER PRIMARY KEY, key TEXT NOT NULL, session_id TEXT NOT NULL, file_id INTEGER NOT NULL, agent TEXT,
  seq INTEGER, ts_ms INTEGER NOT NULL, model TEXT, input INTEGER NOT NULL, output INTEGER NOT NULL,
  cache_read INTEGER NOT NULL, cache_write INTEGER NOT NULL, cost REAL, tools TEXT,
  counted INTEGER NOT NULL DEFAULT 0, provider TEXT, commands TEXT, UNIQUE(key, file_id));
"""
CALLS_INDEXES = """
CREATE INDEX calls_session ON calls(session_id);
CREATE INDEX calls_day ON calls(ts_ms) WHERE counted=1;
"""
SCHEMA = SESSIONS_TABLE + FILES_TABLE + CALLS_TABLE + CALLS_INDEXES
# A source's scan digest, stored when the ledger had nothing left to do with that scan (`Source.trusts_digest`):
# a later scan with the same digest needs no look at the files table. Any write to that table, by any version
# of trayburn, drops the digest of the feed whose row it wrote (the triggers; an older trayburn's own triggers,
# which it adds back when they are missing, drop every digest), so a digest never outlives the state it stands
# for, and one app's new task does not cost the other feeds their digests. Not part of the schema version: a
# ledger without these (an older trayburn's) gets them at its next open for writing.
_DROPS = {"INSERT": "NEW.feed", "UPDATE": "OLD.feed, NEW.feed", "DELETE": "OLD.feed"}
SCANS = [
    "CREATE TABLE IF NOT EXISTS scans(feed TEXT PRIMARY KEY, digest TEXT NOT NULL)",
    *(
        f"CREATE TRIGGER IF NOT EXISTS scans_drop_{what.lower()} AFTER {what} ON files"
        f" BEGIN DELETE FROM scans WHERE feed IN ({feeds}); END"
        for what, feeds in _DROPS.items()
    ),
    # (with them, as they are added the same way: the other machines' files, which every day's figure looks for,
    # found without a pass over every file's row)
    "CREATE INDEX IF NOT EXISTS files_machines ON files(origin, path) WHERE kind='machine'",
]
SCANS_NAMES = "('scans', 'scans_drop_insert', 'scans_drop_update', 'scans_drop_delete', 'files_machines')"
_OLD_SCANS_TRIGGERS = ("files_insert", "files_update", "files_delete")  # an older trayburn's: every digest at once

# Schema 1 → 2: `calls.file` (the path) becomes `calls.file_id`; calls and their ownership are kept as they
# are (a rebuild would lose the calls of sessions whose folders were removed since). Written against schema
# 2's tables as they were (schema 3 only adds columns, below).
V2_FILES_AND_CALLS = """
CREATE TABLE files(
  id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, session_id TEXT NOT NULL, kind TEXT NOT NULL, agent TEXT,
  size INTEGER, mtime_ns INTEGER, inode INTEGER,
  bad_size INTEGER, bad_mtime_ns INTEGER, bad_inode INTEGER, error TEXT,
  gone INTEGER NOT NULL DEFAULT 0);
CREATE TABLE calls(
  id INTEGER PRIMARY KEY, key TEXT NOT NULL, session_id TEXT NOT NULL, file_id INTEGER NOT NULL, agent TEXT,
  seq INTEGER, ts_ms INTEGER NOT NULL, model TEXT, input INTEGER NOT NULL, output INTEGER NOT NULL,
  cache_read INTEGER NOT NULL, cache_write INTEGER NOT NULL, cost REAL, tools TEXT,
  counted INTEGER NOT NULL DEFAULT 0, UNIQUE(key, file_id));
"""
MIGRATE_1_TO_2 = f"""
DROP INDEX IF EXISTS calls_key;
DROP INDEX IF EXISTS calls_day;
DROP INDEX IF EXISTS calls_session;
ALTER TABLE calls RENAME TO calls_v1;
ALTER TABLE files RENAME TO files_v1;
{V2_FILES_AND_CALLS}
INSERT INTO files(path, session_id, kind, agent, size, mtime_ns, inode, bad_size, bad_mtime_ns, bad_inode,
  error, gone)
  SELECT path, session_id, kind, agent, size, mtime_ns, inode, bad_size, bad_mtime_ns, bad_inode, error, gone
  FROM files_v1 ORDER BY path;
INSERT OR IGNORE INTO files(path, session_id, kind, gone)
  SELECT file, MIN(session_id), 'messages', 1 FROM calls_v1 GROUP BY file;
INSERT INTO calls(id, key, session_id, file_id, agent, seq, ts_ms, model, input, output, cache_read, cache_write,
  cost, tools, counted)
  SELECT c.id, c.key, c.session_id, f.id, c.agent, c.seq, c.ts_ms, c.model, c.input, c.output, c.cache_read,
  c.cache_write, c.cost, c.tools, c.counted FROM calls_v1 c JOIN files f ON f.path = c.file ORDER BY c.id;
DROP TABLE calls_v1;
DROP TABLE files_v1;
{CALLS_INDEXES}
"""
# Schema 2 → 3: each call's provider (the session's, until a file is read again and gives the message's
# own); where sessions and files came from (NULL: this machine) and which feed wrote them (all rows of a
# schema 2 ledger came from the Cline CLI's folder). Every call is kept, counted as it was.
MIGRATE_2_TO_3 = """
ALTER TABLE calls ADD COLUMN provider TEXT;
ALTER TABLE sessions ADD COLUMN origin TEXT;
ALTER TABLE sessions ADD COLUMN feed TEXT NOT NULL DEFAULT 'cline_cli';
ALTER TABLE files ADD COLUMN origin TEXT;
ALTER TABLE files ADD COLUMN feed TEXT NOT NULL DEFAULT 'cline_cli';
UPDATE calls SET provider = (SELECT s.provider FROM sessions s WHERE s.id = calls.session_id);
"""
# Schema 3 → 4: a message without an id is keyed by its content (`parse.idless_key`), no longer by
# "<session>:<index>" ("<session>/<file>:<index>" for other files), so renamed copies count once. Those
# old keys get the prefix LEGACY and their files, where still on disk, are read again: the refresh
# then drops a file's LEGACY rows as it writes the new ones (`Refresh.calls`). Rows of files gone
# from disk keep their old keys and keep counting.
LEGACY = "v3:"
MIGRATE_3_TO_4 = f"""
UPDATE calls SET key = '{LEGACY}' || key WHERE seq >= 0 AND (key = session_id || ':' || seq
  OR (substr(key, 1, length(session_id) + 1) = session_id || '/' AND substr(key, -length(seq) - 1) = ':' || seq));
UPDATE files SET size = NULL, mtime_ns = NULL, inode = NULL
  WHERE gone = 0 AND id IN (SELECT file_id FROM calls WHERE key GLOB '{LEGACY}*');
"""
# Schema 4 → 5: the change time joins a file's checkpoint (a rewrite keeping size, mtime and inode moves it):
# two columns (added by `_adopt_change_times`, which also fills them for files unchanged since last read).
MIGRATE_4_TO_5 = ""
# Schema 5 → 6: the programs a call's shell commands ran (`Call.commands`), for the cost by tool's split of
# run_commands. Every call's tool names are already held (since schema 1), so the split by tool needs no re-read;
# the words are not: a call stored before has NULL there, shown as "not recorded" under run_commands until its file
# is read again (it is, when it changes). Nothing is read again for this: a history's re-read would cost a cold
# ingest for a refinement of one row.
MIGRATE_5_TO_6 = ""  # the column, added by `_add_commands`
# Schema 6 → 7: `files.meta`, the inode's metadata (files.meta: mode, links, owner, group) when its good
# checkpoint's change time was taken, so a change time moved by a chmod, a chown or another hard link alone is
# taken without a read (files.metadata_only; writer.Refresh.read_with). NULL: not known, read as before. Filled by
# `_add_meta` for the files whose inode and change time are as stored (a stat each, nothing read), so a chmod of a
# whole history after the upgrade costs no re-read either.
MIGRATE_6_TO_7 = ""  # the column, added by `_add_meta`
MIGRATIONS = {
    1: MIGRATE_1_TO_2,
    2: MIGRATE_2_TO_3,
    3: MIGRATE_3_TO_4,
    4: MIGRATE_4_TO_5,
    5: MIGRATE_5_TO_6,
    6: MIGRATE_6_TO_7,
}  # from version → the statements that bring it to the next


def run_script(db: sqlite3.Connection, script: str) -> None:
    """Statement by statement: `executescript` would commit the open transaction first."""
    for statement in filter(str.strip, script.split(";")):
        db.execute(statement)


def rollback(db: sqlite3.Connection) -> None:
    """ROLLBACK if a transaction is still open (SQLite ends some itself, on a full disk say), so that
    "cannot rollback - no transaction is active" never hides the error that got us here."""
    if db.in_transaction:
        try:
            db.execute("ROLLBACK")
        except sqlite3.Error as exc:
            log.warning("ROLLBACK failed: %s", exc)


class Opened(NamedTuple):
    db: sqlite3.Connection
    notice: str | None  # set when it had to be rebuilt (and what was recovered)
    fault: LedgerUnavailable | None  # set when it could be opened only for reading


def open_ledger(path: Path, busy_timeout_s: float, check: bool = False) -> Opened:
    """A connection to the ledger at `path`, created or migrated as needed. Only a file SQLite says is
    corrupt is moved aside and rebuilt, keeping the rows it still yields (the notice says so). A full
    disk, an I/O error or a file that cannot be written leaves it as it is: opened read-only with the
    fault set, else the fault raised. Raises LedgerBusy, LedgerUnavailable, or LedgerError (a newer
    schema, a planted link). `check`: run `PRAGMA integrity_check` first (a ledger a query found damaged,
    `doctor`); an ordinary open never does: SQLite's own errors on a damaged page lead to the same rebuild."""
    try:
        files.private_dir(path.parent)
    except files.Refused as exc:
        raise LedgerError(str(exc)) from None
    except OSError as exc:
        if verdict(exc) == "full":
            raise unavailable(path, exc) from None
        raise CantWrite(
            f"the ledger's folder {path.parent} cannot be created or written ({exc});"
            " give trayburn another with --state-dir DIR or TRAYBURN_STATE_DIR"
        ) from None
    try:
        _create_private(path)
        db = _connect_checked(path, busy_timeout_s, check)
        return Opened(db, None, None)  # (no backup here: Ledger.backup_if_due makes the day's after the figures)
    except _Rebuild as exc:
        return _rebuild(path, busy_timeout_s, str(exc))
    except files.Refused as exc:
        raise LedgerError(str(exc)) from None
    except (sqlite3.Error, OSError) as exc:
        kind = verdict(exc)
        if kind == "busy" and isinstance(exc, sqlite3.Error):
            raise busy_error(path, busy_timeout_s, exc) from None
        if kind == "corrupt":
            return _rebuild(path, busy_timeout_s, f"the ledger {path} was damaged ({exc})")
        if kind == "other":
            raise LedgerError(f"the ledger {path} cannot be used ({exc}); it was left as it is") from None
        fault = unavailable(path, exc)
        log.warning("%s", fault)
        served = _read_only(path, busy_timeout_s)
        if served is None:
            raise fault from None
        return Opened(served, None, fault)


def _create_private(path: Path) -> None:
    """The ledger file made (or kept) 0600 before SQLite opens it, so its WAL and SHM get 0600 too;
    never through a link planted at its name or its WAL's."""
    for suffix in ("-wal", "-shm", "-journal"):
        side = Path(str(path) + suffix)
        if side.is_symlink():
            raise files.Refused(
                "link", side, f"{side} is a symbolic link; trayburn will not open its ledger through it"
            )
    os.close(files.open_private(path, os.O_RDWR | os.O_CREAT))


def connect(target: str | Path, busy_timeout_s: float, uri: bool = False) -> sqlite3.Connection:
    """Every connection to a ledger: names byte-exact (see writer.LedgerConnection), autocommit, shared by threads."""
    return sqlite3.connect(
        target,
        timeout=busy_timeout_s,
        isolation_level=None,
        check_same_thread=False,
        uri=uri,
        factory=LedgerConnection,
    )


def _read_only(path: Path, busy_timeout_s: float) -> sqlite3.Connection | None:
    """What a ledger that cannot be written still holds: read-only, else immutable (its WAL unread)."""
    if not path.is_file() or path.is_symlink():
        return None
    base = path.absolute().as_uri()
    for query in ("mode=ro", "immutable=1"):
        try:
            db = connect(f"{base}?{query}", busy_timeout_s, uri=True)
        except sqlite3.Error:
            continue
        try:
            if db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
                db.execute("SELECT count(*) FROM calls").fetchone()
                return db
        except sqlite3.Error:
            pass
        db.close()
    return None


def _connect_checked(path: Path, busy_timeout_s: float, check: bool = False) -> sqlite3.Connection:
    """A connection to the ledger, created or migrated; `check`: its integrity checked first."""
    db = connect(path, busy_timeout_s)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version == 0 and not db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone():
            _create(db)
        elif version > SCHEMA_VERSION:
            raise LedgerError(
                f"the ledger {path} was written by a newer trayburn (schema {version}, this one knows "
                f"{SCHEMA_VERSION}); upgrade trayburn or use another --state-dir"
            )
        elif version < SCHEMA_VERSION:
            if version not in MIGRATIONS:
                raise _Rebuild(f"the ledger {path} had an older schema ({version})")
            _migrate(db, path)
        if db.execute(f"SELECT count(*) FROM sqlite_master WHERE name IN {SCANS_NAMES}").fetchone()[0] < len(SCANS):
            _add_scans(db)
        if check:
            problem = integrity_problem(db)
            if problem is not None:
                raise _Rebuild(f"the ledger {path} failed SQLite's integrity check ({problem})")
        return db
    except BaseException:
        db.close()
        raise


def integrity_problem(db: sqlite3.Connection) -> str | None:
    """SQLite's full `PRAGMA integrity_check` (every page, index and constraint): None when it says "ok", else
    its first complaint. Seconds on a large ledger: run by `doctor` and once a day by the tray, never at open."""
    first = db.execute("PRAGMA integrity_check(1)").fetchone()[0]
    return None if first == "ok" else str(first)


class _Rebuild(sqlite3.DatabaseError):
    """A ledger to move aside and rebuild: a schema too old to migrate, or a failed integrity check."""


def _create(db: sqlite3.Connection) -> None:
    """One transaction (executescript would commit first and let another process race us)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        if db.execute("PRAGMA user_version").fetchone()[0] == 0:  # another process may have won the race
            run_script(db, SCHEMA)
            for statement in SCANS:
                db.execute(statement)
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        db.execute("COMMIT")
    except BaseException:
        rollback(db)
        raise


def _add_scans(db: sqlite3.Connection) -> None:
    db.execute("BEGIN IMMEDIATE")
    try:
        for name in _OLD_SCANS_TRIGGERS:
            db.execute(f"DROP TRIGGER IF EXISTS {name}")
        for statement in SCANS:
            db.execute(statement)
        db.execute("COMMIT")
    except BaseException:
        rollback(db)
        raise


def _adopt_change_times(db: sqlite3.Connection) -> None:
    """Schema 4 → 5: a file whose size, mtime and inode are as last read takes its change time now, so the
    upgrade reads nothing again (what a 4-field checkpoint could not tell, the old one could not either)."""
    have = {r[1] for r in db.execute("PRAGMA table_info(files)")}
    for column in ("ctime_ns", "bad_ctime_ns"):
        if column not in have:  # (a ledger made by this version and marked older by hand has them)
            db.execute(f"ALTER TABLE files ADD COLUMN {column} INTEGER")
    rows = db.execute("SELECT id, path, size, mtime_ns, inode FROM files WHERE gone=0 AND size IS NOT NULL").fetchall()
    for file_id, path, size, mtime_ns, inode in rows:
        try:
            st = os.stat(path)
        except (OSError, ValueError, TypeError):  # gone, unreadable, or a name that is not text
            continue
        if (st.st_size, st.st_mtime_ns, st.st_ino) == (size, mtime_ns, inode):
            db.execute("UPDATE files SET ctime_ns=? WHERE id=?", (st.st_ctime_ns, file_id))


def _add_commands(db: sqlite3.Connection) -> None:
    """Schema 5 → 6: `calls.commands`, NULL for every call stored before (nothing is read again)."""
    if "commands" not in {r[1] for r in db.execute("PRAGMA table_info(calls)")}:  # (made by this version, marked older)
        db.execute("ALTER TABLE calls ADD COLUMN commands TEXT")


def _add_meta(db: sqlite3.Connection) -> None:
    """Schema 6 → 7: `files.meta`, filled for each file whose inode and change time are as stored (its metadata
    then is what it was when that checkpoint was taken); NULL for the others (nothing is read again)."""
    if "meta" not in {r[1] for r in db.execute("PRAGMA table_info(files)")}:  # (made by this version, marked older)
        db.execute("ALTER TABLE files ADD COLUMN meta TEXT")
    rows = db.execute(
        "SELECT id, path, size, mtime_ns, inode, ctime_ns FROM files WHERE gone=0 AND size IS NOT NULL AND meta IS NULL"
    ).fetchall()
    for file_id, path, *c in rows:
        if None not in c:  # (a checkpoint of schema 4's, without its change time)
            meta = files.meta_at(path, files.Checkpoint(*c))
            if meta is not None:
                db.execute("UPDATE files SET meta=? WHERE id=?", (meta, file_id))


def _migrate(db: sqlite3.Connection, path: Path) -> None:
    """Bring an older schema forward, keeping every call, in one transaction (like `_create`)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]  # another process may have migrated it
        while version < SCHEMA_VERSION:
            run_script(db, MIGRATIONS[version])
            if version == 4:
                _adopt_change_times(db)
            if version == 5:
                _add_commands(db)
            if version == 6:
                _add_meta(db)
            version += 1
            db.execute(f"PRAGMA user_version={version}")
        db.execute("COMMIT")
    except BaseException:
        rollback(db)
        raise
    log.info("migrated the ledger %s to schema %d", path, SCHEMA_VERSION)


def _rebuild(path: Path, busy_timeout_s: float, why: str) -> Opened:
    """Copy every row the damaged file still yields into a new ledger beside it, then put that new ledger in
    its place; a refresh then adds back what Cline's files hold. The damaged file stays at its place until its
    successor is whole, so a rebuild interrupted anywhere (killed, Ctrl-C, power cut) leaves the damaged file
    for the next open to rebuild again, never an empty ledger it would trust. The damaged file is then kept
    (never deleted) as `<name>.broken-<time>`: the evidence, nothing reads it again."""
    from . import salvage

    tmp = path.with_name(f".{path.name}.rebuild-{os.getpid()}.tmp")  # two processes never share one
    try:
        got = _salvaged_into(tmp, path, busy_timeout_s)
        aside = _keep_aside(path)
        os.replace(tmp, path)  # (its WAL went aside first: SQLite must never apply the old WAL to the new file)
    except (sqlite3.Error, OSError) as exc:  # a full disk, say: the damaged file stays for the next open
        _remove(tmp)
        if verdict(exc) == "busy" and isinstance(exc, sqlite3.Error):
            raise busy_error(path, busy_timeout_s, exc) from None
        raise unavailable(path, exc) from None
    db = _connect_checked(path, busy_timeout_s)
    notice = f"{why}; moved it to {aside.name} and rebuilt it"
    if got is not None:
        notice += f": {salvage.said(got)}"
    notice += "; what Cline's files still hold is read again"
    salvage.keep_record(path, notice, got)
    log.warning(notice)
    return Opened(db, notice, None)


def _salvaged_into(tmp: Path, path: Path, busy_timeout_s: float) -> Salvaged | None:
    """A new ledger at `tmp` holding what the damaged ledger at `path` and its backups still yield, whole on
    disk; what was recovered (None: nothing). Raises what writing `tmp` met (a full disk, an I/O error)."""
    from . import salvage

    _remove(tmp)  # (what a killed rebuild of an earlier process with this id left)
    _create_private(tmp)
    db = _connect_checked(tmp, busy_timeout_s)
    try:
        try:
            got = salvage.recover(path, db, ledger=path, newest_schema=SCHEMA_VERSION)
        except sqlite3.Error as exc:
            if verdict(exc) not in ("corrupt", "other"):
                raise
            log.warning("could not copy the rows of %s: %s", path, exc)  # Cline's files are read again
            got = None
        db.execute("PRAGMA journal_mode=DELETE")  # everything in the one file before it is renamed
    finally:
        db.close()
    with open(tmp, "rb+") as fh:
        os.fsync(fh.fileno())
    return got


def _remove(tmp: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(OSError):
            Path(str(tmp) + suffix).unlink(missing_ok=True)


def _keep_aside(path: Path) -> Path:
    """The damaged ledger kept under a `.broken-` name (a second link to it: `path` itself stays until the new
    ledger replaces it), its WAL and shared memory moved beside it."""
    aside = path.with_name(f"{path.name}.broken-{time.strftime('%Y%m%d-%H%M%S')}")
    n = 1
    while True:
        try:
            if path.exists():
                os.link(path, aside)
            break
        except FileExistsError:  # (rebuilt twice within a second)
            n += 1
            aside = aside.with_name(f"{path.name}.broken-{time.strftime('%Y%m%d-%H%M%S')}-{n}")
        except OSError:  # no hard links here: a copy (the damaged file stays at its place until replaced)
            import shutil  # (about 20 ms to import, for a rare case)

            shutil.copy2(path, aside)
            break
    for suffix in ("-wal", "-shm"):
        side = Path(str(path) + suffix)
        if side.exists():
            os.replace(side, Path(str(aside) + suffix))
    return aside
