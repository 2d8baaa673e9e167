"""Every read of the ledger, as typed query methods returning named rows, mixed into `Ledger`: the figures
(`Queries`), history and export (`PeriodQueries`) and the machines' share (`MachineQueries`). Only the ledger
speaks SQL; these never write and never price a call (figures/costs.py does).

The figures come from `Queries.cost_groups` (by time bucket, session, file, agent), priced in `costs.py`: a
report or the sessions list is a few grouped queries whatever the number of sessions. History: the sessions'
keys a report groups by, the calls one by one for an export, the sessions of a period for the sessions list.
Sharing (`trayburn/sync`): this machine's sessions and calls as they leave for its machine file, the other
machines' files held.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from ..sources.base import RETRY_RECENT_NS
from .writer import text

ALL_TIME = (0, 2**62)  # [start, end) in epoch ms that holds every call
BUCKETS_PER_QUERY = 2000  # 6,000 parameters: under SQLite's smallest limit of a statement's (32,766)

# per group: calls, tokens, reported cost, then calls and tokens of those without a reported cost
# (their input at least their cache tokens, so a call's uncached input is never below 0, as per call); each
# with how two groups' values add up (`Queries.plain_cost_groups` sums groups again)
_SUMMED = (
    ("COUNT(*)", "SUM"),
    ("SUM(input)", "SUM"),
    ("SUM(output)", "SUM"),
    ("SUM(cache_read)", "SUM"),
    ("SUM(cache_write)", "SUM"),
    ("TOTAL(cost)", "TOTAL"),
    ("SUM(cost IS NULL)", "SUM"),
    ("TOTAL(CASE WHEN cost IS NULL THEN MAX(input, cache_read + cache_write) END)", "TOTAL"),
    ("TOTAL(CASE WHEN cost IS NULL THEN output END)", "TOTAL"),
    ("TOTAL(CASE WHEN cost IS NULL THEN cache_read END)", "TOTAL"),
    ("TOTAL(CASE WHEN cost IS NULL THEN cache_write END)", "TOTAL"),
)
_SUMS = ", ".join(sql for sql, _ in _SUMMED)
_N = len(_SUMMED)  # columns in _SUMS


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


class Route(NamedTuple):
    """What a call's price depends on besides its tokens: its model id, its own provider, its session's."""

    model: str | None
    provider: str | None
    session_provider: str | None


class Bucket(NamedTuple):
    """A span of time, [start_ms, end_ms), with the number its calls are grouped under."""

    number: int
    start_ms: int
    end_ms: int


class Usage(NamedTuple):
    """Calls and their tokens, each call's input floored at its cache tokens (as `Price.cost` counts)."""

    calls: int
    input: int
    output: int
    cache_read: int
    cache_write: int


class CostGroup(NamedTuple):
    """Counted calls alike for pricing: one route, one tier band (the tier start their input is above,
    0 below every tier), the same `by` values (quarter start ms, file path, agent: as asked). A call
    priced alone (a periodic price, or tokens past `alone_above`) is a group of its own, `at_ms` its time."""

    route: Route
    band: int
    by: tuple
    at_ms: int | None
    sums: Sums  # every call of the group; its unpriced_* part: the calls without a reported cost
    floored_input: int  # its calls' input, each at least its cache tokens (what a plan's value prices); 0 unless asked
    last_ms: int


class PlainGroups(NamedTuple):
    """`Queries.plain_cost_groups`' answer."""

    groups: list[CostGroup]
    biggest: int  # the most input (at least its cache tokens) + output tokens of any one call
    sessions: int  # sessions the calls are of


class ModelSeen(NamedTuple):
    """Every counted call of one route, all time."""

    route: Route
    calls: int
    input: int
    output: int
    cache_read: int
    cache_write: int
    no_cost_calls: int  # calls without a reported cost (what an estimate prices)


