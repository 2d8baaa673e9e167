"""The sessions of a period (or of all time) with their figures, from two grouped queries whatever
their number: the sessions, then every session's sums per file, agent and model.

The same `report.SessionSummary` rows as `report.sessions_report`, which asks two queries per session
(10,001 for 5,000 sessions); `sessions_report` can become this function. One difference: a project is
named by `history.project_name`, as in reports, which also cuts a Windows path (C:\\Users\\me\\beta → beta).
"""

from __future__ import annotations

import time
from datetime import date

from .history import priced, project_name
from .ledger import Ledger
from .ledger import periods as hq
from .pricing import PriceBook
from .report import (
    SessionSummary,
    Subagent,
    _agent_name,
    _ms,
    _state,
    day_bounds,
    display_title,
    iso_local,
    local_midnight_ms,
)

ALL_TIME = (0, 2**62)


def sessions(
    ledger: Ledger, book: PriceBook, since: date | None, until: date | None, now_ms: int | None = None
) -> list[SessionSummary]:
    """Sessions with calls (or a start) in [since, until]; figures for that range. None, None: all time.
    Newest first."""
    start = local_midnight_ms(since) if since else ALL_TIME[0]
    end = day_bounds(until)[1] if until else ALL_TIME[1]
    metas = ledger.sessions_between(start, end)
    parts = ledger.listed_parts(start, end)
    by_session: dict[str, list[hq.ListedPart]] = {}
    for p in parts:
        by_session.setdefault(p.session_id, []).append(p)
    now = now_ms if now_ms is not None else int(time.time() * 1000)
    names: dict[str | None, str] = {}  # model → display name, looked up once per model
    out = [_summary(m, by_session.get(m.id, []), book, now, names) for m in metas]
    return sorted(out, key=lambda s: _ms(s.started_at) or 0, reverse=True)


def _summary(
    m: hq.ListedSession, parts: list[hq.ListedPart], book: PriceBook, now_ms: int, names: dict[str | None, str]
) -> SessionSummary:
    models, last = [], m.started_ms
    subs: dict[str | None, Subagent] = {}
    parts = sorted(parts, key=lambda p: (p.file_id, p.agent or "", p.model or ""))  # as sessions_report
    totals = priced(parts, book)
    for p in parts:
        name = names.get(p.model) or names.setdefault(p.model, book.display(p.model))
        if name not in models:
            models.append(name)
        last = max(last or 0, p.last_ms or 0)
        if p.agent in ("subagent", "teammate"):
            sub = subs.setdefault(p.file, Subagent(_agent_name(p.file or ""), p.agent, 0, 0.0))
            part = priced([p], book)
            sub.calls += part.calls
            sub.cost_usd += part.cost_usd
    if not models and m.model:
        models.append(names.get(m.model) or names.setdefault(m.model, book.display(m.model)))
    return SessionSummary(
        id=m.id,
        title=display_title(m.title, m.prompt),
        project=project_name(m.workspace_root or m.cwd) if (m.workspace_root or m.cwd) else None,
        cwd=m.cwd,
        status=m.status,  # type: ignore[arg-type]  # as Cline left it (a manifest may have none)
        state=_state(m.status, last or m.started_ms, now_ms),  # type: ignore[arg-type]
        started_at=iso_local(m.started_ms),
        ended_at=iso_local(m.ended_ms),
        models=models,
        calls=totals.calls,
        tokens=totals.tokens,
        cost_usd=totals.cost_usd,
        estimated_cost_usd=totals.estimated_usd,
        unpriced_calls=totals.unpriced_calls,
        subagents=sorted(subs.values(), key=lambda s: s.name),
        removed=bool(m.removed),
        folder=m.folder,
        last_activity_ms=last,
    )
