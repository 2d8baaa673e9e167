"""The ledger: SQLite holding every call seen in Cline's files, each counted once.

`refresh()` stats every file and re-reads only those whose checkpoint (size, mtime_ns, inode)
changed. Calls are upserted, never deleted: a call that vanishes from a rewritten file, or a
session whose folder is removed, keeps counting for the day it happened (the money was spent).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

from .cline import files as cf
from .cline.parse import Call, Manifest, ParseError, id_ms, parse_manifest, parse_messages

log = logging.getLogger(__name__)

SCHEMA_VERSION = 2
RETRY_RECENT_NS = 60 * 10**9  # a broken file changed in the last minute is retried even if its stat looks the same
ENDED = ("completed", "failed", "cancelled")  # a session with this status adds no files until its manifest changes

SESSIONS_TABLE = """
CREATE TABLE sessions(
  id TEXT PRIMARY KEY, folder TEXT, started_ms INTEGER, ended_ms INTEGER, status TEXT, title TEXT,
  prompt TEXT, cwd TEXT, workspace_root TEXT, model TEXT, provider TEXT, source TEXT, forked_from TEXT,
  removed INTEGER NOT NULL DEFAULT 0);
"""
# A call refers to its file by id (not by path: most of a call's row would be its path). Its identity
# is (key, file_id); that index also finds a key's copies. The day index holds counted calls only.
FILES_AND_CALLS_TABLES = """
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
CALLS_INDEXES = """
CREATE INDEX calls_session ON calls(session_id);
CREATE INDEX calls_day ON calls(ts_ms) WHERE counted=1;
"""
SCHEMA = SESSIONS_TABLE + FILES_AND_CALLS_TABLES + CALLS_INDEXES

