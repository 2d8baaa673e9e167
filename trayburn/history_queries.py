"""The ledger's history queries: counted calls summed per time bucket, per group and per model, and
the calls one by one for an export. The only module of the history feature that speaks SQL.

Every function takes the ledger's sqlite3 connection and returns named rows. A report is a handful
of grouped queries whatever the number of sessions: one for the sums, one for who was active where.
Time buckets (local days, weeks, months) are given as epoch-ms bounds, computed by the caller, so
days follow the local time zone and its DST changes exactly as everywhere else in trayburn.

(To be folded into the ledger package as named query methods.)
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import NamedTuple

# What a call is grouped by (besides its time bucket), as a SQL expression over calls c and sessions s.
GROUP_KEYS = {
    "time": "NULL",
    "project": "COALESCE(NULLIF(s.workspace_root, ''), NULLIF(s.cwd, ''))",
    "source": "s.source",
    "session": "c.session_id",
    "model": "NULL",  # the model is always a grouping column of its own
}
FETCH_ROWS = 2000  # calls fetched at a time by `calls()`: memory stays flat whatever the period


class Bucket(NamedTuple):
    """A span of time, [start_ms, end_ms), with the index it is reported under."""

    index: int
    start_ms: int
    end_ms: int


class ModelSums(NamedTuple):
    """Counted calls of one bucket, one group and one model: their sums, then the sums of those of them
    without a reported cost (to be estimated from their tokens; input at least its cache tokens)."""

    bucket: int
    key: str | None
    model: str | None
    calls: int
    input: int
    output: int
    cache_read: int
    cache_write: int
    reported_usd: float
    unreported_calls: int
    unreported_input: int
    unreported_output: int
    unreported_cache_read: int
    unreported_cache_write: int

    @property
    def sums(self) -> tuple:
        """The figures in the order `report.Totals.add` takes them."""
        return tuple(self[3:])


class Presence(NamedTuple):
    """A session with counted calls in a bucket and group (sessions are counted from these, once each)."""

    bucket: int
    key: str | None
    session_id: str


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


_SUMS = (
    "COUNT(*), TOTAL(c.input), TOTAL(c.output), TOTAL(c.cache_read), TOTAL(c.cache_write), TOTAL(c.cost),"
    " SUM(c.cost IS NULL),"
    " TOTAL(CASE WHEN c.cost IS NULL THEN MAX(c.input, c.cache_read + c.cache_write) END),"
    " TOTAL(CASE WHEN c.cost IS NULL THEN c.output END),"
    " TOTAL(CASE WHEN c.cost IS NULL THEN c.cache_read END),"
    " TOTAL(CASE WHEN c.cost IS NULL THEN c.cache_write END)"
)


def _buckets_cte(buckets: Sequence[Bucket]) -> tuple[str, list[int]]:
    if not buckets:
        raise ValueError("at least one time bucket is needed")
    values = ",".join("(?,?,?)" for _ in buckets)
    return f"WITH b(i, lo, hi) AS (VALUES {values})", [x for bk in buckets for x in bk]


def _from(group: str) -> str:
    """Counted calls in each bucket (by the day index), with their session where the key needs it."""
    join = " LEFT JOIN sessions s ON s.id = c.session_id" if group in ("project", "source") else ""
    return f" FROM b JOIN calls c ON c.counted = 1 AND c.ts_ms >= b.lo AND c.ts_ms < b.hi{join}"


def model_sums(db: sqlite3.Connection, buckets: Sequence[Bucket], group: str) -> list[ModelSums]:
    """Sums per (bucket, group key, model) of the counted calls in the buckets. `group` is one of GROUP_KEYS."""
    cte, params = _buckets_cte(buckets)
    sql = f"{cte} SELECT b.i, {GROUP_KEYS[group]}, c.model, {_SUMS}{_from(group)} GROUP BY 1, 2, 3"
    return [_model_sums(r) for r in db.execute(sql, params)]


def _model_sums(r: tuple) -> ModelSums:
    head, floats = r[:4], r[4:]
    ints = [int(x) for x in floats[:4]]
    return ModelSums(*head, *ints, floats[4], int(floats[5]), *(int(x) for x in floats[6:]))


def presence(db: sqlite3.Connection, buckets: Sequence[Bucket], group: str) -> list[Presence]:
    """Each session once per (bucket, group key) it has counted calls in; for the model group the key is
    the call's model."""
    cte, params = _buckets_cte(buckets)
    key = "c.model" if group == "model" else GROUP_KEYS[group]
    sql = f"{cte} SELECT DISTINCT b.i, {key}, c.session_id{_from(group)}"
    return [Presence(*r) for r in db.execute(sql, params)]