_BY = {
    "bucket": "b.i",  # the number of the time bucket a call is in (only with `buckets`)
    "quarter": "c.ts_ms / 900000 * 900000",  # a quarter of an hour, so half-hour time zones fall right
    "file": "c.file_id",  # its path in the group, from the files' paths read once (`_paths`)
    "agent": "c.agent",
    "session": "c.session_id",
    "origin": "s.origin",  # the machine a call's session came from (None: this one)
    "tools": "CASE WHEN c.seq < 0 THEN NULL ELSE c.tools END",  # its tools, comma-separated (NULL: a rollup's)
    "commands": "c.commands",  # the programs its shell commands ran (NULL: none, or read before schema 6)
}
_ROUTE = "(c.model IS ? AND c.provider IS ? AND s.provider IS ?)"  # one Route's calls
_FLOOR = "MAX(c.input, c.cache_read + c.cache_write)"  # a call's input, at least its cache tokens
_WHOLE = f"TOTAL({_FLOOR})"  # the group's input, each call's floored (its other sums are in _SUMS already)
_NO_WHOLE = "0"
_SESSION = " LEFT JOIN sessions s ON s.id = c.session_id"
_WHERE = " WHERE c.counted=1 AND c.ts_ms>=? AND c.ts_ms<?"
_JOINED = " FROM calls c" + _SESSION + _WHERE
# b: the buckets, each one's calls found by the day index on its own bounds (a range on the whole
# span as well would have SQLite search from the span's start for every bucket)
_IN_BUCKETS = " FROM b JOIN calls c ON c.ts_ms >= b.lo AND c.ts_ms < b.hi" + _SESSION + " WHERE c.counted=1"
# `plain_cost_groups`' two steps: per session and route, then summed again; the `by` values that are the session's
_INNER_SUMS = ", ".join(f"{sql} AS s{i}" for i, (sql, _) in enumerate(_SUMMED)) + (
    f", {_WHOLE} AS fl, MAX({_FLOOR} + c.output) AS big, MAX(c.ts_ms) AS last"
)
_OUTER_SUMS = ", ".join(f"{again}(g.s{i})" for i, (_, again) in enumerate(_SUMMED)) + (
    ", TOTAL(g.fl), MAX(g.big), MAX(g.last)"
)
_OF_SESSION = {"session": "g.sid", "origin": "s.origin"}


def _scope(start_ms: int, end_ms: int, session_id: str | None) -> tuple[str, tuple]:
    if session_id is None:
        return _JOINED, (start_ms, end_ms)
    return _JOINED + " AND c.session_id=?", (start_ms, end_ms, session_id)


def _band(starts: Sequence[int]) -> str:
    """The tier start a call's input is above (the highest such), else 0: one band per tier."""
    if not starts:
        return "0"
    whens = " ".join(f"WHEN {_FLOOR} > {int(s)} THEN {int(s)}" for s in sorted(set(starts), reverse=True))
    return f"CASE {whens} ELSE 0 END"


