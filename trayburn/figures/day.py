"""A day's figures, the sessions list and one session in full, as plain data (`DayReport`, `SessionSummary`,
`SessionDetail`), with the one rule for a session's project. Never reads the apps' files and never speaks SQL:
it reads the ledger's named rows.

Costs come from `costs.Pricer`: estimated when read, so better price data re-prices old calls; grouped by
model key, named by `PriceBook.name_of`. The sessions of a period (or of all time) come with their figures
from two queries whatever their number: the sessions, then the period's calls in `costs.Pricer.groups` by
(session, file, agent), priced exactly as their calls one by one would be. `sessions_report` (the CLI's and
the window's sessions list) and `session_detail` (one session in full, its calls) are here.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import date, datetime
from pathlib import Path

from ..ledger import ALL_TIME, SESSION_CHUNK, CostGroup, Ledger, Route, SessionRow
from ..pricing import PriceBook
from .costs import Pricer, Tokens, Totals, covered_by, priced_cost
from .periods import day_bounds, iso_local, local_midnight_ms, timezone_name

__all__ = ["Tokens", "Totals", "priced_cost"]  # re-exported: the figures' callers import them from here

RUNNING = ("running", "pending", "idle")
NO_PROJECT = "(no folder)"
STALE_AFTER_MS = 30 * 60 * 1000  # a "running" session silent this long is shown as stale (its process died)
TOOL_WORDS = {
    "run_commands": "shell",
    "read_files": "read",
    "search_codebase": "search",
    "editor": "edit",
    "apply_patch": "patch",
    "fetch_web_content": "web",
    "skills": "skill",
    "ask_question": "question",
    "spawn_agent": "subagent",
}
_USER_INPUT = re.compile(r"^\s*<user_input[^>]*>(.*?)(</user_input>\s*)?$", re.S)


@dataclass
class ModelCost:
    """One model's row of a day: its cost, calls and tokens."""

    name: str
    cost_usd: float
    calls: int
    estimated_cost_usd: float = 0.0
    unpriced_calls: int = 0
    tokens: int = 0
    key: str = ""  # the canonical model key (`glm-4-6`) the row groups by
    plan_api_value_usd: float = 0.0
    plan_calls: int = 0
    free_calls: int = 0

    @property
    def billing(self) -> str | None:
        """ "plan" or "free" when every call of the model was a plan's or a free model's (its cost: nothing)."""
        return covered_by(self.calls, self.plan_calls, self.free_calls)


@dataclass
class DayReport:
    """A day's figures as `today` shows them: spend, estimate, calls, sessions, tokens, models, plans."""

    date: str
    timezone: str
    cost_usd: float
    estimated_cost_usd: float
    calls: int
    sessions: int
    unpriced_calls: int
    tokens: Tokens
    top_model: ModelCost | None
    models: list[ModelCost]
    # calls a plan covered (on a plan route: ClinePass, whatever their cost field says) and their tokens'
    # list price: shown beside the spend ("ClinePass: 3 calls, $0.08 of API value included"), never in cost_usd
    plan_calls: int = 0
    plan_api_value_usd: float = 0.0
    capped_calls: int = 0  # estimates held at MAX_COST per call (absurd token counts)
    unpriced_models: list[str] = field(default_factory=list)  # names of the models with unpriced calls
    free_calls: int = 0  # calls of a free model (`cline-free/…`): $0, never priced
    plans: list[str] = field(default_factory=list)  # the plans that covered calls, by name ("ClinePass")

    def to_json(self) -> dict:
        out = asdict(self)
        out["tokens"] = asdict(self.tokens)
        slim = lambda m: {"name": m["name"], "cost_usd": _known_cost(m), "calls": m["calls"]}  # noqa: E731
        out["models"] = [slim(m) for m in out["models"]]
        out["top_model"] = slim(out["top_model"]) if out["top_model"] else None
        out["cost_usd"], out["estimated_cost_usd"] = _r(self.cost_usd), _r(self.estimated_cost_usd)
        out["plan_api_value_usd"] = _r(self.plan_api_value_usd)
        return out


@dataclass
class Subagent:
    """A session's subagent or teammate with its calls and cost."""

    name: str
    kind: str  # subagent | teammate | subagents (an editor task's, summed by the task)
    calls: int
    cost_usd: float


@dataclass
class SessionSummary:
    """One session's row: its title, project, state, times, model, calls and cost."""

    id: str
    title: str
    project: str | None
    cwd: str | None
    status: str  # as Cline left it
    state: str  # running | completed | failed | cancelled | stale (running in the manifest, silent for long)
    started_at: str | None
    ended_at: str | None
    models: list[str]
    calls: int
    tokens: Tokens
    cost_usd: float
    estimated_cost_usd: float
    unpriced_calls: int
    subagents: list[Subagent]
    removed: bool
    folder: str | None = None
    last_activity_ms: int | None = None
    plan_calls: int = 0
    plan_api_value_usd: float = 0.0  # never in cost_usd
    capped_calls: int = 0
    free_calls: int = 0
    plans: list[str] = field(default_factory=list)

    @property
    def running(self) -> bool:
        return self.state == "running"

    def to_json(self) -> dict:
        out = asdict(self)
        out["cost_usd"], out["estimated_cost_usd"] = _known_cost(out), _r(self.estimated_cost_usd)
        out["plan_api_value_usd"] = _r(self.plan_api_value_usd)
        for s in out["subagents"]:
            s["cost_usd"] = _r(s["cost_usd"])
        out.pop("last_activity_ms")
        return out


