"""The ledger's reads over periods (mixed into `Ledger` like `Queries`): counted calls summed per time
bucket, session and model; the sessions' keys; the calls one by one for an export; every session's sums
for the sessions list.

A report is two queries whatever the number of sessions: the sums per time bucket, session and model,
and the sessions' keys. Time buckets (local days, weeks, months) are given as epoch-ms bounds, computed
by the caller, so days follow the local time zone and its DST changes exactly as everywhere else.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from .queries import Sums
from .storable import text

BUCKETS_PER_QUERY = 2000  # 6,000 parameters: under SQLite's smallest limit of a statement's (32,766)
FETCH_ROWS = 2000  # calls fetched at a time by `calls()`: memory stays flat whatever the period


class Bucket(NamedTuple):
    """A span of time, [start_ms, end_ms), with the number it is reported under (`BucketSums.bucket`)."""

    number: int
    start_ms: int
    end_ms: int


class BucketSums(NamedTuple):
    """Counted calls of one bucket, one group (a session) and one model on one provider."""

    bucket: int
    key: str | None
    model: str | None
    provider: str | None  # the call's own (calls.provider)
    sums: Sums


class SessionKeys(NamedTuple):
    """What a session's calls are grouped by, besides their time and model."""

    id: str
    workspace_root: str | None
    cwd: str | None
    source: str | None
    title: str | None
    prompt: str | None


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
    provider: str | None
    input: int
    output: int
    cache_read: int
    cache_write: int
    cost: float | None


_SUMS = (  # integers stay integers (SUM of integer columns): rows become BucketSums as they come
    "COUNT(*), SUM(c.input), SUM(c.output), SUM(c.cache_read), SUM(c.cache_write), TOTAL(c.cost),"
    " SUM(c.cost IS NULL),"
    " SUM(CASE WHEN c.cost IS NULL THEN MAX(c.input, c.cache_read + c.cache_write) ELSE 0 END),"
    " SUM(CASE WHEN c.cost IS NULL THEN c.output ELSE 0 END),"
    " SUM(CASE WHEN c.cost IS NULL THEN c.cache_read ELSE 0 END),"
    " SUM(CASE WHEN c.cost IS NULL THEN c.cache_write ELSE 0 END)"
)


def _buckets_cte(buckets: Sequence[Bucket]) -> tuple[str, list[int]]:
    if not buckets:
        raise ValueError("at least one time bucket is needed")
    values = ",".join("(?,?,?)" for _ in buckets)
    return f"WITH b(i, lo, hi) AS (VALUES {values})", [x for bk in buckets for x in bk]


class ListedSession(NamedTuple):
    id: str
    started_ms: int | None
    ended_ms: int | None
    status: str | None
    title: str | None
    prompt: str | None
    cwd: str | None
    workspace_root: str | None
    model: str | None
    removed: int
    folder: str | None


class ListedPart(NamedTuple):
    """A session's counted calls in the range, per file, agent and model, with the latest call's time
    (`file`: the path of a subagent's or teammate's file, None for the lead's)."""

    session_id: str
    file_id: int
    file: str | None
    agent: str | None
    model: str | None
    provider: str | None
    sums: Sums
    last_ms: int | None


class PeriodQueries:
    """Mixed into `Ledger`: reads under its lock, on its shared connection (one statement at a time)."""

    db: sqlite3.Connection
    _lock: threading.RLock

    def bucket_sums(self, buckets: Sequence[Bucket]) -> list[BucketSums]:
        """Sums per (bucket, session, model, provider) of the counted calls in the buckets (found by the day
        index); `key` is the session id. Any grouping is made from these rows and `session_keys()`: a few rows
        per session, never a query per session, and no join per call. Buckets go BUCKETS_PER_QUERY at a time
        (SQLite bounds a statement's parameters: years by day are a few queries)."""
        out: list[BucketSums] = []
        with self._lock:
            for first in range(0, len(buckets), BUCKETS_PER_QUERY):
                cte, params = _buckets_cte(buckets[first : first + BUCKETS_PER_QUERY])
                sql = (
                    f"{cte} SELECT b.i, c.session_id, c.model, c.provider, {_SUMS} FROM b"
                    " JOIN calls c ON c.counted = 1 AND c.ts_ms >= b.lo AND c.ts_ms < b.hi GROUP BY 1, 2, 3, 4"
                )
                out += [BucketSums(r[0], r[1], r[2], r[3], Sums(*r[4:])) for r in self.db.execute(sql, params)]
        return out

    def session_keys(self) -> list[SessionKeys]:
        with self._lock:
            rows = self.db.execute("SELECT id, workspace_root, cwd, source, title, prompt FROM sessions").fetchall()
        return [SessionKeys(*r) for r in rows]

    def export_calls(self, start_ms: int, end_ms: int) -> Iterator[ExportCall]:
        """The counted calls in [start, end), oldest first, fetched a few thousand at a time: memory stays
        flat whatever the period. A generator holding the ledger's lock while it is iterated (on its own
        cursor), so run nothing else on this ledger from the loop that consumes it."""
        with self._lock:
            cursor = self.db.execute(
                "SELECT c.ts_ms, c.session_id, s.title, s.prompt, s.workspace_root, s.cwd, s.source, c.agent,"
                " c.model, COALESCE(c.provider, s.provider), c.input, c.output, c.cache_read, c.cache_write, c.cost"
                " FROM calls c LEFT JOIN sessions s ON s.id = c.session_id"
                " WHERE c.counted = 1 AND c.ts_ms >= ? AND c.ts_ms < ? ORDER BY c.ts_ms, c.id",
                (start_ms, end_ms),
            )
            try:
                while rows := cursor.fetchmany(FETCH_ROWS):
                    yield from (ExportCall(*r) for r in rows)
            finally:
                cursor.close()

    def sessions_between(self, start_ms: int, end_ms: int) -> list[ListedSession]:
        """Sessions with counted calls, or a start, in [start, end)."""
        with self._lock:
            rows = self.db.execute(
                "SELECT id, started_ms, ended_ms, status, title, prompt, cwd, workspace_root, model, removed, folder"
                " FROM sessions WHERE id IN (SELECT session_id FROM calls WHERE counted = 1 AND ts_ms >= ?1"
                " AND ts_ms < ?2) OR (started_ms >= ?1 AND started_ms < ?2)",
                (start_ms, end_ms),
            ).fetchall()
        return [ListedSession(*r) for r in rows]

    def listed_parts(self, start_ms: int, end_ms: int) -> list[ListedPart]:
        """Every session's sums in [start, end) per file, agent, model and provider, in one grouped query."""
        with self._lock:
            paths = {
                i: text(p)
                for i, p in self.db.execute("SELECT id, path FROM files WHERE agent IN ('subagent', 'teammate')")
            }
            rows = self.db.execute(
                f"SELECT c.session_id, c.file_id, c.agent, c.model, c.provider, {_SUMS}, MAX(c.ts_ms) FROM calls c"
                " WHERE c.counted = 1 AND c.ts_ms >= ? AND c.ts_ms < ? GROUP BY 1, 2, 3, 4, 5",
                (start_ms, end_ms),
            ).fetchall()
        return [ListedPart(r[0], r[1], paths.get(r[1]), r[2], r[3], r[4], Sums(*r[5:-1]), r[-1]) for r in rows]
