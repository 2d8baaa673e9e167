"""What the summary window shows, as plain rows and strings: no tkinter here.

Each function turns an engine report into display rows (`Row`: an id, the cell texts, and the
values to sort by), so the view only places text and the tests can check the figures without a
display. Every text from Cline's files (titles, prompts, paths, model names) passes through
`clean()`: one line, shortened, shown as text and never interpreted.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from ..figures.day import DayReport, ModelCost, SessionSummary
from ..figures.money import Money
from ..render import UNPRICED_MARK, plan_text, tokens

USD = Money()

TITLE_CHARS = 90  # in a table cell
HEADING_CHARS = 240  # a session's title above its figures
PATH_CHARS = 72
ESTIMATE_MARK = "*"
LEGEND = {
    ESTIMATE_MARK: "* includes an estimate from token counts (Cline reported no cost)",
    UNPRICED_MARK: "? some calls have no known price and are not counted",
}


class BadDay(ValueError):
    """A date the window cannot show; the message says what to type instead."""


@dataclass(frozen=True)
class Column:
    key: str
    heading: str
    chars: int  # width in average characters
    numeric: bool = False  # right-aligned, sorted by number, biggest first
    stretch: bool = False
    whole: bool = False  # never narrowed (figures are never narrowed either)

    @property
    def fixed(self) -> bool:
        return self.numeric or self.whole


@dataclass(frozen=True)
class Row:
    iid: str
    values: tuple[str, ...]
    keys: tuple[Any, ...]  # what each column sorts by
    tags: tuple[str, ...] = field(default=(), compare=True)


DAY_COLUMNS = (
    Column("start", "Start", 6, whole=True),
    Column("title", "Session", 34, stretch=True),
    Column("project", "Project", 13),
    Column("models", "Model", 16),
    Column("status", "Status", 9),
    Column("calls", "Calls", 5, numeric=True),
    Column("tokens", "Tokens", 7, numeric=True),
    Column("cost", "Cost", 8, numeric=True),
)
PERIOD_SESSION_COLUMNS = (  # the sessions of several days, beside the tables by project, model and source
    Column("start", "Start", 12, whole=True),
    Column("title", "Session", 24, stretch=True),
    Column("project", "Project", 12),
    Column("calls", "Calls", 5, numeric=True),
    Column("cost", "Cost", 9, numeric=True),
)
MODEL_COLUMNS = (
    Column("model", "Model", 18, stretch=True),
    Column("calls", "Calls", 6, numeric=True),
    Column("tokens", "Tokens", 8, numeric=True),
    Column("cost", "Cost", 9, numeric=True),
)
# ---- text ------------------------------------------------------------------------------------------


def clean(text: object, width: int = TITLE_CHARS) -> str:
    """One line of plain text, at most `width` characters (an ellipsis marks the cut)."""
    raw = str(text or "")
    if not raw.isprintable():  # the usual title is printable: no control or separator character to replace
        raw = "".join(" " if unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp") else ch for ch in raw)
    line = " ".join(raw.split())
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"


def short_path(path: object, width: int = PATH_CHARS) -> str:
    """A path shortened in the middle, keeping its start and its last folders."""
    text = clean(path, 10**6)
    if len(text) <= width:
        return text
    keep = width - 1
    return text[: keep // 3].rstrip() + "…" + text[len(text) - (keep - keep // 3) :]


def cost_text(
    cost: float | None,
    estimated: float = 0.0,
    unpriced: int = 0,
    calls: int = 0,
    money: Money = USD,
    decimals: int | None = None,
) -> str:
    """A cost with its marks (* estimated, ? some unpriced); when none of the calls has a price it is
    "unpriced", never $0. `decimals`: the precision of the cost's column (`Money.decimals`)."""
    if calls and unpriced >= calls:
        return "unpriced"
    return money.text(cost, bool(estimated), decimals) + (UNPRICED_MARK if unpriced else "")