# Schema 1 → 2: `calls.file` (the path) becomes `calls.file_id`; calls and their ownership are kept as they
# are (a rebuild would lose the calls of sessions whose folders were removed since).
MIGRATE_1_TO_2 = f"""
DROP INDEX IF EXISTS calls_key;
DROP INDEX IF EXISTS calls_day;
DROP INDEX IF EXISTS calls_session;
ALTER TABLE calls RENAME TO calls_v1;
ALTER TABLE files RENAME TO files_v1;
{FILES_AND_CALLS_TABLES}
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
MIGRATIONS = {1: MIGRATE_1_TO_2}  # from version → the statements that bring it to the next


class LedgerError(Exception):
    """The ledger cannot be used; the message says why and what to do."""


class LedgerBusy(LedgerError):
    """Another process held the ledger's lock for longer than `busy_timeout_s`: nothing was changed;
    try again later (the next poll)."""


@dataclass
class RefreshStats:
    folders: int = 0
    files_stat: int = 0
    files_read: int = 0
    bytes_read: int = 0
    calls_upserted: int = 0
    errors: dict[str, str] = field(default_factory=dict)  # files that failed in this refresh
    removed_sessions: int = 0
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return bool(self.files_read or self.removed_sessions)


@dataclass(slots=True)
class _Known:
    good: cf.Checkpoint | None
    bad: cf.Checkpoint | None
    gone: bool
    kind: str
    session_id: str = ""
    id: int | None = None  # the files row


class Ledger:
    def __init__(
        self,
        path: Path,
        max_file_bytes: int = 256 * 10**6,
        busy_timeout_s: float = 30,
        clock: Callable[[], float] = time.monotonic,
    ):
        """`busy_timeout_s`: how long to wait for another process's lock before raising LedgerBusy.
        `clock` (seconds): times the full sweeps of the session folders (`files.scan`)."""
        self.path = Path(path)
        self.max_file_bytes = max_file_bytes
        self.busy_timeout_s = busy_timeout_s
        self.notice: str | None = None  # set when the ledger had to be rebuilt
        self.db = self._open()
        self._lock = threading.RLock()  # one connection shared by threads (poller, menu, window): one at a time
        self._listings = cf.ScanCache(clock)  # folder listings: see `files.scan` for when one is listed again
        self._listings.settled = self._ended
        self._known_memo: tuple[int, dict[str, _Known]] | None = None  # (data_version, files) between refreshes
        self._ended_memo: tuple[int, set[str]] | None = None  # (data_version, ids of ended sessions)
        # folders (the very objects the scan gave) found as last read against this `known` dict; its live files
        self._checked: tuple[dict | None, dict[str, tuple[cf.Folder, int]], int, bool] = (None, {}, 0, False)

    # ---- opening, versions, recovery ------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            return self._connect_checked()
        except sqlite3.DatabaseError as exc:
            if _is_busy(exc):
                raise self._busy(exc) from None
            return self._rebuild(f"the ledger {self.path} was unreadable ({exc})")

    def _busy(self, exc: sqlite3.Error) -> LedgerBusy:
        return LedgerBusy(
            f"the ledger {self.path} is locked by another process (waited {self.busy_timeout_s:g} s: {exc}); "
            "try again later"
        )

    def _connect_checked(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version == 0 and not db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone():
                self._create(db)
            elif version > SCHEMA_VERSION:
                raise LedgerError(
                    f"the ledger {self.path} was written by a newer trayburn (schema {version}, this one knows "
                    f"{SCHEMA_VERSION}); upgrade trayburn or use another --state-dir"
                )
            elif version < SCHEMA_VERSION:
                if version not in MIGRATIONS:
                    db.close()
                    return self._rebuild(f"the ledger {self.path} had an older schema ({version})")
                self._migrate(db)
            if db.execute("PRAGMA quick_check(1)").fetchone()[0] != "ok":
                raise sqlite3.DatabaseError("it failed SQLite's integrity check")
            return db
        except BaseException:
            db.close()
            raise

    def _create(self, db: sqlite3.Connection) -> None:
        """One transaction (executescript would commit first and let another process race us)."""
        db.execute("BEGIN IMMEDIATE")
        try:
            if db.execute("PRAGMA user_version").fetchone()[0] == 0:  # another process may have won the race
                _run_script(db, SCHEMA)
                db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _migrate(self, db: sqlite3.Connection) -> None:
        """Bring an older schema forward, keeping every call, in one transaction (like `_create`)."""
        db.execute("BEGIN IMMEDIATE")
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]  # another process may have migrated it
            while version < SCHEMA_VERSION:
                _run_script(db, MIGRATIONS[version])
                version += 1
                db.execute(f"PRAGMA user_version={version}")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        log.info("migrated the ledger %s to schema %d", self.path, SCHEMA_VERSION)

    def _rebuild(self, why: str) -> sqlite3.Connection:
        aside = self.path.with_name(f"{self.path.name}.broken-{time.strftime('%Y%m%d-%H%M%S')}")
        for suffix in ("", "-wal", "-shm"):
            src = Path(str(self.path) + suffix)
            if src.exists():
                os.replace(src, Path(str(aside) + suffix))
        self.notice = f"{why}; moved it to {aside.name} and rebuilt it from Cline's files"
        log.warning(self.notice)
        return self._connect_checked()

    def close(self) -> None:
        with self._lock:
            self.db.close()

    # ---- refresh -------------------------------------------------------------------------------

    def refresh(self, sessions_dir: Path | str) -> RefreshStats:
        """Bring the ledger up to date with the files under `sessions_dir`. Thread-safe; other
        processes wait for the write lock (SQLite's) up to `busy_timeout_s`, then LedgerBusy."""
        with self._lock, self._busy_raises():
            return self._refresh(sessions_dir)

    @contextmanager
    def _busy_raises(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.OperationalError as exc:
            if _is_busy(exc):
                raise self._busy(exc) from exc
            raise

    def _refresh(self, sessions_dir: Path | str) -> RefreshStats:
        started = time.perf_counter()
        stats = RefreshStats()
        scan = cf.scan(str(sessions_dir), self._listings)
        known = self._known_unless_unchanged()
        listed = str(sessions_dir) not in scan.problems  # unlisted: change nothing (not "all removed")
        if listed and self._needs_work(scan, known):
            self.db.execute("BEGIN IMMEDIATE")
            try:
                known = self._known_unless_unchanged()  # re-read only if another connection wrote meanwhile
                version, self._known_memo, self._ended_memo = self._known_memo[0], None, None
                self._checked = (None, {}, 0, False)  # `known` is updated in place below
                self._relist_unseen(scan, known)
                refresh = _Refresh(self, scan, known, stats)
                refresh.run()
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            if len(refresh.written) < len(known) // 4:  # the usual poll: a few files changed
                known.update(self._known(refresh.written))  # our own commit leaves data_version as it was
                self._known_memo = (version, known)
        stats.folders = len(scan.folders)
        stats.files_stat = sum(1 + len(f.messages) for f in scan.folders)
        stats.errors = {**scan.problems, **stats.errors}
        stats.seconds = time.perf_counter() - started
        return stats

    def _ended(self) -> set[str]:
        """Ids of the sessions whose status is ended (their folders are not listed at every refresh)."""
        version = self.db.execute("PRAGMA data_version").fetchone()[0]
        if self._ended_memo is None or self._ended_memo[0] != version:
            marks = ",".join("?" * len(ENDED))
            ids = {r[0] for r in self.db.execute(f"SELECT id FROM sessions WHERE status IN ({marks})", ENDED)}
            self._ended_memo = (version, ids)
        return self._ended_memo[1]

    def _relist_unseen(self, scan: cf.Scan, known: dict[str, _Known]) -> None:
        """List again the folders holding files the ledger knows and the scan did not see (another process
        found them since this one listed the folder), rather than mark those files gone."""
        if scan.swept:
            return
        seen = {f.path for d in scan.folders for f in (d.manifest, *d.messages)}
        folders = {d.path for d in scan.folders}
        unseen = {os.path.dirname(p) for p, k in known.items() if not k.gone and k.kind != "external" and p not in seen}
        if unseen & folders:
            cf.relist(scan, unseen & folders, self._listings)

    def _known_unless_unchanged(self) -> dict[str, _Known]:
        """`_known()`, reused while no connection has written the ledger since (PRAGMA data_version
        changes when another connection commits; our own commits clear the memo)."""
        version = self.db.execute("PRAGMA data_version").fetchone()[0]
        if self._known_memo is None or self._known_memo[0] != version:
            self._known_memo = (version, self._known())
        return self._known_memo[1]

    def _known(self, paths: set[str] | None = None) -> dict[str, _Known]:
        """What the ledger knows of every file (or of these paths)."""
        sql = (
            "SELECT path, size, mtime_ns, inode, bad_size, bad_mtime_ns, bad_inode, gone, kind, session_id, id"
            " FROM files"
        )
        if paths is None:
            rows = self.db.execute(sql)
        else:
            rows = [row for path in paths for row in self.db.execute(sql + " WHERE path=?", (path,))]
        return {
            r[0]: _Known(
                cf.Checkpoint(r[1], r[2], r[3]) if r[1] is not None else None,
                cf.Checkpoint(r[4], r[5], r[6]) if r[4] is not None else None,
                bool(r[7]),
                r[8],
                r[9],
                r[10],
            )
            for r in rows
        }

    def _needs_work(self, scan: cf.Scan, known: dict[str, _Known]) -> bool:
        """Whether some file changed (or came, or went) since the ledger last read it. A folder the scan
        gave as the same object as at the last check against this same `known` is not checked again."""
        if self._checked[0] is not known:
            live = sum(1 for k in known.values() if not k.gone and k.kind != "external")
            self._checked = (known, {}, live, any(k.kind == "external" for k in known.values()))
        _, checked, live, externals = self._checked
        seen = 0
        for folder in scan.folders:
            hit = checked.get(folder.path)
            if hit is not None and hit[0] is folder:
                seen += hit[1]
                continue
            m = known.get(folder.manifest.path)
            if _changed(folder.manifest, m):
                return True
            n = 1
            if m.good is not None:  # else not a session: its manifest never parsed and has not changed since
                for f in folder.messages:
                    k = known.get(f.path)
                    if (k is None or k.good != f.checkpoint or k.gone) and _changed(f, k):  # the first test, inline
                        return True
                    n += 1
            checked[folder.path] = (folder, n)
            seen += n
        return live != seen or (externals and self._externals_changed(scan, known))

    def _externals_changed(self, scan: cf.Scan, known: dict[str, _Known]) -> bool:
        """A `messages_path` file matters only while its session has no usable co-located file."""
        leadless = {f.session_id for f in scan.folders if not _lead_usable(f, known.get(_lead_path(f)))}
        return any(
            _external_changed(p, k) for p, k in known.items() if k.kind == "external" and k.session_id in leadless
        )

    # ---- queries (plain rows; report.py turns them into figures) --------------------------------

    def query(self, sql: str, params: tuple | dict = ()) -> list[tuple]:
        """Rows of a read; never in the middle of a refresh (its figures would be half-settled)."""
        with self._lock, self._busy_raises():
            return self.db.execute(sql, params).fetchall()

    def problems(self) -> list[tuple[str, str, int | None]]:
        """Files whose latest read failed: (path, reason, mtime_ns of the failed version)."""
        return self.query(
            "SELECT path, error, bad_mtime_ns FROM files WHERE error IS NOT NULL AND gone=0 ORDER BY path"
        )


def _is_busy(exc: sqlite3.Error) -> bool:
    """SQLITE_BUSY or SQLITE_LOCKED ("database is locked"): another connection holds the lock."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(exc)


def _run_script(db: sqlite3.Connection, script: str) -> None:
    """Statement by statement: `executescript` would commit the open transaction first."""
    for statement in filter(str.strip, script.split(";")):
        db.execute(statement)


def _changed(f: cf.FileStat, known: _Known | None) -> bool:
    return known is None or known.gone or _should_read(f.checkpoint, known)


def _lead_path(folder: cf.Folder) -> str:
    return os.path.join(folder.path, folder.session_id + cf.MESSAGES_SUFFIX)


def _lead_usable(folder: cf.Folder, known: _Known | None) -> bool:
    """The co-located lead file is there and has parsed at least once."""
    lead = _lead_path(folder)
    return any(f.path == lead for f in folder.messages) and known is not None and known.good is not None


def _external_changed(path: str, known: _Known) -> bool:
    try:
        current = cf.stat_file(path)
    except OSError:
        return not known.gone
    return known.gone or _should_read(current, known)


def _should_read(current: cf.Checkpoint, known: _Known) -> bool:
    if current == known.good:
        return False
    if current != known.bad:
        return True
    return time.time_ns() - current.mtime_ns < RETRY_RECENT_NS


class _Refresh:
    """One refresh inside a write transaction.

    Each call is counted by exactly one of the rows holding its key: the row of the session that started
    first. A row inserted with a key no other row has is its own owner, so it is counted as it is inserted;
    ownership is settled at the end only for keys that have copies (forks, copied folders), for the calls of
    sessions whose start moved and for rollups that came or went.
    """

    def __init__(self, ledger: Ledger, scan: cf.Scan, known: dict[str, _Known], stats: RefreshStats):
        self.ledger, self.db, self.scan, self.known, self.stats = ledger, ledger.db, scan, known, stats
        self.touched_sessions: dict[str, cf.Folder] = {}
        self.reordered: set[str] = set()  # sessions whose start (or whose files' session) changed
        self.manifests: dict[str, tuple[Manifest, int]] = {}  # manifests parsed in this refresh, with their file id
        self.with_metrics: set[str] = set()  # sessions given calls from messages in this refresh
        self.new_ids: dict[str, int] = {}  # files rows added in this refresh
        self.live: set[str] = set()
        self.ok: dict[str, cf.Checkpoint] = {}  # files read and parsed in this refresh: their new checkpoint
        self.written: set[str] = set()  # paths whose files row this refresh wrote
        self.first_new_call = 0  # calls rows from this id on were inserted in this refresh

    def run(self) -> None:
        self.db.execute("CREATE TEMP TABLE IF NOT EXISTS touched(key TEXT PRIMARY KEY)")
        self.db.execute("DELETE FROM touched")
        self.first_new_call = (self.db.execute("SELECT max(id) FROM calls").fetchone()[0] or 0) + 1
        sessions = {r[0]: r[1] for r in self.db.execute("SELECT id, started_ms FROM sessions")}
        seen_files: set[str] = set()
        for folder in self.scan.folders:
            if self._as_last_read(folder):  # the usual folder: nothing to do but note that it is there
                seen_files.add(folder.manifest.path)
                seen_files.update(f.path for f in folder.messages)
                self.live.add(folder.session_id)
            else:
                self._folder(folder, sessions, seen_files)
        self._mark_gone(seen_files)
        self._settle(sessions)

    def _as_last_read(self, folder: cf.Folder) -> bool:
        """Every file as it was when last read and parsed, the lead's among them (so no `messages_path`)."""
        known = self.known
        for f in (folder.manifest, *folder.messages):
            k = known.get(f.path)
            if k is None or k.gone or k.good != f.checkpoint:
                return False
        return bool(folder.messages) and folder.messages[0].path == _lead_path(folder)

    def _folder(self, folder: cf.Folder, sessions: dict, seen: set[str]) -> None:
        sid = folder.session_id
        seen.add(folder.manifest.path)
        manifest = self._read_manifest(folder)
        if manifest is not None:
            self._upsert_session(folder, manifest, sid in sessions, sessions.get(sid))
        elif sid not in sessions:
            return  # not a session (yet): its manifest does not parse
        self.live.add(sid)
        for f in folder.messages:
            seen.add(f.path)
            self._messages(folder, f, "messages")
        external = self._external(folder, manifest)
        if external:
            seen.add(external.path)
            self._messages(folder, external, "external")

    @cached_property
    def scanned(self) -> set[str]:  # built on first use: only a session without its lead file needs it
        return {os.path.abspath(f.path) for d in self.scan.folders for f in [d.manifest, *d.messages]}

    def _external(self, folder: cf.Folder, manifest: Manifest | None) -> cf.FileStat | None:
        """`messages_path`, used only when the co-located lead file is missing or has never parsed."""
        if _lead_usable(folder, self._known_now(_lead_path(folder))):
            return None
        path = manifest.messages_path if manifest else self._stored_messages_path(folder.session_id)
        if not path or os.path.abspath(path) in self.scanned:  # never another session's (or our own) file
            return None
        try:
            return cf.FileStat(path, cf.stat_file(path))
        except OSError:
            return None

    def _known_now(self, path: str) -> _Known | None:
        good = self.ok.get(path) or (self.known[path].good if path in self.known else None)
        if good is not None:  # from memory: `good` is only ever set (never cleared) in a refresh
            return _Known(good, None, False, "messages")
        row = self.db.execute("SELECT size, mtime_ns, inode FROM files WHERE path=?", (path,)).fetchone()
        if row is None:
            return None
        return _Known(cf.Checkpoint(*row) if row[0] is not None else None, None, False, "messages")

    def _stored_messages_path(self, sid: str) -> str | None:
        row = self.db.execute("SELECT path FROM files WHERE session_id=? AND kind='external'", (sid,)).fetchone()
        return row[0] if row else None

    def _read(self, f: cf.FileStat, sid: str, kind: str) -> tuple[bytes, cf.Checkpoint] | None:
        """The file's bytes if it changed (or came back) since the last read; None otherwise."""
        known = self.known.get(f.path)
        if known is not None and not known.gone and not _should_read(f.checkpoint, known):
            return None
        try:
            data, ckpt = cf.read(f.path, self.ledger.max_file_bytes)
        except cf.FileProblem as exc:  # not remembered as bad: retried at every refresh (no bytes read)
            self._file_id(f.path, sid, kind)
            self._failed(f, str(exc), remember=False)
            return None
        self.stats.files_read += 1
        self.stats.bytes_read += len(data)
        return data, ckpt

    def _failed(self, f: cf.FileStat, why: str, remember: bool = True) -> None:
        self.stats.errors[f.path] = why
        self.written.add(f.path)
        c = f.checkpoint if remember else cf.Checkpoint(None, None, None)
        self.db.execute(
            "UPDATE files SET bad_size=?, bad_mtime_ns=?, bad_inode=?, error=?, gone=0 WHERE path=?",
            (c.size, c.mtime_ns, c.inode, why, f.path),
        )

    def _file_id(self, path: str, sid: str, kind: str) -> int:
        """The file's row; added, without a checkpoint, if it has none."""
        known = self.known.get(path)
        if known is not None:
            return known.id
        return self.new_ids.get(path) or self._add_file(path, sid, kind, None, cf.Checkpoint(None, None, None))

    def _add_file(self, path: str, sid: str, kind: str, agent: str | None, c: cf.Checkpoint) -> int:
        self.written.add(path)
        cursor = self.db.execute(
            "INSERT INTO files(path, session_id, kind, agent, size, mtime_ns, inode) VALUES(?,?,?,?,?,?,?)",
            (path, sid, kind, agent, *c),
        )
        self.new_ids[path] = cursor.lastrowid
        return cursor.lastrowid

    def _ok(self, path: str, sid: str, kind: str, agent: str | None, c: cf.Checkpoint) -> int:
        """Record a good read; the file's row id."""
        self.ok[path] = c
        known = self.known.get(path)
        if known is None and path not in self.new_ids:  # the usual first sight: one statement
            return self._add_file(path, sid, kind, agent, c)
        if known is not None and known.session_id != sid:
            self.reordered.add(sid)  # a `messages_path` another session had: its calls change session
        file_id = self._file_id(path, sid, kind)
        self.written.add(path)
        self.db.execute(
            "UPDATE files SET session_id=?, kind=?, agent=?, size=?, mtime_ns=?, inode=?,"
            " bad_size=NULL, bad_mtime_ns=NULL, bad_inode=NULL, error=NULL, gone=0 WHERE id=?",
            (sid, kind, agent, *c, file_id),
        )
        return file_id

    def _read_manifest(self, folder: cf.Folder) -> Manifest | None:
        f = folder.manifest
        got = self._read(f, folder.session_id, "manifest")
        if got is None:
            return None
        data, ckpt = got
        try:
            manifest = parse_manifest(data)
        except ParseError as exc:
            self._file_id(f.path, folder.session_id, "manifest")
            self._failed(f, str(exc))
            return None
        file_id = self._ok(f.path, folder.session_id, "manifest", None, ckpt)
        self.manifests[folder.session_id] = (manifest, file_id)
        return manifest

    def _upsert_session(self, folder: cf.Folder, m: Manifest, known: bool, started_before: int | None) -> None:
        sid = folder.session_id
        self.db.execute(
            "INSERT INTO sessions(id, folder, started_ms, ended_ms, status, title, prompt, cwd, workspace_root,"
            " model, provider, source, forked_from, removed) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,0) "
            "ON CONFLICT(id) DO UPDATE SET folder=excluded.folder, started_ms=excluded.started_ms,"
            " ended_ms=excluded.ended_ms, status=excluded.status, title=excluded.title, prompt=excluded.prompt,"
            " cwd=excluded.cwd, workspace_root=excluded.workspace_root, model=excluded.model,"
            " provider=excluded.provider, source=excluded.source, forked_from=excluded.forked_from, removed=0",
            (
                sid,
                folder.path,
                m.started_ms,
                m.ended_ms,
                m.status,
                m.title,
                m.prompt,
                m.cwd,
                m.workspace_root,
                m.model,
                m.provider,
                m.source,
                m.forked_from,
            ),
        )
        if known and started_before != m.started_ms:  # a new session's calls are settled as they are inserted
            self.reordered.add(sid)
        self.touched_sessions[sid] = folder

    def _messages(self, folder: cf.Folder, f: cf.FileStat, kind: str) -> None:
        sid = folder.session_id
        got = self._read(f, sid, kind)
        if got is None:
            return
        data, ckpt = got
        try:
            parsed = parse_messages(data, _scope(sid, f.path, kind))
        except ParseError as exc:
            self._file_id(f.path, sid, kind)
            self._failed(f, str(exc))
            return
        file_id = self._ok(f.path, sid, kind, parsed.agent, ckpt)
        self._upsert_calls(folder, file_id, parsed.agent, parsed.calls)
        if parsed.calls:
            self.with_metrics.add(sid)
        self.touched_sessions[sid] = folder

    def _session_defaults(self, folder: cf.Folder) -> tuple[int, str | None]:
        """Time and model for calls that carry none: the session's start and model. A session without a
        start: the time its id begins with, else its manifest's mtime (never 1970)."""
        sid = folder.session_id
        if sid in self.manifests:  # upserted in this refresh: the row holds exactly these values
            m = self.manifests[sid][0]
            started, model = m.started_ms, m.model
        else:
            row = self.db.execute("SELECT started_ms, model FROM sessions WHERE id=?", (sid,)).fetchone()
            started, model = row if row else (None, None)
        return started or id_ms(sid) or folder.manifest.checkpoint.mtime_ns // 10**6, model

    def _upsert_calls(self, folder: cf.Folder, file_id: int, agent: str, calls: list[Call]) -> None:
        """A row whose key is new is inserted counted; copies of a key are settled later (see the class)."""
        if not calls:
            return
        sid = folder.session_id
        start, model = self._session_defaults(folder)
        self.db.executemany(
            "INSERT INTO calls(key, session_id, file_id, agent, seq, ts_ms, model, input, output, cache_read,"
            " cache_write, cost, tools, counted) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,"
            " NOT EXISTS(SELECT 1 FROM calls WHERE key=?1)) "
            "ON CONFLICT(key, file_id) DO UPDATE SET session_id=excluded.session_id, agent=excluded.agent,"
            " seq=excluded.seq, ts_ms=excluded.ts_ms, model=excluded.model, input=excluded.input,"
            " output=excluded.output, cache_read=excluded.cache_read, cache_write=excluded.cache_write,"
            " cost=excluded.cost, tools=excluded.tools",
            [
                (
                    c.key,
                    sid,
                    file_id,
                    agent,
                    c.index,
                    c.ts_ms or start,
                    c.model or model,
                    c.input,
                    c.output,
                    c.cache_read,
                    c.cache_write,
                    c.cost,
                    ",".join(c.tools),
                )
                for c in calls
            ],
        )
        self.stats.calls_upserted += len(calls)

    def _mark_gone(self, seen_files: set[str]) -> None:
        gone = [p for p, k in self.known.items() if not k.gone and p not in seen_files]  # files added here were seen
        self.db.executemany("UPDATE files SET gone=1 WHERE path=?", [(p,) for p in gone])
        self.written.update(gone)
        removed = [s for (s,) in self.db.execute("SELECT id FROM sessions WHERE removed=0") if s not in self.live]
        self.db.executemany("UPDATE sessions SET removed=1 WHERE id=?", [(s,) for s in removed])
        self.stats.removed_sessions = len(removed)

    def _settle(self, sessions_before: dict) -> None:
        """Rollups for sessions without per-message metrics; then who owns each call whose key has copies."""
        self.db.execute(  # rows new in this refresh that found their key already there
            "INSERT OR IGNORE INTO touched(key) SELECT key FROM calls WHERE id>=? AND counted=0",
            (self.first_new_call,),
        )
        for sid, folder in self.touched_sessions.items():
            self._rollup(folder, sid in sessions_before)
        self.db.executemany(
            "INSERT OR IGNORE INTO touched(key) SELECT key FROM calls WHERE session_id=?",
            ((s,) for s in self.reordered),
        )
        self.db.execute(
            "UPDATE calls SET counted = (id = (SELECT c2.id FROM calls c2 LEFT JOIN sessions s ON s.id = c2.session_id"
            " WHERE c2.key = calls.key ORDER BY s.started_ms IS NULL, s.started_ms, c2.session_id, c2.id LIMIT 1))"
            f" WHERE {self._key_access()}key IN (SELECT key FROM touched)"
        )

    def _key_access(self) -> str:
        """'+' (scan calls in table order: no index) when many keys were touched (a copied sessions folder):
        a lookup per key by the (key, file_id) index is then 2-3x slower. '' (use the index) otherwise."""
        touched = self.db.execute("SELECT count(*) FROM touched").fetchone()[0]
        rows = self.db.execute("SELECT max(id) FROM calls").fetchone()[0] or 0
        return "+" if touched * 4 > rows else ""

    def _rollup(self, folder: cf.Folder, known: bool) -> None:
        """One call from `metadata.usage` while no message of the session has metrics (rollup rows: seq -1)."""
        sid = folder.session_id
        has_metrics = (
            sid in self.with_metrics
            or self.db.execute("SELECT 1 FROM calls WHERE session_id=? AND seq>=0 LIMIT 1", (sid,)).fetchone()
        )
        manifest, file_id = self.manifests.get(sid, (None, 0))
        if has_metrics:
            if known:  # only a session known before this refresh can have a rollup row
                self.db.execute(
                    "INSERT OR IGNORE INTO touched(key) SELECT key FROM calls WHERE session_id=? AND seq<0", (sid,)
                )
                self.db.execute("DELETE FROM calls WHERE session_id=? AND seq<0", (sid,))
        elif manifest is not None and manifest.rollup is not None:
            rollup = replace(manifest.rollup, key=f"{manifest.session_id or sid}:rollup")
            self._upsert_calls(folder, file_id, "lead", [rollup])
            self.db.execute("INSERT OR IGNORE INTO touched(key) VALUES(?)", (rollup.key,))


def _scope(sid: str, path: str, kind: str) -> str:
    """What keys a message without an id: the session for its lead file, session/file for the others."""
    name = os.path.basename(path)
    return sid if kind == "external" or name == sid + cf.MESSAGES_SUFFIX else f"{sid}/{name}"
