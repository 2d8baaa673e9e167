"""The ledger's reads: typed query methods returning named rows. Only the ledger speaks SQL;
`report.py` builds figures from these rows."""

from __future__ import annotations

import time
from typing import NamedTuple

from ..sources.base import RETRY_RECENT_NS
from .storable import text

ALL_TIME = (0, 2**62)  # [start, end) in epoch ms that holds every call

# per group: calls, tokens, reported cost, then calls and tokens of those without a reported cost
# (their input at least their cache tokens, so a call's uncached input is never below 0, as per call)
_SUMS = (
    "COUNT(*), SUM(input), SUM(output), SUM(cache_read), SUM(cache_write), TOTAL(cost), SUM(cost IS NULL),"
    " TOTAL(CASE WHEN cost IS NULL THEN MAX(input, cache_read + cache_write) END),"
    " TOTAL(CASE WHEN cost IS NULL THEN output END),"
    " TOTAL(CASE WHEN cost IS NULL THEN cache_read END), TOTAL(CASE WHEN cost IS NULL THEN cache_write END)"
)
_N = 11  # columns in _SUMS


class Sums(NamedTuple):
    """Counted calls of a group: their tokens and reported cost, and the calls without a reported cost
    with their tokens (what an estimate prices)."""

    calls: int
    input: int
    output: int
    cache_read: int
    cache_write: int
    reported_usd: float
    unpriced_calls: int
    unpriced_input: int
    unpriced_output: int
    unpriced_cache_read: int
    unpriced_cache_write: int


def _sums(row: tuple) -> Sums:
    n, i, o, cr, cw, reported, n_null, i_n, o_n, cr_n, cw_n = row
    return Sums(n, i or 0, o or 0, cr or 0, cw or 0, reported, n_null or 0, int(i_n), int(o_n), int(cr_n), int(cw_n))


class ModelSums(NamedTuple):
    model: str | None
    provider: str | None
    sums: Sums


class QuarterSums(NamedTuple):
    """A quarter of an hour (so half-hour time zones fall right) and a model."""

    start_ms: int
    model: str | None
    provider: str | None
    sums: Sums


class SessionRow(NamedTuple):
    id: str
    started_ms: int | None
    ended_ms: int | None
    status: str
    title: str | None
    prompt: str | None
    cwd: str | None
    workspace_root: str | None
    model: str | None
    provider: str | None
    removed: bool
    folder: str | None
    source: str | None
    origin: str | None  # None: this machine


class SessionPart(NamedTuple):
    """A session's counted calls from one file, by one agent, with one model."""

    file: str | None
    agent: str | None
    model: str | None
    provider: str | None
    sums: Sums
    last_ms: int | None


class CallRecord(NamedTuple):
    ts_ms: int
    model: str | None
    provider: str | None
    agent: str | None
    input: int
    output: int
    cache_read: int
    cache_write: int
    cost: float | None
    tools: str | None


class SessionCounts(NamedTuple):
    live: int
    removed: int  # folders removed from disk; their calls still count


class Problem(NamedTuple):
    path: str
    reason: str
    settling: bool  # failed within the last minute: most likely caught mid-write, retried at each refresh


class Queries:
    """Mixed into `Ledger`: `_rows` runs one read under the ledger's lock."""

    def _rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        raise NotImplementedError

    def model_sums(self, start_ms: int, end_ms: int) -> list[ModelSums]:
        """Counted calls in [start, end) by (model, provider)."""
        rows = self._rows(
            f"SELECT model, provider, {_SUMS} FROM calls WHERE counted=1 AND ts_ms>=? AND ts_ms<?"
            " GROUP BY model, provider",
            (start_ms, end_ms),
        )
        return [ModelSums(r[0], r[1], _sums(r[2:])) for r in rows]

    def quarter_sums(self, start_ms: int, end_ms: int) -> list[QuarterSums]:
        """Counted calls in [start, end) by quarter hour and (model, provider)."""
        rows = self._rows(
            f"SELECT ts_ms / 900000, model, provider, {_SUMS} FROM calls WHERE counted=1 AND ts_ms>=? AND ts_ms<?"
            " GROUP BY 1, 2, 3",
            (start_ms, end_ms),
        )
        return [QuarterSums(r[0] * 900000, r[1], r[2], _sums(r[3:])) for r in rows]

    def session_count(self, start_ms: int, end_ms: int) -> int:
        """Sessions with counted calls in [start, end)."""
        rows = self._rows(
            "SELECT COUNT(DISTINCT session_id) FROM calls WHERE counted=1 AND ts_ms>=? AND ts_ms<?", (start_ms, end_ms)
        )
        return rows[0][0]

    def session_ids(self, start_ms: int, end_ms: int) -> list[str]:
        """Sessions with counted calls, or a start, in [start, end)."""
        rows = self._rows(
            "SELECT DISTINCT session_id FROM calls WHERE counted=1 AND ts_ms>=? AND ts_ms<?"
            " UNION SELECT id FROM sessions WHERE started_ms>=? AND started_ms<?",
            (start_ms, end_ms, start_ms, end_ms),
        )
        return [r[0] for r in rows]

    def session(self, sid: str) -> SessionRow | None:
        rows = self._rows(
            "SELECT id, started_ms, ended_ms, status, title, prompt, cwd, workspace_root, model, provider,"
            " removed, folder, source, origin FROM sessions WHERE id=?",
            (sid,),
        )
        if not rows:
            return None
        r = rows[0]
        return SessionRow(
            r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], bool(r[10]), text(r[11]), r[12], r[13]
        )

    def session_parts(self, sid: str, start_ms: int, end_ms: int) -> list[SessionPart]:
        """The session's counted calls in [start, end) by (file, agent, model, provider)."""
        rows = self._rows(
            f"SELECT (SELECT path FROM files WHERE id=file_id), agent, model, provider, {_SUMS}, MAX(ts_ms)"
            " FROM calls WHERE counted=1 AND session_id=? AND ts_ms>=? AND ts_ms<?"
            " GROUP BY file_id, agent, model, provider",
            (sid, start_ms, end_ms),
        )
        return [SessionPart(text(r[0]), r[1], r[2], r[3], _sums(r[4 : 4 + _N]), r[4 + _N]) for r in rows]

    def session_calls(self, sid: str) -> list[CallRecord]:
        """The session's counted calls in order (time, then file, then position in it)."""
        rows = self._rows(
            "SELECT ts_ms, model, provider, agent, input, output, cache_read, cache_write, cost, tools FROM calls"
            " WHERE counted=1 AND session_id=? ORDER BY ts_ms, (SELECT path FROM files WHERE id=file_id), seq",
            (sid,),
        )
        return [CallRecord(*r) for r in rows]

    def session_counts(self) -> SessionCounts:
        live, removed = self._rows("SELECT SUM(removed=0), SUM(removed=1) FROM sessions")[0]
        return SessionCounts(live or 0, removed or 0)

    def origins(self) -> list[str]:
        """The other machines the ledger holds sessions of (their files may be gone since)."""
        return [r[0] for r in self._rows("SELECT DISTINCT origin FROM sessions WHERE origin IS NOT NULL ORDER BY 1")]

    def problems(self) -> list[Problem]:
        """Files whose latest read failed, by path."""
        rows = self._rows(
            "SELECT path, error, bad_mtime_ns FROM files WHERE error IS NOT NULL AND gone=0 ORDER BY path"
        )
        recent = time.time_ns() - RETRY_RECENT_NS
        return [Problem(text(p) or "", r, mtime is not None and mtime >= recent) for p, r, mtime in rows]
