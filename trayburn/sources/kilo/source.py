"""Kilo Code 7's databases as a source (feed "kilo"): each `kilo.db` found (places.py), read incrementally
(read.py) inside the ledger's refresh.

The ledger's files rows: the database itself (kind "kilo_db", its checkpoint the stat of the db and its -wal
together, so an unchanged pair costs two stats and no read), and one row per Kilo session
(`<db path>#<session id>`, kind "kilo_session") whose checkpoint holds the session's mark (read.mark_of): the
next read starts from those. A subagent's session (`parent_id`) is filed under its top session, as the Cline
CLI's subagents are under theirs, its calls marked with its agent. Sessions are `kilo:<session id>`.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Container, Mapping, Sequence
from typing import TYPE_CHECKING

from ...files import Checkpoint, FileStat, blake2b
from ..base import Call, Known, Seen, SessionRecord, Writer, changed
from .places import Database

if TYPE_CHECKING:  # (the reader is imported where a database is read: a refresh with nothing new never loads it)
    from . import read

FEED = "kilo"
DB, SESSION = "kilo_db", "kilo_session"  # the files rows' kinds
SOURCE = "kilo-code"  # the sessions' `source` ("Kilo Code" in `report --by source`, export and the menu)
LEAD = "lead"


def session_path(db: str, sid: str) -> str:
    return f"{db}#{sid}"


def ledger_id(sid: str) -> str:
    return f"kilo:{sid}"


class KiloSource:
    feed = FEED
    origin: str | None = None  # this machine

    def __init__(self, databases: Sequence[Database]):
        self.databases = list(databases)
        self.found: list[tuple[Database, FileStat]] = []  # the databases there, with their stat (the last scan)
        self.problems: dict[str, str] = {}
        self.last: dict[str, read.Read] = {}  # db path -> its last read in this process

    def watch_folders(self) -> tuple[str, ...]:
        """The folders holding the databases: a -wal or a database made there wakes a tray at once. (Kilo's writes
        into an existing -wal wake it through today's sessions, whose folder is this one.)"""
        return tuple(dict.fromkeys(str(db.folder) for db in self.databases if db.folder.is_dir()))

    # ---- stat phase

    def scan(self, settled: Callable[[], Container[str]]) -> Seen:
        found, problems = [], {}
        for db in self.databases:
            try:
                found.append((db, FileStat(str(db.path), stamp(str(db.path)))))
            except FileNotFoundError:
                continue
            except OSError as exc:
                problems[str(db.path)] = exc.strerror or str(exc)
        self.found, self.problems = found, problems
        return Seen(listed=not problems, sessions=len(found), files=len(found), problems=problems)

    def digest(self) -> str | None:
        """The databases the scan found with their stamps (`sources.base.Digested`)."""
        if self.problems:
            return None
        hashed = blake2b(digest_size=16)
        for db, f in self.found:
            hashed.update(f"{db.path}\0{tuple(f.checkpoint)}\0".encode(errors="surrogateescape"))
        return hashed.hexdigest()

    def trusts_digest(self, known: Mapping[str, Known]) -> bool:
        return True

    def needs_work(self, known: Mapping[str, Known]) -> bool:
        """A database changed (or came), or the ledger holds live rows of one no longer found."""
        there = set()
        for _, f in self.found:
            if changed(f, known.get(f.path)):
                return True
            there.add(f.path)
        return any(
            k.feed == FEED and not k.gone and (p if k.kind == DB else p.rpartition("#")[0]) not in there
            for p, k in known.items()
        )

    # ---- read phase

    def ingest(self, writer: Writer) -> None:
        """Each database read since its last read (the plan's deadline is not applied: a read is one snapshot)."""
        mine = [(p, k) for p, k in writer.known.items() if k.feed == FEED and not k.gone and k.kind == SESSION]
        for db, f in self.found:
            rows = [(p, k) for p, k in mine if p.startswith(f.path + "#")]
            self._ingest(writer, db, f, rows)

    def _ingest(self, w: Writer, db: Database, f: FileStat, rows: list[tuple[str, Known]]) -> None:
        from . import read

        marks = {p.rpartition("#")[2]: k.good for p, k in rows if k.good is not None}
        got = w.read_with(f, "", DB, lambda path, _limit: (read.read(path, marks), f.checkpoint))
        if got is None:  # as last read, or it could not be read now (recorded): everything it held stays
            w.seen(f.path)
            for p, k in rows:
                w.seen(p)
                w.live(k.session_id)
            return
        result = got[0]
        self.last[f.path] = result
        w.seen(f.path)
        w.ok(f.path, "", DB, None, f.checkpoint)
        roots = {sid: _root(sid, result.sessions) for sid in result.sessions}
        held = {p.rpartition("#")[2]: k for p, k in rows}
        for sid, s in result.sessions.items():
            path, root = session_path(f.path, sid), ledger_id(roots[sid])
            one = result.found.get(sid)
            if one is None:
                w.seen(path)
                w.live(held[sid].session_id if sid in held else root)
                continue
            w.guard(root, FileStat(path, one.mark), SESSION, functools.partial(self._write, w, db, s, one, root))

    def _write(self, w: Writer, db: Database, s: read.Session, one: read.Found, root: str) -> None:
        path = session_path(str(db.path), s.id)
        w.seen(path)
        w.live(root)
        top = root == ledger_id(s.id)
        agent = LEAD if top else (one.agent or "subagent")
        file_id = w.ok(path, root, SESSION, agent, one.mark)
        fallback = s.created_ms or one.last_ms or 0
        if top:
            w.session(_record(db, s, one, root), file_id, fallback)
        from .read import is_backfill

        calls = one.calls
        if any(is_backfill(c.key) for c in calls):
            calls = _not_held(w, root, calls)
        w.calls(root, file_id, agent, calls, fallback)


def stamp(db: str) -> Checkpoint:
    """The database and its -wal as one checkpoint: what changes whenever Kilo writes (FileNotFoundError: no db)."""
    st = os.stat(db)
    try:
        wal = os.stat(db + "-wal")
    except FileNotFoundError:
        return Checkpoint(st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
    # (not the -wal's ctime: SQLite running as root gives the -wal its db's owner at every open, which moves it)
    return Checkpoint(st.st_size + wal.st_size, max(st.st_mtime_ns, wal.st_mtime_ns), st.st_ino, st.st_ctime_ns)


def _root(sid: str, sessions: Mapping[str, read.Session]) -> str:
    """The top session a subagent's session belongs to (its own id when its parent is not in the database)."""
    seen = {sid}
    while True:
        parent = sessions[sid].parent_id
        if parent is None or parent not in sessions or parent in seen:
            return sid
        sid = parent
        seen.add(sid)


def _record(db: Database, s: read.Session, one: read.Found, root: str) -> SessionRecord:
    status = "archived" if s.archived_ms else ("running" if one.in_flight else "completed")
    return SessionRecord(
        root, str(db.folder), s.created_ms or None, max(one.last_ms or 0, s.updated_ms) or None, status,
        title=s.title, cwd=s.directory, workspace_root=s.directory, model=one.model, provider=one.provider,
        source=SOURCE,
    )  # fmt: skip


def _not_held(w: Writer, sid: str, calls: list[Call]) -> list[Call]:
    """OpenCode 2's copies of 1.x messages whose originals left `message` after the ledger counted them: the
    calls the ledger holds of this session at the same time with the same tokens stand for them."""
    from .read import is_backfill

    held_fn = getattr(w, "held", None)
    held = {(h[1], h[2], h[3], h[4], h[5]) for h in held_fn(sid)} if held_fn is not None else set()
    return [
        c
        for c in calls
        if not (is_backfill(c.key) and (c.ts_ms, c.input, c.output, c.cache_read, c.cache_write) in held)
    ]
