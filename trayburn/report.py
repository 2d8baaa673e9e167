"""The figures, as plain data: a day, a period, the sessions, one session in full.

Reads only the ledger (never Cline's files). Estimated costs are computed here, when read, so
better price data re-prices old calls.
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from pathlib import Path

from .days import day_bounds as day_bounds
from .days import iso_local as iso_local
from .days import local_midnight_ms as local_midnight_ms
from .days import now_date as now_date
from .days import timezone_name as timezone_name
from .days import utc_now_ms as utc_now_ms
from .ledger import ALL_TIME, Ledger, Sums
from .pricing import PriceBook

RUNNING = ("running", "pending", "idle")
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
class Tokens:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    @property
    def total(self) -> int:
        return self.input + self.output


@dataclass
class Totals:
    calls: int = 0
    tokens: Tokens = field(default_factory=Tokens)
    reported_usd: float = 0.0
    estimated_usd: float = 0.0
    unpriced_calls: int = 0

    @property
    def cost_usd(self) -> float:
        return self.reported_usd + self.estimated_usd

    def add(self, model: str | None, sums: Sums, book: PriceBook) -> None:
        """A group of calls with one model: reported costs as they are, the others estimated."""
        self.calls += sums.calls
        t = self.tokens
        t.input += sums.input
        t.output += sums.output
        t.cache_read += sums.cache_read
        t.cache_write += sums.cache_write
        self.reported_usd += sums.reported_usd
        if sums.unpriced_calls:
            est = book.estimate(
                model, sums.unpriced_input, sums.unpriced_output, sums.unpriced_cache_read, sums.unpriced_cache_write
            )
            if est is None:
                self.unpriced_calls += sums.unpriced_calls
            else:
                self.estimated_usd += est

    @classmethod
    def of(cls, model: str | None, sums: Sums, book: PriceBook) -> Totals:
        totals = cls()
        totals.add(model, sums, book)
        return totals


@dataclass
class ModelCost:
    name: str
    cost_usd: float
    calls: int
    estimated_cost_usd: float = 0.0
    unpriced_calls: int = 0
    tokens: int = 0


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

    def to_json(self) -> dict:
        out = asdict(self)
        out["tokens"] = asdict(self.tokens)
        slim = lambda m: {"name": m["name"], "cost_usd": _known_cost(m), "calls": m["calls"]}  # noqa: E731
        out["models"] = [slim(m) for m in out["models"]]
        out["top_model"] = slim(out["top_model"]) if out["top_model"] else None
        out["cost_usd"], out["estimated_cost_usd"] = _r(self.cost_usd), _r(self.estimated_cost_usd)
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

    @property
    def running(self) -> bool:
        return self.state == "running"

    def to_json(self) -> dict:
        out = asdict(self)
        out["cost_usd"], out["estimated_cost_usd"] = _known_cost(out), _r(self.estimated_cost_usd)
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


@dataclass
class SessionDetail:
    summary: SessionSummary
    calls: list[CallRow]
    duration_s: float | None

    def to_json(self) -> dict:
        out = self.summary.to_json()
        out["duration_s"] = self.duration_s
        out["calls_detail"] = [
            dict(asdict(c), cost_usd=None if c.cost_usd is None else _r(c.cost_usd)) for c in self.calls
        ]
        return out


def _r(usd: float) -> float:
    return round(usd, 9)  # nano-dollars: float noise goes, a cheap call's cost stays


def priced_cost(cost_usd: float, calls: int, unpriced_calls: int) -> float | None:
    """The cost to show for a group of calls: None ("unpriced", never $0) when none of them has a price.
    The one place this rule lives: JSON, the terminal, the menu and the window all use it."""
    return None if calls and unpriced_calls >= calls else cost_usd


def _known_cost(m: dict) -> float | None:
    cost = priced_cost(m["cost_usd"], m["calls"], m["unpriced_calls"])
    return None if cost is None else _r(cost)


# ---- reports ---------------------------------------------------------------------------------------


def totals_between(ledger: Ledger, book: PriceBook, start_ms: int, end_ms: int) -> Totals:
    totals = Totals()
    for row in ledger.model_sums(start_ms, end_ms):
        totals.add(row.model, row.sums, book)
    return totals


def day_report(ledger: Ledger, book: PriceBook, day: date) -> DayReport:
    start, end = day_bounds(day)
    totals, per_model = Totals(), dict[str, tuple[str, Totals]]()
    for row in ledger.model_sums(start, end):
        totals.add(row.model, row.sums, book)
        per_model.setdefault(book.key(row.model), (book.display(row.model), Totals()))[1].add(row.model, row.sums, book)
    models = sorted(
        (
            ModelCost(name, t.cost_usd, t.calls, t.estimated_usd, t.unpriced_calls, t.tokens.total)
            for name, t in per_model.values()
        ),
        key=lambda m: (-m.cost_usd, -m.tokens, m.name),
    )
    sessions = ledger.session_count(start, end)
    return DayReport(
        date=day.isoformat(),
        timezone=timezone_name(),
        cost_usd=totals.cost_usd,
        estimated_cost_usd=totals.estimated_usd,
        calls=totals.calls,
        sessions=sessions,
        unpriced_calls=totals.unpriced_calls,
        tokens=totals.tokens,
        top_model=models[0] if models else None,
        models=models,
    )


def hourly_costs(ledger: Ledger, book: PriceBook, day: date) -> list[float]:
    """Cost per local hour of the day (24 values; 23 or 25 hours on DST days fold into 24 slots)."""
    start, end = day_bounds(day)
    hours = [0.0] * 24
    for row in ledger.quarter_sums(start, end):
        hours[datetime.fromtimestamp(row.start_ms / 1000).hour] += Totals.of(row.model, row.sums, book).cost_usd
    return hours


def sessions_report(
    ledger: Ledger, book: PriceBook, since: date | None, until: date | None, now_ms: int | None = None
) -> list[SessionSummary]:
    """Sessions with calls (or a start) in [since, until]; figures for that range. None, None: all time."""
    start = local_midnight_ms(since) if since else 0
    end = day_bounds(until)[1] if until else 2**62
    out = [_summary(ledger, book, sid, start, end, now_ms) for sid in ledger.session_ids(start, end)]
    return sorted((s for s in out if s), key=lambda s: _ms(s.started_at) or 0, reverse=True)


def session_detail(ledger: Ledger, book: PriceBook, sid: str, now_ms: int | None = None) -> SessionDetail | None:
    summary = _summary(ledger, book, sid, *ALL_TIME, now_ms)
    if summary is None:
        return None
    calls = []
    for c in ledger.session_calls(sid):
        est = book.estimate(c.model, c.input, c.output, c.cache_read, c.cache_write) if c.cost is None else None
        calls.append(
            CallRow(
                iso_local(c.ts_ms) or "",
                c.ts_ms,
                book.display(c.model),
                c.agent or "lead",
                Tokens(c.input, c.output, c.cache_read, c.cache_write),
                c.cost if c.cost is not None else est,
                c.cost is None,
                tool_words(c.tools),
            )
        )
    s = summary
    start_ms = _ms(s.started_at)
    end_ms = _ms(s.ended_at) or s.last_activity_ms
    duration = (end_ms - start_ms) / 1000 if start_ms and end_ms and end_ms >= start_ms else None
    return SessionDetail(summary, calls, duration)


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


def _summary(
    ledger: Ledger, book: PriceBook, sid: str, start: int, end: int, now_ms: int | None
) -> SessionSummary | None:
    meta = ledger.session(sid)
    if meta is None:
        return None
    started = meta.started_ms
    totals, models, last = Totals(), [], started
    subs: dict[str, Subagent] = {}
    for part in ledger.session_parts(sid, start, end):
        totals.add(part.model, part.sums, book)
        name = book.display(part.model)
        if name not in models:
            models.append(name)
        last = max(last or 0, part.last_ms or 0)
        if part.agent in ("subagent", "teammate"):
            file = part.file or ""
            sub = subs.setdefault(file, Subagent(_agent_name(file), part.agent, 0, 0.0))
            cost = Totals.of(part.model, part.sums, book)
            sub.calls += cost.calls
            sub.cost_usd += cost.cost_usd
    if not models and meta.model:
        models.append(book.display(meta.model))
    now_ms = now_ms if now_ms is not None else int(time.time() * 1000)
    return SessionSummary(
        id=sid,
        title=display_title(meta.title, meta.prompt),
        project=_project(meta.workspace_root or meta.cwd),
        cwd=meta.cwd,
        status=meta.status,
        state=_state(meta.status, last or started, now_ms),
        started_at=iso_local(started),
        ended_at=iso_local(meta.ended_ms),
        models=models,
        calls=totals.calls,
        tokens=totals.tokens,
        cost_usd=totals.cost_usd,
        estimated_cost_usd=totals.estimated_usd,
        unpriced_calls=totals.unpriced_calls,
        subagents=sorted(subs.values(), key=lambda s: s.name),
        removed=meta.removed,
        folder=meta.folder,
        last_activity_ms=last,
    )


def _agent_name(path: str) -> str:
    name = Path(path).name.removesuffix(".messages.json")
    return name.removeprefix("agent_")


def _state(status: str, last_ms: int | None, now_ms: int) -> str:
    if status in RUNNING:
        return "running" if last_ms and now_ms - last_ms < STALE_AFTER_MS else "stale"
    return status


def _project(path: str | None) -> str | None:
    return Path(path).name or path if path else None


def display_title(title: str | None, prompt: str | None) -> str:
    """The session's title, else its first prompt without Cline's <user_input> wrapper; one line."""
    text = title or prompt or ""
    m = _USER_INPUT.match(text)
    if m:
        text = m.group(1)
    text = " ".join(text.split())
    return text or "(untitled session)"
