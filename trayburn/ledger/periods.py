"""The ledger's reads for history (mixed into `Ledger` like `Queries`): the sessions' keys a report
groups by, the calls one by one for an export, the sessions of a period for the sessions list.

Their figures come from `Queries.cost_groups` (by time bucket, session, file, agent), priced in
`costs.py`: a report or the sessions list is a few grouped queries whatever the number of sessions.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from typing import NamedTuple

from .queries import SessionRow
from .storable import text

FETCH_ROWS = 2000  # calls fetched at a time by `export_calls()`: memory stays flat whatever the period


class SessionKeys(NamedTuple):
    """What a session's calls are grouped by, besides their time and model."""

    id: str
    workspace_root: str | None
    cwd: str | None
    source: str | None
    title: str | None
    prompt: str | None
    origin: str | None = None  # the machine it came from (None: this one)


class ExportCall(NamedTuple):
    ts_ms: int
    session_id: str
    title: str | None
    prompt: str | None
    workspace_root: str | None
    cwd: str | None
    source: str | None
    agent: str | None
    model: str | None
    provider: str | None  # the call's own (calls.provider)
    session_provider: str | None  # its session's: the route when the call names none
    input: int
    output: int
    cache_read: int
    cache_write: int
    cost: float | None


class PeriodQueries:
    """Mixed into `Ledger`: reads under its lock, on its shared connection (one statement at a time)."""

    db: sqlite3.Connection
    _lock: threading.RLock

    def session_keys(self) -> list[SessionKeys]:
        with self._lock:
            rows = self.db.execute(
                "SELECT id, workspace_root, cwd, source, title, prompt, origin FROM sessions"
            ).fetchall()
        return [SessionKeys(*r) for r in rows]

    def export_calls(self, start_ms: int, end_ms: int) -> Iterator[ExportCall]:
        """The counted calls in [start, end), oldest first, fetched a few thousand at a time: memory stays
        flat whatever the period. A generator holding the ledger's lock while it is iterated (on its own
        cursor), so run nothing else on this ledger from the loop that consumes it."""
        with self._lock:
            cursor = self.db.execute(
                "SELECT c.ts_ms, c.session_id, s.title, s.prompt, s.workspace_root, s.cwd, s.source, c.agent,"
                " c.model, c.provider, s.provider, c.input, c.output, c.cache_read, c.cache_write, c.cost"
                " FROM calls c LEFT JOIN sessions s ON s.id = c.session_id"
                " WHERE c.counted = 1 AND c.ts_ms >= ? AND c.ts_ms < ? ORDER BY c.ts_ms, c.id",
                (start_ms, end_ms),
            )
            try:
                while rows := cursor.fetchmany(FETCH_ROWS):
                    yield from (ExportCall(*r) for r in rows)
            finally:
                cursor.close()

    def sessions_between(self, start_ms: int, end_ms: int) -> list[SessionRow]:
        """Sessions with counted calls in [start, end), and this machine's sessions that started then. Another
        machine's session that counts nothing there is left out: most are copies of sessions counted here
        (a shared home folder, a copied session), which listed every session twice, once at "0 calls"."""
        with self._lock:
            rows = self.db.execute(
                "SELECT id, started_ms, ended_ms, status, title, prompt, cwd, workspace_root, model, provider,"
                " removed, folder, source, origin FROM sessions WHERE id IN (SELECT session_id FROM calls"
                " WHERE counted = 1 AND ts_ms >= ?1 AND ts_ms < ?2)"
                " OR (started_ms >= ?1 AND started_ms < ?2 AND origin IS NULL)",
                (start_ms, end_ms),
            ).fetchall()
        return [
            SessionRow(
                r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], bool(r[10]), text(r[11]), r[12], r[13]
            )
            for r in rows
        ]