@dataclass
class CallRow:
    """One call of a session, priced, as the session's detail lists it."""

    time: str
    ts_ms: int
    model: str
    agent: str
    tokens: Tokens
    cost_usd: float | None
    estimated: bool
    tools: list[str]
    capped: bool = False  # an estimate held at MAX_COST
    plan_api_value_usd: float | None = None  # a plan-covered call's list price (its cost_usd is 0)
    billing: str = "paid"  # paid | plan | free (`billing.Billing.of`: by route and model id, never the cost)


@dataclass
class SessionDetail:
    """A session's summary with every one of its calls."""

    summary: SessionSummary
    calls: list[CallRow]
    duration_s: float | None

    def to_json(self) -> dict:
        out = self.summary.to_json()
        out["duration_s"] = self.duration_s
        out["calls_detail"] = [
            dict(asdict(c), cost_usd=_r_or_none(c.cost_usd), plan_api_value_usd=_r_or_none(c.plan_api_value_usd))
            for c in self.calls
        ]
        return out


def _r(usd: float) -> float:
    return round(usd, 9)  # nano-dollars: float noise goes, a cheap call's cost stays


def _r_or_none(usd: float | None) -> float | None:
    return None if usd is None else _r(usd)


def _known_cost(m: dict) -> float | None:
    cost = priced_cost(m["cost_usd"], m["calls"], m["unpriced_calls"])
    return None if cost is None else _r(cost)


# ---- reports ---------------------------------------------------------------------------------------


def totals_between(ledger: Ledger, book: PriceBook, start_ms: int, end_ms: int) -> Totals:
    return Pricer(ledger, book).totals(start_ms, end_ms)


def day_report(
    ledger: Ledger,
    book: PriceBook,
    day: date,
    priced: tuple[Pricer, Sequence[CostGroup]] | None = None,
    sessions: int | None = None,
) -> DayReport:
    """`priced`: the day's groups already read (by any dimension: `Engine.day_and_machines`), with their pricer;
    `sessions`: how many sessions have counted calls that day, when known (the tray's groups by session)."""
    start, end = day_bounds(day)
    pricer, groups = priced or (Pricer(ledger, book), None)
    totals, per_model = Totals(), dict[str, Totals]()
    for g in pricer.groups(start, end) if groups is None else groups:
        totals.add(g, pricer)
        per_model.setdefault(pricer.key(g.route), Totals()).add(g, pricer)
    models = sorted((_model_cost(book.name_of(k), k, t) for k, t in per_model.items()), key=_by_cost)
    return DayReport(
        date=day.isoformat(),
        timezone=timezone_name(),
        cost_usd=totals.cost_usd,
        estimated_cost_usd=totals.estimated_usd,
        calls=totals.calls,
        sessions=ledger.session_count(start, end) if sessions is None else sessions,
        unpriced_calls=totals.unpriced_calls,
        tokens=totals.tokens,
        top_model=models[0] if models else None,
        models=models,
        plan_calls=totals.plan_calls,
        plan_api_value_usd=totals.plan_api_value_usd,
        capped_calls=totals.capped_calls,
        unpriced_models=[m.name for m in models if m.unpriced_calls],
        free_calls=totals.free_calls,
        plans=sorted(totals.plans),
    )


def _model_cost(name: str, key: str, t: Totals) -> ModelCost:
    return ModelCost(name, t.cost_usd, t.calls, t.estimated_usd, t.unpriced_calls, t.tokens.total, key,
                     t.plan_api_value_usd, t.plan_calls, t.free_calls)  # fmt: skip


def _by_cost(m: ModelCost) -> tuple:
    return (-m.cost_usd, -m.tokens, m.name)


def hourly_costs(ledger: Ledger, book: PriceBook, day: date) -> list[float]:
    """Cost per local hour of the day (24 values; 23 or 25 hours on DST days fold into 24 slots)."""
    start, end = day_bounds(day)
    pricer = Pricer(ledger, book)
    hours = [0.0] * 24
    for g in pricer.groups(start, end, by=("quarter",)):
        one = Totals()
        one.add(g, pricer)
        hours[datetime.fromtimestamp(g.by[0] / 1000).hour] += one.cost_usd
    return hours


def tool_words(tools: str | None) -> list[str]:
    words = []
    for name in (tools or "").split(","):
        if not name:
            continue
        word = "team" if name.startswith("team_") else TOOL_WORDS.get(name, name)
        if word not in words:
            words.append(word)
    return words


def _ms(iso: str | None) -> int | None:
    return int(datetime.fromisoformat(iso).timestamp() * 1000) if iso else None


