"""The sessions of a period (or of all time) with their figures, from two queries whatever their
number: the sessions, then the period's calls in `costs.Pricer.groups` by (session, file, agent),
priced exactly as their calls one by one would be. `sessions_report` (the CLI's and the
window's sessions list) and `session_detail` (one session in full, its calls) are here.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import date

from ..ledger import ALL_TIME, CostGroup, Ledger, Route, SessionRow
from ..pricing import PriceBook
from .costs import Pricer, Totals
from .day import (
    CallRow,
    SessionDetail,
    SessionSummary,
    Subagent,
    Tokens,
    _agent_name,
    _ms,
    _state,
    day_bounds,
    display_title,
    iso_local,
    local_midnight_ms,
    project_name,
    tool_words,
)

AGENTS = ("subagent", "teammate")  # the calls of a file of their own, shown as the session's subagents


def sessions(
    ledger: Ledger, book: PriceBook, since: date | None, until: date | None, now_ms: int | None = None
) -> list[SessionSummary]:
    """Sessions with calls (or a start) in [since, until]; figures for that range. None, None: all time.
    Newest first."""
    start = local_midnight_ms(since) if since else ALL_TIME[0]
    end = day_bounds(until)[1] if until else ALL_TIME[1]
    out = summaries(Pricer(ledger, book), ledger.sessions_between(start, end), start, end, now_ms)
    return sorted(out, key=lambda s: _ms(s.started_at) or 0, reverse=True)


def summaries(
    pricer: Pricer,
    metas: Sequence[SessionRow],
    start_ms: int,
    end_ms: int,
    now_ms: int | None = None,
    session_id: str | None = None,
) -> list[SessionSummary]:
    """The figures in [start, end) of these sessions (all of them in one grouped query; `session_id`:
    only that one's calls are read)."""
    found: dict[str, list[CostGroup]] = {}
    for g in pricer.groups(start_ms, end_ms, by=("session", "file", "agent"), session_id=session_id):
        found.setdefault(g.by[0], []).append(g)
    now = now_ms if now_ms is not None else int(time.time() * 1000)
    return [_summary(m, sorted(found.get(m.id, ()), key=_order), pricer, now) for m in metas]


def _order(g: CostGroup) -> tuple:
    """Groups in a stable order (models are listed as first met): by route, band, time, file, agent."""
    return (*(v or "" for v in g.route), g.band, g.at_ms or 0, *(v or "" for v in g.by[1:]))


def _summary(m: SessionRow, groups: list[CostGroup], pricer: Pricer, now_ms: int) -> SessionSummary:
    totals, models, last = Totals(), list[str](), m.started_ms
    subs: dict[str, Subagent] = {}
    for g in groups:
        one = Totals()
        one.add(g, pricer)
        totals.merge(one)
        name = pricer.name(g.route)
        if name not in models:
            models.append(name)
        last = max(last or 0, g.last_ms or 0)
        _, file, agent = g.by
        if agent in AGENTS:
            sub = subs.setdefault(file or "", Subagent(_agent_name(file or ""), agent, 0, 0.0))
            sub.calls += one.calls
            sub.cost_usd += one.cost_usd
    if not models and m.model:
        models.append(pricer.name(Route(m.model, m.provider, m.provider)))
    where = m.workspace_root or m.cwd
    return SessionSummary(
        id=m.id,
        title=display_title(m.title, m.prompt),
        project=project_name(where) if where else None,
        cwd=m.cwd,
        status=m.status,
        state=_state(m.status, last or m.started_ms, now_ms),
        started_at=iso_local(m.started_ms),
        ended_at=iso_local(m.ended_ms),
        models=models,
        calls=totals.calls,
        tokens=totals.tokens,
        cost_usd=totals.cost_usd,
        estimated_cost_usd=totals.estimated_usd,
        unpriced_calls=totals.unpriced_calls,
        subagents=sorted(subs.values(), key=lambda s: s.name),
        removed=m.removed,
        folder=m.folder,
        last_activity_ms=last,
        plan_calls=totals.plan_calls,
        plan_api_value_usd=totals.plan_api_value_usd,
        capped_calls=totals.capped_calls,
    )


def sessions_report(
    ledger: Ledger, book: PriceBook, since: date | None, until: date | None, now_ms: int | None = None
) -> list[SessionSummary]:
    """Sessions with calls (or a start) in [since, until]; figures for that range. None, None: all time.
    Two queries whatever the number of sessions (`sessions`)."""
    return sessions(ledger, book, since, until, now_ms)


def session_detail(ledger: Ledger, book: PriceBook, sid: str, now_ms: int | None = None) -> SessionDetail | None:
    meta = ledger.session(sid)
    if meta is None:
        return None
    pricer = Pricer(ledger, book)
    (summary,) = summaries(pricer, [meta], *ALL_TIME, now_ms, session_id=sid)
    calls = []
    for c in ledger.session_calls(sid):
        cost = pricer.call(c, meta.provider)
        calls.append(
            CallRow(
                iso_local(c.ts_ms) or "",
                c.ts_ms,
                pricer.name(Route(c.model, c.provider, meta.provider)),
                c.agent or "lead",
                Tokens(c.input, c.output, c.cache_read, c.cache_write),
                cost.cost_usd,
                cost.estimated,
                tool_words(c.tools),
                cost.capped,
                cost.plan_api_value_usd,
            )
        )
    s = summary
    start_ms = _ms(s.started_at)
    end_ms = _ms(s.ended_at) or s.last_activity_ms
    duration = (end_ms - start_ms) / 1000 if start_ms and end_ms and end_ms >= start_ms else None
    return SessionDetail(summary, calls, duration)