def _alone(routes: Sequence[Route], above: int | None, covered: Sequence[Route] = ()) -> tuple[str, tuple]:
    """The call's id when it must be priced on its own, else 0: a call of a route whose price depends on its time
    (`routes`; only the calls a price applies to: those without a reported cost, and every call of the `covered`
    routes, a plan's, valued whatever their cost), and any call whose tokens are past `above` (a reported cost
    counts the same alone or grouped, so no cost is looked at: nor the session's provider)."""
    conds: list[str] = []
    params: tuple = ()
    if routes:
        priced = " OR ".join(["c.cost IS NULL", *[_ROUTE] * len(covered)])
        conds.append(f"({priced}) AND ({' OR '.join([_ROUTE] * len(routes))})")
        params = tuple(v for r in (*covered, *routes) for v in r)
    if above is not None:
        conds.append(f"{_FLOOR} + c.output > {int(above)}")
    if not conds:
        return "0", ()
    return f"CASE WHEN ({') OR ('.join(conds)}) THEN c.id ELSE 0 END", params


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

    def priced_routes(self, start_ms: int, end_ms: int, session_id: str | None = None) -> list[tuple[Route, bool]]:
        """The routes of counted calls in [start, end) (of one session), each with whether some of its calls
        have no reported cost (what an estimate prices; a plan's calls are valued whatever their cost)."""
        where, params = _scope(start_ms, end_ms, session_id)
        sql = f"SELECT c.model, c.provider, s.provider, MAX(c.cost IS NULL){where} GROUP BY 1, 2, 3"
        return [(Route(*r[:3]), bool(r[3])) for r in self._rows(sql, params)]

    def cost_groups(
        self,
        start_ms: int,
        end_ms: int,
        bands: Sequence[int] = (),
        alone: Sequence[Route] = (),
        alone_above: int | None = None,
        by: tuple[str, ...] = (),
        session_id: str | None = None,
        buckets: Sequence[Bucket] | None = None,
        covered: Sequence[Route] = (),
    ) -> list[CostGroup]:
        """Counted calls in [start, end) (of one session), grouped so that pricing each group's summed
        tokens costs what pricing its calls one by one would: by route, tier band (`bands`: every tier
        start of the routes' prices) and the `by` dimensions ("quarter", "file", "agent", "session",
        "origin"); the calls of the `alone` routes, and those with more than `alone_above` input + output
        tokens, one by one. With `buckets` (spans of time inside [start, end)), only their calls, the
        bucket's number first in `by`: one grouped query per BUCKETS_PER_QUERY buckets (SQLite bounds a
        statement's parameters), never one per bucket or per session. `covered`: the scope's plan routes, whose
        calls are priced whatever their cost (`CostGroup.floored_input` is summed only when there are some)."""
        sums = f"{_SUMS}, {_WHOLE if covered else _NO_WHOLE}"
        alone_sql = _alone(alone, alone_above, covered)
        if buckets is None:
            return self._cost_groups("", (), bands, alone_sql, by, _scope(start_ms, end_ms, session_id), sums)
        out: list[CostGroup] = []
        for first in range(0, len(buckets), BUCKETS_PER_QUERY):
            chunk = buckets[first : first + BUCKETS_PER_QUERY]
            values = ",".join("(?,?,?)" for _ in chunk)
            cte = f"WITH b(i, lo, hi) AS (VALUES {values}) "
            scope: tuple[str, tuple] = _IN_BUCKETS, ()
            if session_id is not None:
                scope = _IN_BUCKETS + " AND c.session_id=?", (session_id,)
            cte_params = tuple(x for bk in chunk for x in bk)
            out += self._cost_groups(cte, cte_params, bands, alone_sql, ("bucket", *by), scope, sums)
        return out

    def plain_cost_groups(
        self, start_ms: int, end_ms: int, by: tuple[str, ...] = (), session_id: str | None = None
    ) -> PlainGroups:
        """`cost_groups` with no tier band, no call alone and every group's `floored_input` summed, with the
        most input + output tokens of any one call and how many sessions the calls are of: what a scope's plan
        is first read from. When that plan then asks for no band and no call alone (most scopes), these are its
        groups as `cost_groups` reads them, found in one pass over the calls instead of two (the routes, then
        the groups).

        Read in two steps: the calls grouped by session (with route and the `by` values a call holds), then
        those groups by their session's provider and origin. SQLite groups by sorting, and a session id
        tells most rows apart at its first bytes where a route compares whole; the sessions table is then
        looked up once per session and route, not once per call (a warm `today` on a busy day: a third fewer
        instructions in this read, its session count included). The cost is summed per session first: the same
        figures, a float's last bits aside. (`g` is read twice: SQLite 3.35+ makes it once; an older one makes
        it twice, the same figures.)"""
        inner_dims = [d for d in by if d not in _OF_SESSION]
        cols = "".join(f", {_BY[d]} AS d{i}" for i, d in enumerate(inner_dims))
        where = _WHERE if session_id is None else _WHERE + " AND c.session_id=?"
        params = (start_ms, end_ms) if session_id is None else (start_ms, end_ms, session_id)
        inner = (
            f"SELECT c.session_id AS sid, c.model AS m, c.provider AS p{cols}, {_INNER_SUMS} FROM calls c{where}"
            f" GROUP BY {', '.join(map(str, range(1, 4 + len(inner_dims))))}"
        )
        outer_dims = [_OF_SESSION.get(d) or f"g.d{inner_dims.index(d)}" for d in by]
        keys = [*range(4, 4 + len(by)), 1, 2, 3]  # the `by` values first, as `_cost_groups` orders them
        sql = (
            f"WITH g AS ({inner}) SELECT g.m, g.p, s.provider{''.join(', ' + d for d in outer_dims)},"
            f" {_OUTER_SUMS}, (SELECT COUNT(DISTINCT sid) FROM g) FROM g LEFT JOIN sessions s ON s.id = g.sid"
            f" GROUP BY {', '.join(map(str, keys))}"
        )
        out, biggest, sessions = [], 0, 0
        k = 3 + len(by)
        file = by.index("file") if "file" in by else -1
        # a path that is not UTF-8 is stored as bytes: read back as the same text
        paths = {i: text(p) for i, p in self._rows("SELECT id, path FROM files")} if file >= 0 else {}
        for r in self._rows(sql, params):
            values = tuple(r[3:k])
            if file >= 0:
                values = (*values[:file], paths.get(values[file]), *values[file + 1 :])
            last = r[k + _N + 2]
            out.append(CostGroup(Route(r[0], r[1], r[2]), 0, values, None, _sums(r[k : k + _N]), int(r[k + _N]), last))
            biggest = max(biggest, r[k + _N + 1] or 0)
            sessions = r[-1]
        return PlainGroups(out, biggest, sessions)

    def _cost_groups(
        self,
        cte: str,
        cte_params: tuple,
        bands: Sequence[int],
        alone: tuple[str, tuple],
        by: tuple[str, ...],
        scope: tuple[str, tuple],
        sums: str,
    ) -> list[CostGroup]:
        where, params = scope
        one, one_params = alone
        dims = "".join(f", {_BY[d]}" for d in by)
        keys = [*range(6, 6 + len(by)), *range(1, 6)]  # the `by` values first: a cheaper sort (by session)
        # a band or an "alone" that is the same for every call is no key: fewer columns to sort on (the same groups)
        keys = [i for i in keys if not (i == 4 and not bands or i == 5 and one == "0")]
        # grouped by session, and no call's own row needs its session's: the sessions' providers are read
        # once, not joined to every call
        apart = "session" in by and "s.provider" not in one and "origin" not in by
        providers: dict[str, str | None] = dict(self._rows("SELECT id, provider FROM sessions")) if apart else {}
        sql = (
            f"{cte}SELECT c.model, c.provider, {'NULL' if apart else 's.provider'}, {_band(bands)}, {one}{dims},"
            f" {sums}, MAX(c.ts_ms){where.replace(_SESSION, '', 1) if apart else where}"
            f" GROUP BY {', '.join(map(str, keys))}"
        )
        out = []
        k = 5 + len(by)
        sid = 5 + by.index("session") if apart else 0
        file = 5 + by.index("file") if "file" in by else 0
        # a path that is not UTF-8 is stored as bytes: read back as the same text
        paths = {i: text(p) for i, p in self._rows("SELECT id, path FROM files")} if file else {}
        for r in self._rows(sql, cte_params + one_params + params):
            if file:
                r = (*r[:file], paths.get(r[file]), *r[file + 1 :])
            last = r[-1]
            route = Route(r[0], r[1], providers.get(r[sid]) if apart else r[2])
            at_ms = last if r[4] else None
            out.append(CostGroup(route, r[3], tuple(r[5:k]), at_ms, _sums(r[k : k + _N]), int(r[k + _N]), last))
        return out

    def no_cost_routes(self) -> list[Route]:
        """The routes of counted calls without a reported cost, all time (those a price must estimate)."""
        sql = f"SELECT DISTINCT c.model, c.provider, s.provider{_JOINED} AND c.cost IS NULL"
        return [Route(*r) for r in self._rows(sql, ALL_TIME)]

    def counted_span(self) -> tuple[int, int] | None:
        """The first and last counted call's time (epoch ms; None: no call), from the day index's two ends."""
        first, last = self._rows("SELECT MIN(ts_ms), MAX(ts_ms) FROM calls WHERE counted=1")[0]
        return None if first is None else (first, last)

    def models_seen(self, only: Sequence[Route] | None = None) -> list[ModelSeen]:
        """Every route of counted calls (or only those given), all time, with its calls and tokens."""
        if only is not None and not only:
            return []
        match = "" if only is None else " AND (" + " OR ".join([_ROUTE] * len(only)) + ")"
        sql = (
            "SELECT c.model, c.provider, s.provider, COUNT(*), TOTAL(c.input), TOTAL(c.output), TOTAL(c.cache_read),"
            f" TOTAL(c.cache_write), SUM(c.cost IS NULL){_JOINED}{match} GROUP BY 1, 2, 3"
        )
        rows = self._rows(sql, ALL_TIME + tuple(v for r in only or () for v in r))
        return [ModelSeen(Route(*r[:3]), r[3], int(r[4]), int(r[5]), int(r[6]), int(r[7]), r[8] or 0) for r in rows]

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
        rows = self._rows(f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id=?", (sid,))
        return _session_row(rows[0]) if rows else None

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

    def live_by_feed(self) -> dict[str, int]:
        """This machine's sessions still on disk, by the feed (source) that wrote them."""
        rows = self._rows("SELECT feed, count(*) FROM sessions WHERE removed=0 AND origin IS NULL GROUP BY feed")
        return {feed: n for feed, n in rows}

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
    tools: str | None  # comma-separated (calls.tools)
    commands: str | None  # the programs its shell commands ran (calls.commands)
    path: str | None  # its file's (whose name names a subagent or a teammate)


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
                " c.model, c.provider, s.provider, c.input, c.output, c.cache_read, c.cache_write, c.cost, c.tools,"
                " c.commands, (SELECT f.path FROM files f WHERE f.id = c.file_id)"
                " FROM calls c LEFT JOIN sessions s ON s.id = c.session_id"
                " WHERE c.counted = 1 AND c.ts_ms >= ? AND c.ts_ms < ? ORDER BY c.ts_ms, c.id",
                (start_ms, end_ms),
            )
            try:
                while rows := cursor.fetchmany(FETCH_ROWS):
                    yield from (ExportCall(*r[:-1], None if r[-1] is None else text(r[-1])) for r in rows)  # type: ignore[call-arg]
            finally:
                cursor.close()

    def sessions_between(self, start_ms: int, end_ms: int) -> list[SessionRow]:
        """Sessions with counted calls in [start, end), and this machine's sessions that started then. Another
        machine's session that counts nothing there is left out: most are copies of sessions counted here
        (a shared home folder, a copied session), which listed every session twice, once at "0 calls").
        In the order they were first stored (rowid)."""
        with self._lock:
            rows = self.db.execute(f"SELECT {_SESSION_COLUMNS} FROM sessions{_BETWEEN}", (start_ms, end_ms)).fetchall()
        return [_session_row(r) for r in rows]

    def session_starts(self, start_ms: int, end_ms: int) -> list[tuple[str, int | None]]:
        """`sessions_between`'s sessions as (id, start) alone, in its order: a long list is read by these, then
        SESSION_CHUNK sessions at a time (`sessions_by_id`), rather than every row at once."""
        with self._lock:
            return self.db.execute(f"SELECT id, started_ms FROM sessions{_BETWEEN}", (start_ms, end_ms)).fetchall()

    def sessions_by_id(self, ids: Sequence[str]) -> dict[str, SessionRow]:
        """These sessions' rows (at most SESSION_CHUNK ids), by id."""
        marks = ",".join("?" * len(ids))
        with self._lock:
            rows = self.db.execute(f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id IN ({marks})", tuple(ids))
            return {r[0]: _session_row(r) for r in rows}


SESSION_CHUNK = 500  # sessions read at a time by a long list (parameters of one statement: under SQLite's 999)
_SESSION_COLUMNS = (
    "id, started_ms, ended_ms, status, title, prompt, cwd, workspace_root, model, provider, removed, folder, source,"
    " origin"
)
_BETWEEN = (
    " WHERE id IN (SELECT session_id FROM calls WHERE counted = 1 AND ts_ms >= ?1 AND ts_ms < ?2)"
    " OR (started_ms >= ?1 AND started_ms < ?2 AND origin IS NULL) ORDER BY rowid"
)


def _session_row(r: tuple) -> SessionRow:
    sid, start, end, status, title, prompt, cwd, root, model, provider, removed, folder, source, origin = r
    return SessionRow(
        sid, start, end, status, title, prompt, cwd, root, model, provider, bool(removed), text(folder), source, origin
    )


class SharedCall(NamedTuple):
    """One of this machine's calls as it leaves for the machine file."""

    key: str
    ts_ms: int
    model: str | None
    provider: str | None
    input: int
    output: int
    cache_read: int
    cache_write: int
    cost: float | None
    session_id: str
    agent: str | None


class MachineFile(NamedTuple):
    """Another machine's file as the ledger last saw it (kept when the file is gone)."""

    origin: str
    path: str
    name: str | None  # the machine's name in its file (stored as the files row's `agent`)
    gone: bool
    error: str | None
    mtime_ns: int | None


def _earlier(a: tuple, b: tuple) -> bool:
    """Row a's session started before b's (unknown starts last), then by session id, then by row id."""
    return (a[11] is None, a[11] or 0, a[9], a[12]) < (b[11] is None, b[11] or 0, b[9], b[12])


class MachineQueries:
    """Mixed into `Ledger` beside `Queries`."""

    def _rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        raise NotImplementedError

    def local_sessions(self) -> list[SessionRow]:
        """This machine's sessions (removed ones included: their calls still count)."""
        rows = self._rows(
            "SELECT id, started_ms, ended_ms, status, title, prompt, cwd, workspace_root, model, provider,"
            " removed, folder, source, origin FROM sessions WHERE origin IS NULL ORDER BY id"
        )
        return [
            SessionRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], bool(r[10]), r[11], r[12], r[13])
            for r in rows
        ]

    def local_calls(self) -> list[SharedCall]:
        """This machine's calls, one per key: the copy in its earliest-started session (as `counted` would
        choose among this machine's rows alone), whether or not another machine's copy is counted here."""
        rows = self._rows(
            "SELECT c.key, c.ts_ms, c.model, c.provider, c.input, c.output, c.cache_read, c.cache_write, c.cost,"
            " c.session_id, c.agent, s.started_ms, c.id FROM calls c JOIN files f ON f.id = c.file_id"
            " LEFT JOIN sessions s ON s.id = c.session_id WHERE f.origin IS NULL"
        )  # ordered here, not by SQL: a sort of every call by key costs twice the query
        best: dict[str, tuple] = {}
        for r in rows:
            held = best.get(r[0])
            if held is None or _earlier(r, held):
                best[r[0]] = r
        return [SharedCall(*r[:11]) for r in best.values()]

    def counted_by_origin(self) -> dict[str | None, int]:
        """Counted calls, all time, by the machine whose session counts them (None: this one): each key once,
        so a call both here and in another machine's file is this machine's alone."""
        sql = "SELECT s.origin, COUNT(*) FROM calls c LEFT JOIN sessions s ON s.id = c.session_id WHERE c.counted=1"
        return {r[0]: r[1] for r in self._rows(sql + " GROUP BY 1")}

    def feed_sessions(self, feed: str) -> list[str]:
        return [r[0] for r in self._rows("SELECT id FROM sessions WHERE feed=? AND removed=0", (feed,))]

    def machine_files(self) -> list[MachineFile]:
        rows = self._rows(
            "SELECT origin, path, agent, gone, error, mtime_ns FROM files WHERE kind='machine' AND origin IS NOT NULL"
            " ORDER BY origin, path"
        )
        return [MachineFile(r[0], r[1], r[2], bool(r[3]), r[4], r[5]) for r in rows]