def _agent_name(path: str) -> str:
    name = Path(path).name.removesuffix(".messages.json")
    return name.removeprefix("agent_")


def _state(status: str, last_ms: int | None, now_ms: int) -> str:
    if status in RUNNING:
        return "running" if last_ms and now_ms - last_ms < STALE_AFTER_MS else "stale"
    return status


def project_name(path: str | None) -> str:
    """A session's project: the last part of its workspace root (else its folder), whichever the
    separator (a ledger can hold sessions synced from another system). The one project rule: reports,
    the sessions list and the export use it."""
    if not path:
        return NO_PROJECT
    return re.split(r"[/\\]", path.rstrip("/\\"))[-1] or path


def display_title(title: str | None, prompt: str | None) -> str:
    """The session's title, else its first prompt without Cline's <user_input> wrapper; one line."""
    text = title or prompt or ""
    m = _USER_INPUT.match(text)
    if m:
        text = m.group(1)
    text = " ".join(text.split())
    return text or "(untitled session)"


AGENTS = ("subagent", "teammate")  # the calls of a file of their own, shown as the session's subagents
SUMMED = "subagents"  # an editor task's subagents' spend, summed by the task itself (one line in its messages)


def sessions(
    ledger: Ledger, book: PriceBook, since: date | None, until: date | None, now_ms: int | None = None
) -> list[SessionSummary]:
    """Sessions with calls (or a start) in [since, until]; figures for that range. None, None: all time.
    Newest first."""
    start = local_midnight_ms(since) if since else ALL_TIME[0]
    end = day_bounds(until)[1] if until else ALL_TIME[1]
    return newest_first(summaries(Pricer(ledger, book), ledger.sessions_between(start, end), start, end, now_ms))


def newest_first(summaries: Sequence[SessionSummary]) -> list[SessionSummary]:
    """Sessions by their start, the latest first (those that started together as given)."""
    return sorted(summaries, key=lambda s: _ms(s.started_at) or 0, reverse=True)


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
    return [summary(m, found.get(m.id, ()), pricer, now) for m in metas]


def summary(m: SessionRow, groups: Sequence[CostGroup], pricer: Pricer, now_ms: int) -> SessionSummary:
    """One session's figures from its calls' groups by (session, file, agent), in any order."""
    return _summary(m, sorted(groups, key=_order), pricer, now_ms)


def restated(s: SessionSummary, now_ms: int) -> SessionSummary:
    """The session as the clock shows it at `now_ms` (a running one falls stale once silent for long)."""
    state = _state(s.status, s.last_activity_ms, now_ms)
    return s if state == s.state else replace(s, state=state)


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
        if agent in AGENTS or agent == SUMMED:
            who = "(summed by the task)" if agent == SUMMED else _agent_name(file or "")
            sub = subs.setdefault(SUMMED if agent == SUMMED else file or "", Subagent(who, agent, 0, 0.0))
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
        free_calls=totals.free_calls,
        plans=sorted(totals.plans),
    )


def sessions_report(
    ledger: Ledger, book: PriceBook, since: date | None, until: date | None, now_ms: int | None = None
) -> list[SessionSummary]:
    """Sessions with calls (or a start) in [since, until]; figures for that range. None, None: all time.
    Two queries whatever the number of sessions (`sessions`)."""
    return sessions(ledger, book, since, until, now_ms)


def listed(
    ledger: Ledger, book: PriceBook, since: date | None, until: date | None, now_ms: int | None = None
) -> Iterator[SessionSummary]:
    """`sessions`, the same summaries in the same order, made one at a time for a list printed as it is made: the
    sessions' rows are read SESSION_CHUNK at a time and each one's groups let go once it is made (20,000 sessions
    held 60 MB at once as a list). The period's calls are still grouped in one query."""
    start = local_midnight_ms(since) if since else ALL_TIME[0]
    end = day_bounds(until)[1] if until else ALL_TIME[1]
    pricer = Pricer(ledger, book)
    found: dict[str, list[CostGroup]] = {}
    for g in pricer.groups(start, end, by=("session", "file", "agent")):
        found.setdefault(g.by[0], []).append(g)
    now = now_ms if now_ms is not None else int(time.time() * 1000)
    # newest first, those that started together in the ledger's order (as `sessions` sorts its summaries)
    order = sorted(ledger.session_starts(start, end), key=lambda r: _ms(iso_local(r[1])) or 0, reverse=True)
    for first in range(0, len(order), SESSION_CHUNK):
        ids = [sid for sid, _ in order[first : first + SESSION_CHUNK]]
        rows = ledger.sessions_by_id(ids)
        for sid in ids:
            m = rows.get(sid)
            if m is not None:  # (gone since: another process's ledger repair)
                yield _summary(m, sorted(found.pop(sid, ()), key=_order), pricer, now)


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
                cost.billing,
            )
        )
    s = summary
    start_ms = _ms(s.started_at)
    end_ms = _ms(s.ended_at) or s.last_activity_ms
    duration = (end_ms - start_ms) / 1000 if start_ms and end_ms and end_ms >= start_ms else None
    return SessionDetail(summary, calls, duration)