def clock(iso: str | None, seconds: bool = False) -> str:
    if not iso:
        return "–"
    return datetime.fromisoformat(iso).strftime("%H:%M:%S" if seconds else "%H:%M")


def dated_start(iso: str | None) -> str:
    """ "30 Nov 08:19": a start in a list of several days."""
    if not iso:
        return "–"
    started = datetime.fromisoformat(iso)
    return f"{started.day:2d} {started:%b %H:%M}"


def start_text(iso: str | None, day: date | None) -> str:
    """The start time; the start date instead for a session begun on another day."""
    if not iso:
        return "–"
    started = datetime.fromisoformat(iso)
    return clock(iso) if day is None or started.date() == day else f"{started.day} {started:%b}"


def when(iso: str | None) -> str:
    if not iso:
        return "–"
    return datetime.fromisoformat(iso).strftime("%Y-%m-%d %H:%M:%S")


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def day_heading(day: date) -> str:
    return f"{day:%A} {day.day} {day:%B %Y}"


def parse_day(value: object) -> date:
    """A date from the command line or the date field; BadDay with a plain message otherwise."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    text = str(value or "").strip()
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise BadDay(f"“{clean(text, 40)}” is not a date: type it as YYYY-MM-DD, e.g. 2026-11-30") from None


# ---- the day ---------------------------------------------------------------------------------------


def session_rows(
    sessions: Sequence[SessionSummary],
    day: date | None = None,
    money: Money = USD,
    decimals: int | None = None,
    columns: Sequence[Column] = DAY_COLUMNS,
) -> list[Row]:
    """`decimals`: the cost column's precision (default: what these sessions need); `columns`: the day's
    (DAY_COLUMNS) or a period's (PERIOD_SESSION_COLUMNS, whose start has its date)."""
    if decimals is None:
        decimals = money.decimals(s.cost_usd for s in sessions)
    keys = [c.key for c in columns]
    dated = columns is PERIOD_SESSION_COLUMNS
    return [_session_row(s, day, money, decimals, dated, keys) for s in sessions]


def _session_row(
    s: SessionSummary, day: date | None, money: Money, decimals: int, dated: bool, columns: list[str]
) -> Row:
    status = s.state + (" (removed)" if s.removed else "")
    models = ", ".join(s.models) or "–"
    started = datetime.fromisoformat(s.started_at).timestamp() if s.started_at else 0.0
    cells = {  # column: (text, what it sorts by)
        "start": (dated_start(s.started_at) if dated else start_text(s.started_at, day), started),
        "title": (clean(s.title), s.title.casefold()),
        "project": (clean(s.project or "–", 40), (s.project or "").casefold()),
        "models": (clean(models, 60), models.casefold()),
        "status": (status, status),
        "calls": (f"{s.calls:,}", s.calls),
        "tokens": (tokens(s.tokens.total), s.tokens.total),
        "cost": (cost_text(s.cost_usd, s.estimated_cost_usd, s.unpriced_calls, s.calls, money, decimals), s.cost_usd),
    }
    tags = tuple(t for t in (s.state, "removed" if s.removed else "") if t)
    return Row(s.id, tuple(cells[k][0] for k in columns), tuple(cells[k][1] for k in columns), tags)


def day_totals(r: DayReport, money: Money = USD, decimals: int | None = None) -> tuple[str, ...]:
    plural = "" if r.sessions == 1 else "s"
    return (
        "Total",
        f"{r.sessions} session{plural}",
        "",
        "",
        "",
        f"{r.calls:,}",
        tokens(r.tokens.total),
        cost_text(r.cost_usd, r.estimated_cost_usd, r.unpriced_calls, r.calls, money, decimals),
    )


def model_rows(r: DayReport, money: Money = USD) -> list[Row]:
    decimals = money.decimals(m.cost_usd for m in r.models)
    return [_model_row(m, money, decimals) for m in r.models]


