"""Writing into the ledger: the `Writer` a source writes through inside one refresh's write transaction (session
ids made printable on the way in: `StorableIds`), what the refresh did in figures (`RefreshStats`), and the
connection that keeps names byte-exact (`LedgerConnection`, read back through `text`). Never knows a layout: the
ledger imports only `sources/base.py` of sources/.

Each call is counted by exactly one of the rows holding its key: the row of the session that started first. A
row inserted with a key no other row has is its own owner, so it is counted as it is inserted; ownership is
settled at the end only for keys that have copies (forks, copied folders, another machine's export), for the
calls of sessions whose start moved and for rollups that came or went.

Names from the file system are kept byte-exact, whatever bytes they hold. A folder or file name that is not
valid UTF-8 (`b"sess\\xff"`) reaches Python as a str with surrogate escapes, which SQLite cannot take as text.
Such a value is bound as its file-system bytes (a BLOB, which SQLite keeps in a TEXT column as it is) and read
back through `text()` (os.fsdecode) where a path is read, so the path a scan gives and the path the ledger holds
are the same str. Session ids from such folder names are escaped text instead (`sources.base.storable_id`, as
for ids inside files), so they print and can be typed back.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import files
from ..files import RACY_NS
from ..sources.base import (
    Call,
    Checkpoint,
    FileStat,
    Known,
    Plan,
    Reader,
    SessionRecord,
    T,
    Writer,
    id_ms,
    should_read,
    storable_id,
)


@dataclass
class RefreshStats:
    folders: int = 0
    files_stat: int = 0
    files_read: int = 0
    bytes_read: int = 0
    calls_upserted: int = 0
    files_adopted: int = 0  # files whose change time alone moved, by a change of metadata: taken unread
    errors: dict[str, str] = field(default_factory=dict)  # files that failed in this refresh
    removed_sessions: int = 0
    seconds: float = 0.0
    pending: int = 0  # changed sessions left unread for a later refresh (see `Ledger.refresh`'s budget)

    def add(self, other: RefreshStats) -> None:
        """Another source's refresh, counted in with this one."""
        for name in (
            "folders",
            "files_stat",
            "files_read",
            "bytes_read",
            "calls_upserted",
            "files_adopted",
            "removed_sessions",
            "pending",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.errors.update(other.errors)
        self.seconds += other.seconds

    @property
    def changed(self) -> bool:
        return bool(self.files_read or self.removed_sessions)


log = logging.getLogger(__name__)

NO_CHECKPOINT = (None, None, None, None)  # a files row without a (good or bad) checkpoint
LEGACY_ROWS = "DELETE FROM calls WHERE key >= 'v3:' AND key < 'v3;' AND file_id=?"  # see schema.MIGRATE_3_TO_4
ANY_LEGACY = "SELECT 1 FROM calls WHERE key >= 'v3:' AND key < 'v3;' LIMIT 1"  # only a migration makes such rows
# Who counts a call: a row of this machine's files before any other machine's (an imported file, which anyone
# can write, never takes a key from this machine's own row), then the row of the session that started first
# among those holding its key (add a WHERE).
SETTLE = (
    "UPDATE calls SET counted = (id = (SELECT c2.id FROM calls c2 LEFT JOIN sessions s ON s.id = c2.session_id"
    " WHERE c2.key = calls.key ORDER BY (SELECT f.origin FROM files f WHERE f.id = c2.file_id) IS NOT NULL,"
    " s.started_ms IS NULL, s.started_ms, c2.session_id, c2.id LIMIT 1))"
)
# The racy-timestamp rule (as git's): a file read within RACY_NS of its mtime may be rewritten within the
# same timestamp tick with the same size, which no stat shows. Its checkpoint is stored with this mtime,
# which no stat gives, so the file is read again at the next refresh (and trusted then, once it is older).
UNTRUSTED_MTIME = -1


class SessionFault(Exception):
    """One session could not be written; the ledger redoes the transaction without it."""

    def __init__(self, sid: str, why: str):
        super().__init__(why)
        self.sid, self.why = sid, why


@dataclass
class RefreshState:
    """What this refresh did so far, for the bookkeeping at its end."""

    touched: dict[str, int] = field(default_factory=dict)  # sessions given a row or calls: id -> fallback ms
    reordered: set[str] = field(default_factory=set)  # sessions whose start (or whose files' session) changed
    records: dict[str, tuple[SessionRecord, int]] = field(default_factory=dict)  # (the session, its file id)
    with_metrics: set[str] = field(default_factory=set)  # sessions given calls from messages
    new_ids: dict[str, int] = field(default_factory=dict)  # files rows added
    added: dict[str, Known] = field(default_factory=dict)  # rows added with a good read, as `Known` (see `known_added`)
    ok: dict[str, Checkpoint] = field(default_factory=dict)  # files read and parsed: their new checkpoint
    adopted: dict[str, Known] = field(default_factory=dict)  # rows given a new change time unread, as `Known`
    metas: dict[str, tuple[Checkpoint, str]] = field(default_factory=dict)  # files read: what their fstat showed
    written: set[str] = field(default_factory=set)  # paths whose files row was written
    seen: set[str] = field(default_factory=set)  # paths the source still has
    live: set[str] = field(default_factory=set)  # sessions the source still has
    first_new_call: int = 0  # calls rows from this id on were inserted in this refresh
    started: dict[str, int | None] = field(default_factory=dict)  # sessions upserted: id -> their start


class Refresh:
    """Implements `sources.base.Writer` for one source, then `finish()` settles what it wrote."""

    def __init__(
        self,
        db: sqlite3.Connection,
        known: Mapping[str, Known],
        stats: RefreshStats,
        max_file_bytes: int,
        feed: str,
        origin: str | None = None,
        plan: Plan | None = None,
        wall_ns: Callable[[], int] = time.time_ns,
        sessions: dict[str, int | None] | None = None,
    ):
        """`sessions`: the feed's sessions (id -> start) as the ledger now holds them, if known (the last slice's,
        with what it stored: `carried`); else read here."""
        self.db, self.known, self.stats, self.max_file_bytes = db, known, stats, max_file_bytes
        self.feed, self.origin = feed, origin
        self.plan, self.wall_ns = plan or Plan(), wall_ns
        self.state = RefreshState()
        db.execute("CREATE TEMP TABLE IF NOT EXISTS touched(key TEXT PRIMARY KEY)")
        db.execute("DELETE FROM touched")
        self.state.first_new_call = (db.execute("SELECT max(id) FROM calls").fetchone()[0] or 0) + 1
        self.legacy = db.execute(ANY_LEGACY).fetchone() is not None  # (else no statement per file to drop them)
        if sessions is None:  # (row by row: every row held at once, as by fetchall, is a second copy)
            sessions = dict(db.execute("SELECT id, started_ms FROM sessions WHERE feed=?", (feed,)))
        self.sessions = sessions  # (never changed here: the ledger adds `state.started` once the transaction commits)

    def carried(self) -> dict[str, int | None]:
        """After the commit: the feed's sessions as the ledger now holds them, for the next slice (which then need
        not read them all again: 30 ms a slice at 20,000 sessions)."""
        self.sessions.update(self.state.started)
        return self.sessions

    # ---- files ----------------------------------------------------------------------------------

    def seen(self, path: str) -> None:
        self.state.seen.add(path)

    def live(self, sid: str) -> None:
        self.state.live.add(sid)

    def has_session(self, sid: str) -> bool:
        return sid in self.sessions

    def read(self, f: FileStat, sid: str, kind: str) -> tuple[bytes, Checkpoint] | None:
        """The file's bytes if it changed (or came back) since the last read; None otherwise (also when only its
        metadata changed: `adopt`)."""
        return self.read_with(f, sid, kind, self._read_file)

    def _read_file(self, path: str, limit: int) -> tuple[bytes, Checkpoint]:
        """files.read, keeping the metadata its fstat showed for `ok` (which then needs no stat of its own)."""
        data, st = files.read_stat(path, limit)
        c = files.checkpoint(st)
        self.state.metas[path] = (c, files.meta(st))
        return data, c

    def read_with(self, f: FileStat, sid: str, kind: str, reader: Reader[T]) -> tuple[T, Checkpoint] | None:
        """`read`, by `reader` (another process may have read and parsed the file: then its outcome, whose
        `len` is the bytes read)."""
        known = self.state.adopted.get(f.path) or self.known.get(f.path)
        if known is not None and not known.gone and (not should_read(f.checkpoint, known) or self.adopt(f)):
            return None
        try:
            data, ckpt = reader(f.path, self.max_file_bytes)
            if ckpt == f.checkpoint:
                ckpt = f.checkpoint  # one object for the scan's and the ledger's memo (a cold ingest holds both)
        except files.FileProblem as exc:  # not remembered as bad: retried at every refresh (no bytes read)
            self._file_id(f.path, sid, kind)
            self._failed(f, str(exc), remember=False)
            return None
        self.stats.files_read += 1
        self.stats.bytes_read += len(data)
        return data, ckpt

    def adopt(self, f: FileStat) -> bool:
        """Whether only the file's metadata changed since its last good read (files.metadata_only: a chmod, a chown,
        another hard link): then the file is as last read, and its new change time is stored unread (at `finish`).
        Not for a file with a failed read on record (read as before)."""
        k = self.state.adopted.get(f.path)
        if k is not None:
            return k.good == f.checkpoint
        k = self.known.get(f.path)
        if k is None or k.gone or k.good is None or k.bad is not None:
            return False
        meta = files.metadata_only(f.path, f.checkpoint, k.good, k.meta)
        if meta is None:
            return False
        now = Known(f.checkpoint, None, False, k.kind, k.session_id, k.id, k.origin, k.feed, meta)  # (as read back)
        self.state.adopted[f.path] = now
        self.stats.files_adopted += 1
        return True

    def failed(self, f: FileStat, sid: str, kind: str, why: str) -> None:
        """The file was read and does not parse: remembered as bad until it changes."""
        self._file_id(f.path, sid, kind)
        self._failed(f, why)

    def _failed(self, f: FileStat, why: str, remember: bool = True) -> None:
        self.state.added.pop(f.path, None)
        self.state.adopted.pop(f.path, None)
        self.stats.errors[f.path] = why
        self.state.written.add(f.path)
        c = tuple(f.checkpoint) if remember else NO_CHECKPOINT
        self.db.execute(
            "UPDATE files SET bad_size=?, bad_mtime_ns=?, bad_inode=?, bad_ctime_ns=?, error=?, gone=0 WHERE path=?",
            (*c, why, f.path),
        )

    def _file_id(self, path: str, sid: str, kind: str) -> int:
        """The file's row; added, without a checkpoint, if it has none."""
        known = self.known.get(path)
        if known is not None:
            return known.id
        return self.state.new_ids.get(path) or self._add_file(path, sid, kind, None, NO_CHECKPOINT)

    def _add_file(self, path: str, sid: str, kind: str, agent: str | None, c: tuple, meta: str | None = None) -> int:
        self.state.written.add(path)
        cursor = self.db.execute(
            "INSERT INTO files(path, session_id, kind, agent, size, mtime_ns, inode, ctime_ns, meta, origin, feed)"
            " VALUES(?,?,?,?,?,?,?,?,?,?,?)",
            (path, sid, kind, agent, *c, meta, self.origin, self.feed),
        )
        file_id = cursor.lastrowid or 0
        self.state.new_ids[path] = file_id
        if isinstance(c, Checkpoint):  # exactly the row `Ledger._known` would read back
            self.state.added[path] = Known(c, None, False, kind, sid, file_id, self.origin, self.feed, meta)
        return file_id

    def ok(self, path: str, sid: str, kind: str, agent: str | None, c: Checkpoint) -> int:
        """Record a good read; the file's row id. A racy checkpoint is stored untrusted (see RACY_NS); any other
        with the inode's metadata at its change time, when known (`_meta`)."""
        self.state.ok[path] = c
        self.state.adopted.pop(path, None)
        meta = None
        if self.wall_ns() - c.mtime_ns < RACY_NS:
            c = Checkpoint(c.size, UNTRUSTED_MTIME, c.inode, c.ctime_ns)  # (read again anyway: no metadata needed)
        else:
            meta = self._meta(path, c)
        known = self.known.get(path)
        if known is None and path not in self.state.new_ids:  # the usual first sight: one statement
            return self._add_file(path, sid, kind, agent, c, meta)
        if known is not None and known.session_id != sid:
            self.state.reordered.add(sid)  # a file another session had: its calls change session
        file_id = self._file_id(path, sid, kind)
        self.state.written.add(path)
        self.db.execute(
            "UPDATE files SET session_id=?, kind=?, agent=?, size=?, mtime_ns=?, inode=?, ctime_ns=?, meta=?,"
            " bad_size=NULL, bad_mtime_ns=NULL, bad_inode=NULL, bad_ctime_ns=NULL, error=NULL, gone=0 WHERE id=?",
            (sid, kind, agent, *c, meta, file_id),
        )
        return file_id

    def _meta(self, path: str, c: Checkpoint) -> str | None:
        """The inode's metadata when `c` was taken: as the read's fstat showed it, else a stat now showing `c`'s
        inode and change time (a source's own reader, a checkpoint of its scan; files.meta_at)."""
        seen = self.state.metas.pop(path, None)
        if seen is not None and seen[0][2:] == c[2:]:  # the same inode and change time: the same metadata
            return seen[1]
        return files.meta_at(path, c)

    def good_checkpoint(self, path: str) -> Checkpoint | None:
        """The checkpoint of the file's last good read (this refresh's included); None if never read well."""
        good = self.state.ok.get(path) or (self.known[path].good if path in self.known else None)
        if good is not None:  # from memory: `good` is only ever set (never cleared) in a refresh
            return good
        row = self.db.execute("SELECT size, mtime_ns, inode, ctime_ns FROM files WHERE path=?", (path,)).fetchone()
        return Checkpoint(*row) if row is not None and row[0] is not None else None

    def held(self, sid: str) -> list[tuple[str, int | None, int, int, int, int, float | None]]:
        """The calls the ledger holds of a session: (key, ts, input, output, cache read, cache write, cost) (a
        task source compares a restore's sum with them: sources/editor_tasks/source.py)."""
        return self.db.execute(
            "SELECT key, ts_ms, input, output, cache_read, cache_write, cost FROM calls WHERE session_id=? AND seq>=0",
            (sid,),
        ).fetchall()

    def path_of_kind(self, sid: str, kind: str) -> str | None:
        row = self.db.execute("SELECT path FROM files WHERE session_id=? AND kind=?", (sid, kind)).fetchone()
        return text(row[0]) if row else None

    # ---- sessions and calls ---------------------------------------------------------------------

    def session(self, r: SessionRecord, file_id: int, fallback_ms: int) -> None:
        """Upsert the session's row. `r.rollup`: its total as one call, counted only while none of its
        messages has figures; `fallback_ms`: the time of calls without one when the session has no start."""
        self.db.execute(
            "INSERT INTO sessions(id, folder, started_ms, ended_ms, status, title, prompt, cwd, workspace_root,"
            " model, provider, source, forked_from, removed, origin, feed) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,0,?,?) "
            "ON CONFLICT(id) DO UPDATE SET folder=excluded.folder, started_ms=excluded.started_ms,"
            " ended_ms=excluded.ended_ms, status=excluded.status, title=excluded.title, prompt=excluded.prompt,"
            " cwd=excluded.cwd, workspace_root=excluded.workspace_root, model=excluded.model,"
            " provider=excluded.provider, source=excluded.source, forked_from=excluded.forked_from, removed=0,"
            " origin=excluded.origin, feed=excluded.feed",
            (
                r.id, r.folder, r.started_ms, r.ended_ms, r.status, r.title, r.prompt, r.cwd, r.workspace_root,
                r.model, r.provider, r.source, r.forked_from, self.origin, self.feed,
            ),
        )  # fmt: skip
        if r.id in self.sessions and self.sessions[r.id] != r.started_ms:  # a new one's calls settle on insert
            self.state.reordered.add(r.id)
        self.state.started[r.id] = r.started_ms
        self.state.records[r.id] = (r, file_id)
        self.state.touched[r.id] = fallback_ms

    def _defaults(self, sid: str, fallback_ms: int) -> tuple[int, str | None, str | None]:
        """Time, model and provider for calls that carry none: the session's. A session without a start:
        the time its id begins with, else `fallback_ms` (never 1970)."""
        if sid in self.state.records:  # upserted in this refresh: the row holds exactly these values
            r = self.state.records[sid][0]
            started, model, provider = r.started_ms, r.model, r.provider
        else:
            row = self.db.execute("SELECT started_ms, model, provider FROM sessions WHERE id=?", (sid,)).fetchone()
            started, model, provider = row if row else (None, None, None)
        return started or id_ms(sid) or fallback_ms, model, provider

    def calls(self, sid: str, file_id: int, agent: str, calls: list[Call], fallback_ms: int) -> None:
        """A message file's calls (a row whose key is new is inserted counted; copies settle at the end)."""
        self._upsert_calls(sid, file_id, agent, calls, fallback_ms)
        if self.legacy:
            self.db.execute(LEGACY_ROWS, (file_id,))  # schema 3's keys of messages without an id, now re-keyed
        if calls:
            self.state.with_metrics.add(sid)
        self.state.touched[sid] = fallback_ms

    def _upsert_calls(self, sid: str, file_id: int, agent: str, calls: list[Call], fallback_ms: int) -> None:
        if not calls:
            return
        start, model, provider = self._defaults(sid, fallback_ms)
        self.db.executemany(
            "INSERT INTO calls(key, session_id, file_id, agent, seq, ts_ms, model, input, output, cache_read,"
            " cache_write, cost, tools, provider, commands, counted) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,"
            "?13,?14,?15, NOT EXISTS(SELECT 1 FROM calls WHERE key=?1)) "
            "ON CONFLICT(key, file_id) DO UPDATE SET session_id=excluded.session_id, agent=excluded.agent,"
            " seq=excluded.seq, ts_ms=excluded.ts_ms, model=excluded.model, input=excluded.input,"
            " output=excluded.output, cache_read=excluded.cache_read, cache_write=excluded.cache_write,"
            " cost=excluded.cost, tools=excluded.tools, provider=excluded.provider, commands=excluded.commands",
            [
                (
                    key,
                    sid,
                    file_id,
                    agent,
                    seq,
                    ts or start,
                    m or model,
                    i,
                    o,
                    cr,
                    cw,
                    cost,
                    ",".join(t),
                    p or provider,
                    sh,
                )
                for key, seq, ts, m, i, o, cr, cw, cost, t, _, p, sh in calls
            ],  # fmt: skip
        )
        self.stats.calls_upserted += len(calls)

    # ---- one session at a time ------------------------------------------------------------------

    def guard(self, sid: str, f: FileStat, kind: str, read: Callable[[], None]) -> None:
        """Run `read` (one session's reads and writes). If it raises (a value SQLite refuses, a bug met by one
        odd file), the transaction is abandoned with a SessionFault: the ledger rolls it back and runs it
        again with this session in `plan.faults`, when it is skipped and `f` (its manifest) records why; the
        rest commits. No SAVEPOINT on the usual path (one per session doubles a cold ingest's writes).
        SQLite's own operational errors (disk full, busy) end the refresh. After a good read the session's
        rollup is settled at once, so nothing of it is held to the end of the refresh."""
        why = self.plan.faults.get(sid)
        if why is not None:
            self._fault(sid, f, kind, why)
            return
        try:
            read()
            if sid in self.state.touched:
                self._rollup(sid, sid in self.sessions, self.state.touched[sid])
        except Exception as exc:
            if isinstance(exc, sqlite3.OperationalError):
                raise
            raise SessionFault(sid, f"could not be stored ({type(exc).__name__}: {exc}); session skipped") from exc
        self.state.touched.pop(sid, None)
        self.state.records.pop(sid, None)

    def _fault(self, sid: str, f: FileStat, kind: str, why: str) -> None:
        log.warning("%s: %s", f.path, why)
        self.stats.errors[f.path] = why
        self.db.execute("SAVEPOINT fault")
        try:  # not remembered as bad: retried at every refresh (a fix may come)
            self._file_id(f.path, sid, kind)
            self._failed(f, why, remember=False)
        except (ValueError, sqlite3.DatabaseError) as exc:  # not even the path is storable: in memory only
            self.db.execute("ROLLBACK TO fault")
            self.state.new_ids.pop(f.path, None)
            if isinstance(exc, sqlite3.OperationalError):
                raise
        finally:
            self.db.execute("RELEASE fault")

    # ---- the end --------------------------------------------------------------------------------

    def finish(self) -> None:
        self._store_adopted()
        if not self.plan.deferred:
            self._mark_gone()
        self._settle()

    def _store_adopted(self) -> None:
        """The new change times (and metadata) of the files `adopt` took unread and nothing wrote since."""
        adopted = self.state.adopted
        if adopted:
            rows = [(k.good.ctime_ns, k.meta, k.id) for k in adopted.values() if k.good is not None]
            self.db.executemany("UPDATE files SET ctime_ns=?, meta=? WHERE id=?", rows)
            self.state.written.update(adopted)

    def _mark_gone(self) -> None:
        """Files and sessions of this feed it no longer has: kept, marked gone / removed. Only by a transaction
        that deferred nothing (`Plan.defer`): one that left sessions for later marks nothing, so its source
        need not note what it saw (then the slices of a long ingest do not each walk the whole scan; the
        calls of a removed session count all the same, so no figure waits for the mark)."""
        seen = self.state.seen
        gone = [p for p, k in self.known.items() if not k.gone and k.feed == self.feed and p not in seen]
        self.db.executemany("UPDATE files SET gone=1 WHERE path=?", [(p,) for p in gone])
        self.state.written.update(gone)
        live = self.state.live
        rows = self.db.execute("SELECT id FROM sessions WHERE removed=0 AND feed=?", (self.feed,))
        removed = [s for (s,) in rows if s not in live]
        self.db.executemany("UPDATE sessions SET removed=1 WHERE id=?", [(s,) for s in removed])
        self.stats.removed_sessions = len(removed)

    def _settle(self) -> None:
        """Rollups for sessions without per-message metrics; then who owns each call whose key has copies."""
        self.db.execute(  # rows new in this refresh that found their key already there
            "INSERT OR IGNORE INTO touched(key) SELECT key FROM calls WHERE id>=? AND counted=0",
            (self.state.first_new_call,),
        )
        for sid, fallback_ms in self.state.touched.items():
            self._rollup(sid, sid in self.sessions, fallback_ms)
        self.db.executemany(
            "INSERT OR IGNORE INTO touched(key) SELECT key FROM calls WHERE session_id=?",
            ((s,) for s in self.state.reordered),
        )
        self.db.execute(f"{SETTLE} WHERE {self._key_access()}key IN (SELECT key FROM touched)")

    def _key_access(self) -> str:
        """'+' (scan calls in table order: no index) when many keys were touched (a copied sessions folder):
        a lookup per key by the (key, file_id) index is then 2-3x slower. '' (use the index) otherwise."""
        touched = self.db.execute("SELECT count(*) FROM touched").fetchone()[0]
        rows = self.db.execute("SELECT max(id) FROM calls").fetchone()[0] or 0
        return "+" if touched * 4 > rows else ""

    def _rollup(self, sid: str, known: bool, fallback_ms: int) -> None:
        """One call from the session's rollup while no message of it has metrics (rollup rows: seq -1). Never
        a fork's: its `metadata.usage` includes its parent's, whose calls count already (its own calls count
        once its messages file is read; Cline writes it when the fork is made)."""
        has_metrics = sid in self.state.with_metrics or (  # a session new to the ledger has no older calls
            known and self.db.execute("SELECT 1 FROM calls WHERE session_id=? AND seq>=0 LIMIT 1", (sid,)).fetchone()
        )
        record, file_id = self.state.records.get(sid, (None, 0))
        rollup = record.rollup if record is not None else None
        if has_metrics or (record is not None and record.forked_from):
            if known:  # only a session known before this refresh can have a rollup row
                self.db.execute(
                    "INSERT OR IGNORE INTO touched(key) SELECT key FROM calls WHERE session_id=? AND seq<0", (sid,)
                )
                self.db.execute("DELETE FROM calls WHERE session_id=? AND seq<0", (sid,))
        elif rollup is not None:
            self._upsert_calls(sid, file_id, "lead", [rollup], fallback_ms)
            self.db.execute("INSERT OR IGNORE INTO touched(key) VALUES(?)", (rollup.key,))


def text(value: str | bytes | None) -> str | None:
    """A path as read from the ledger: a BLOB (a name that is not UTF-8) as the str Python names it by.
    (Not a column converter: sqlite3 gives None to a converter's empty string.)"""
    return os.fsdecode(value) if isinstance(value, bytes) else value


def _storable(value: Any) -> Any:
    if type(value) is str and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return os.fsencode(value)
    return value


def _bind(params: Any) -> Any:
    if isinstance(params, Mapping):
        return {k: _storable(v) for k, v in params.items()}
    return tuple(_storable(v) for v in params)


class LedgerConnection(sqlite3.Connection):
    """A connection that binds a str SQLite cannot encode as its file-system bytes. Parameters are
    looked at only when binding them as they are failed (before any row was written by `execute`;
    `executemany` is run again whole, which the ledger's statements allow: all are upserts)."""

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        try:
            return super().execute(sql, parameters)
        except UnicodeEncodeError:
            return super().execute(sql, _bind(parameters))

    def executemany(self, sql: str, seq_of_parameters: Iterable[Any], /) -> sqlite3.Cursor:
        rows = seq_of_parameters if isinstance(seq_of_parameters, list | tuple) else list(seq_of_parameters)
        try:
            return super().executemany(sql, rows)
        except UnicodeEncodeError:
            return super().executemany(sql, [_bind(r) for r in rows])


class StorableIds:
    """The `Writer` a source is given: session ids made storable, printable text on the way in."""

    def __init__(self, writer: Writer):
        self._w = writer
        self.known: Mapping[str, Known] = writer.known
        self.max_file_bytes = writer.max_file_bytes

    def read(self, f: FileStat, sid: str, kind: str) -> tuple[bytes, Checkpoint] | None:
        return self._w.read(f, storable_id(sid), kind)

    def read_with(self, f: FileStat, sid: str, kind: str, reader: Reader[T]) -> tuple[T, Checkpoint] | None:
        return self._w.read_with(f, storable_id(sid), kind, reader)

    def failed(self, f: FileStat, sid: str, kind: str, why: str) -> None:
        self._w.failed(f, storable_id(sid), kind, why)

    def ok(self, path: str, sid: str, kind: str, agent: str | None, c: Checkpoint) -> int:
        return self._w.ok(path, storable_id(sid), kind, agent, c)

    def session(self, record: SessionRecord, file_id: int, fallback_ms: int) -> None:
        if not record.id.isascii():
            record = dataclasses.replace(record, id=storable_id(record.id))
        self._w.session(record, file_id, fallback_ms)

    def calls(self, sid: str, file_id: int, agent: str, calls: list[Call], fallback_ms: int) -> None:
        self._w.calls(storable_id(sid), file_id, agent, calls, fallback_ms)

    def seen(self, path: str) -> None:
        self._w.seen(path)

    def live(self, sid: str) -> None:
        self._w.live(storable_id(sid))

    def has_session(self, sid: str) -> bool:
        return self._w.has_session(storable_id(sid))

    def good_checkpoint(self, path: str) -> Checkpoint | None:
        return self._w.good_checkpoint(path)

    def adopt(self, f: FileStat) -> bool:
        return self._w.adopt(f)

    def path_of_kind(self, sid: str, kind: str) -> str | None:
        return self._w.path_of_kind(storable_id(sid), kind)

    def guard(self, sid: str, f: FileStat, kind: str, read: Callable[[], None]) -> None:
        self._w.guard(storable_id(sid), f, kind, read)

    def __getattr__(self, name: str) -> Any:  # whatever else the Writer offers, as it is
        return getattr(self._w, name)
