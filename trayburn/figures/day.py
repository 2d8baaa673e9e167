"""The figures, as plain data: a day, a period, the sessions, one session in full.

Reads only the ledger (never Cline's files). Costs come from `costs.Pricer`: estimated when read,
so better price data re-prices old calls; grouped by model key, named by `PriceBook.name_of`.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from pathlib import Path

from ..ledger import Ledger
from ..pricing import PriceBook
from .costs import Pricer, Tokens, Totals, priced_cost
from .periods import day_bounds as day_bounds
from .periods import iso_local as iso_local
from .periods import local_midnight_ms as local_midnight_ms
from .periods import now_date as now_date
from .periods import timezone_name as timezone_name
from .periods import utc_now_ms as utc_now_ms

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
    name: str
    cost_usd: float
    calls: int
    estimated_cost_usd: float = 0.0
    unpriced_calls: int = 0
    tokens: int = 0
    key: str = ""  # the canonical model key (`glm-4-6`) the row groups by
    plan_api_value_usd: float = 0.0


@dataclass
class DayReport:
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
    # calls a plan covered (cost 0 on a plan route, ClinePass) and their tokens' list price: shown
    # beside the spend ("covered by plan, API value $X"), never in cost_usd
    plan_calls: int = 0
    plan_api_value_usd: float = 0.0
    capped_calls: int = 0  # estimates held at MAX_COST per call (absurd token counts)
    unpriced_models: list[str] = field(default_factory=list)  # names of the models with unpriced calls

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
    name: str
    kind: str  # subagent | teammate
    calls: int
    cost_usd: float


@dataclass
class SessionSummary:
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


@dataclass
class SessionDetail:
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


def day_report(ledger: Ledger, book: PriceBook, day: date) -> DayReport:
    start, end = day_bounds(day)
    pricer = Pricer(ledger, book)
    totals, per_model = Totals(), dict[str, Totals]()
    for g in pricer.groups(start, end):
        totals.add(g, pricer)
        per_model.setdefault(pricer.key(g.route), Totals()).add(g, pricer)
    models = sorted((_model_cost(book.name_of(k), k, t) for k, t in per_model.items()), key=_by_cost)
    return DayReport(
        date=day.isoformat(),
        timezone=timezone_name(),
        cost_usd=totals.cost_usd,
        estimated_cost_usd=totals.estimated_usd,
        calls=totals.calls,
        sessions=ledger.session_count(start, end),
        unpriced_calls=totals.unpriced_calls,
        tokens=totals.tokens,
        top_model=models[0] if models else None,
        models=models,
        plan_calls=totals.plan_calls,
        plan_api_value_usd=totals.plan_api_value_usd,
        capped_calls=totals.capped_calls,
        unpriced_models=[m.name for m in models if m.unpriced_calls],
    )


def _model_cost(name: str, key: str, t: Totals) -> ModelCost:
    return ModelCost(name, t.cost_usd, t.calls, t.estimated_usd, t.unpriced_calls, t.tokens.total, key,
                     t.plan_api_value_usd)  # fmt: skip


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