def _model_row(m: ModelCost, money: Money, decimals: int) -> Row:
    values = (
        clean(m.name, 60),
        f"{m.calls:,}",
        tokens(m.tokens),
        cost_text(m.cost_usd, m.estimated_cost_usd, m.unpriced_calls, m.calls, money, decimals),
    )
    return Row(f"model:{m.name}", values, (m.name.casefold(), m.calls, m.tokens, m.cost_usd))


def day_cards(
    r: DayReport,
    sessions: Sequence[SessionSummary],
    money: Money = USD,
    budget: float | None = None,
    today: bool = False,
    machines: str | None = None,
) -> list[tuple[str, str, str]]:
    """(caption, figure, note) for the strip above the table; with a daily budget, the cost card says
    how much of it is spent: "TODAY  $0.33  of $0.40 budget (82 %)"; with other machines held, the
    cost card also says the day's spend on all of them (`machines`: "All $4.20 on 3 machines (this one $1.10)")."""
    t = r.tokens
    estimated = f"{money.text(r.estimated_cost_usd)} estimated" if r.estimated_cost_usd else "all reported by Cline"
    if r.unpriced_calls:
        estimated += f" · {r.unpriced_calls} unpriced"
    if budget:  # the estimate, if any, is marked on the figure and explained by the legend
        estimated = budget_text(r.cost_usd, budget, money)
    estimated = with_plan(estimated, r.plan_calls, r.plan_api_value_usd, money)
    if machines:
        estimated += f"\n{machines}"
    per_session = f"{r.calls / r.sessions:.1f} per session" if r.sessions else "no sessions"
    return [
        ("Today" if today else "Cost", money.text(r.cost_usd, bool(budget and r.estimated_cost_usd)), estimated),
        ("Sessions", f"{len(sessions):,}", _states(sessions)),
        ("Calls", f"{r.calls:,}", per_session),
        ("Tokens", tokens(t.total), f"{tokens(t.cache_read)} cache read · {tokens(t.output)} out"),
    ]


def with_plan(note: str, plan_calls: int, plan_value_usd: float, money: Money = USD) -> str:
    """A cost card's note with, on its own line, what a plan covered: beside the spend, never in it."""
    plan = plan_text(plan_calls, plan_value_usd, money)
    return f"{note}\n{plan}" if plan else note


def budget_text(spent: float, budget: float, money: Money = USD, what: str = "budget") -> str:
    """ "of $0.40 budget (82 %)"; "(over 10×)" past ten times the budget, never five digits."""
    share = (budget_share(spent, budget) or 0.0) * 100
    return f"of {money.text(budget)} {what} ({'over 10×' if share > 1000 else f'{share:.0f} %'})"


def budget_share(spent: float, budget: float | None) -> float | None:
    """How much of the budget is spent (1.0 = all of it), or None without a budget."""
    return spent / budget if budget else None


def _states(sessions: Sequence[SessionSummary]) -> str:
    """The sessions that did not simply complete: "1 running · 4 failed"."""
    counts: dict[str, int] = {}
    for s in sessions:
        counts[s.state] = counts.get(s.state, 0) + 1
    if not sessions:
        return "none"
    if set(counts) == {"completed"}:
        return "all completed"
    order = ("running", "failed", "cancelled", "stale")
    others = sorted(k for k in counts if k not in order and k != "completed")
    return " · ".join(f"{counts[k]} {k}" for k in (*order, *others) if k in counts)


def legend(texts: Sequence[str]) -> str:
    return "    ".join(line for mark, line in LEGEND.items() if any(mark in t for t in texts))


def hour_label(hour: int) -> str:
    return f"{hour:02d}:00–{(hour + 1) % 24:02d}:00"


# ---- sorting ---------------------------------------------------------------------------------------


def sort_rows(rows: Sequence[Row], column: int, descending: bool) -> list[Row]:
    """Stable sort by one column; the row id breaks ties so the order never flickers."""
    return sorted(rows, key=lambda r: (_sortable(r.keys[column]), r.iid), reverse=descending)


def _sortable(value: Any) -> tuple:
    if value is None:
        return (0, 0)
    if isinstance(value, (int, float)):
        return (1, value)
    return (2, str(value))