def calls(db: sqlite3.Connection, start_ms: int, end_ms: int) -> Iterator[ExportCall]:
    """The counted calls in [start, end), oldest first, fetched a few thousand at a time (a generator:
    the statement stays open while it is iterated). The provider is the call's own where the ledger
    records one (`calls.provider`, schema 3), else its session's."""
    provider = "COALESCE(c.provider, s.provider)" if _has_column(db, "calls", "provider") else "s.provider"
    cursor = db.execute(
        "SELECT c.ts_ms, c.session_id, s.title, s.prompt, s.workspace_root, s.cwd, s.source, c.agent, c.model,"
        f" {provider}, c.input, c.output, c.cache_read, c.cache_write, c.cost"
        " FROM calls c LEFT JOIN sessions s ON s.id = c.session_id"
        " WHERE c.counted = 1 AND c.ts_ms >= ? AND c.ts_ms < ? ORDER BY c.ts_ms, c.id",
        (start_ms, end_ms),
    )
    try:
        while rows := cursor.fetchmany(FETCH_ROWS):
            yield from (ExportCall(*r) for r in rows)
    finally:
        cursor.close()


class Title(NamedTuple):
    id: str
    title: str | None
    prompt: str | None


def titles(db: sqlite3.Connection) -> list[Title]:
    return [Title(*r) for r in db.execute("SELECT id, title, prompt FROM sessions")]


def _has_column(db: sqlite3.Connection, table: str, column: str) -> bool:
    return any(r[1] == column for r in db.execute(f"PRAGMA table_info({table})"))


# ---- sessions, grouped (for `sessions --all` and a period's sessions) ------------------------------------


class SessionRow(NamedTuple):
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


class SessionPart(NamedTuple):
    """A session's counted calls in the range, per file, agent and model, with the latest call's time."""

    session_id: str
    file: str | None
    agent: str | None
    model: str | None
    sums: tuple
    last_ms: int | None


def sessions_between(db: sqlite3.Connection, start_ms: int, end_ms: int) -> list[SessionRow]:
    """Sessions with counted calls, or a start, in [start, end)."""
    return [
        SessionRow(*r)
        for r in db.execute(
            "SELECT id, started_ms, ended_ms, status, title, prompt, cwd, workspace_root, model, removed, folder"
            " FROM sessions WHERE id IN (SELECT session_id FROM calls WHERE counted = 1 AND ts_ms >= ?1"
            " AND ts_ms < ?2) OR (started_ms >= ?1 AND started_ms < ?2)",
            (start_ms, end_ms),
        )
    ]


def session_parts(db: sqlite3.Connection, start_ms: int, end_ms: int) -> list[SessionPart]:
    """Every session's sums in [start, end) per file, agent and model, in one grouped query."""
    rows = db.execute(
        f"SELECT c.session_id, f.path, c.agent, c.model, {_SUMS}, MAX(c.ts_ms)"
        " FROM calls c LEFT JOIN files f ON f.id = c.file_id"
        " WHERE c.counted = 1 AND c.ts_ms >= ? AND c.ts_ms < ? GROUP BY c.session_id, c.file_id, c.agent, c.model",
        (start_ms, end_ms),
    )
    out = []
    for sid, path, agent, model, *rest in rows:
        sums = _model_sums((0, None, None, *rest[:-1])).sums
        out.append(SessionPart(sid, path, agent, model, sums, rest[-1]))
    return out
