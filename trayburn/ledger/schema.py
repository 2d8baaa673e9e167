"""The ledger's tables, their versions and migrations, and opening a ledger file (with recovery)."""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from pathlib import Path

from ..errors import Exit, TrayburnError

log = logging.getLogger(__name__)

SCHEMA_VERSION = 3

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
  gone INTEGER NOT NULL DEFAULT 0, origin TEXT, feed TEXT NOT NULL DEFAULT 'cline_cli');
"""
CALLS_TABLE = """
CREATE TABLE calls(
  id INTEGER PRIMARY KEY, key TEXT NOT NULL, session_id TEXT NOT NULL, file_id INTEGER NOT NULL, agent TEXT,
  seq INTEGER, ts_ms INTEGER NOT NULL, model TEXT, input INTEGER NOT NULL, output INTEGER NOT NULL,
  cache_read INTEGER NOT NULL, cache_write INTEGER NOT NULL, cost REAL, tools TEXT,
  counted INTEGER NOT NULL DEFAULT 0, provider TEXT, UNIQUE(key, file_id));
"""
CALLS_INDEXES = """
CREATE INDEX calls_session ON calls(session_id);
CREATE INDEX calls_day ON calls(ts_ms) WHERE counted=1;
"""
SCHEMA = SESSIONS_TABLE + FILES_TABLE + CALLS_TABLE + CALLS_INDEXES

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
MIGRATIONS = {1: MIGRATE_1_TO_2, 2: MIGRATE_2_TO_3}  # from version → the statements that bring it to the next


class LedgerError(TrayburnError):
    """The ledger cannot be used; the message says why and what to do."""

    kind, code = "ledger", Exit.LEDGER


class LedgerBusy(LedgerError):
    """Another process held the ledger's lock for longer than `busy_timeout_s`: nothing was changed;
    try again later (the next poll)."""

    kind, code = "ledger_busy", Exit.BUSY


def is_busy(exc: sqlite3.Error) -> bool:
    """SQLITE_BUSY or SQLITE_LOCKED ("database is locked"): another connection holds the lock."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(exc)


def busy_error(path: Path, waited_s: float, exc: sqlite3.Error) -> LedgerBusy:
    return LedgerBusy(f"the ledger {path} is locked by another process (waited {waited_s:g} s: {exc}); try again later")


def run_script(db: sqlite3.Connection, script: str) -> None:
    """Statement by statement: `executescript` would commit the open transaction first."""
    for statement in filter(str.strip, script.split(";")):
        db.execute(statement)


def open_ledger(path: Path, busy_timeout_s: float) -> tuple[sqlite3.Connection, str | None]:
    """A connection to the ledger at `path`, created or migrated as needed; an unreadable file is moved
    aside and rebuilt (the notice says so). Raises LedgerBusy, or LedgerError for a newer schema."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        return _connect_checked(path, busy_timeout_s), None
    except _Rebuild as exc:
        return _rebuild(path, busy_timeout_s, str(exc))
    except sqlite3.DatabaseError as exc:
        if is_busy(exc):
            raise busy_error(path, busy_timeout_s, exc) from None
        return _rebuild(path, busy_timeout_s, f"the ledger {path} was unreadable ({exc})")


def _connect_checked(path: Path, busy_timeout_s: float) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False)
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
        if db.execute("PRAGMA quick_check(1)").fetchone()[0] != "ok":
            raise sqlite3.DatabaseError("it failed SQLite's integrity check")
        return db
    except BaseException:
        db.close()
        raise


class _Rebuild(sqlite3.DatabaseError):
    """A schema too old to migrate: rebuilt from Cline's files."""


def _create(db: sqlite3.Connection) -> None:
    """One transaction (executescript would commit first and let another process race us)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        if db.execute("PRAGMA user_version").fetchone()[0] == 0:  # another process may have won the race
            run_script(db, SCHEMA)
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def _migrate(db: sqlite3.Connection, path: Path) -> None:
    """Bring an older schema forward, keeping every call, in one transaction (like `_create`)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]  # another process may have migrated it
        while version < SCHEMA_VERSION:
            run_script(db, MIGRATIONS[version])
            version += 1
            db.execute(f"PRAGMA user_version={version}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    log.info("migrated the ledger %s to schema %d", path, SCHEMA_VERSION)


def _rebuild(path: Path, busy_timeout_s: float, why: str) -> tuple[sqlite3.Connection, str]:
    aside = path.with_name(f"{path.name}.broken-{time.strftime('%Y%m%d-%H%M%S')}")
    for suffix in ("", "-wal", "-shm"):
        src = Path(str(path) + suffix)
        if src.exists():
            os.replace(src, Path(str(aside) + suffix))
    notice = f"{why}; moved it to {aside.name} and rebuilt it from Cline's files"
    log.warning(notice)
    return _connect_checked(path, busy_timeout_s), notice
