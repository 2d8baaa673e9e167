"""The summary window's words for figures, and the day as it shows it: plain rows and strings, no tkinter.

The rows every table shows (`Row`: an id, the cell texts, and the values to sort by; `Column`) and the words for
amounts, times and marks that the day, period (period_rows.py) and session (detail_rows.py) share, so the views
only place text and the tests check the figures without a display. Every text from Cline's files (titles, prompts,
paths, model names) passes through `clean()`: one line, shortened, shown as text and never interpreted. The day:
its cards, its sessions (`session_rows`, a period's too), its cost per model. Never computes a figure.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from ..figures.costs import covered_by
from ..figures.day import DayReport, ModelCost, SessionSummary
from ..figures.money import Money
from ..words import NOT_PAID, UNPRICED_MARK, Covered, plan_text, plural, tokens

USD = Money()

TITLE_CHARS = 90  # in a table cell
PATH_CHARS = 72
NBSP = "\u00a0"  # a space a wrapped line never breaks at
ESTIMATE_MARK = "≈"  # before a cost in a table: "about", part or all of it estimated (the legend says so in words)
LEGEND = {
    ESTIMATE_MARK: "≈ includes an estimate from token counts (Cline reported no cost)",
    UNPRICED_MARK: "? some calls have no known price and are not counted",
}


class BadDay(ValueError):
    """A date the window cannot show; the message says what to type instead."""


@dataclass(frozen=True)
class Column:
    """A table column: its key, heading, width and how it sorts."""

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
    """A table row: its values, sort keys and tags."""

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


amount = Money.cents  # one precision for every amount shown (figures/money.py)


def estimate_note(money: Money, cost: float, estimated: float) -> str:
    """A cost card's words for its estimate, as the menu says it: "incl. $0.07 estimated"."""
    if not estimated:
        return "all reported by Cline"
    if estimated >= cost:
        return "all estimated from token counts"
    return f"incl. {amount(money, estimated)} estimated"


def cost_text(cost: float | None, estimated: float = 0.0, unpriced: int = 0, calls: int = 0, money: Money = USD) -> str:
    """A cost in a table, at the menu's precision (`amount`), with its marks: "≈" before it when part of it is
    estimated, "?" after it when some calls are unpriced (the table's legend says both in words); when none of
    the calls has a price it is "unpriced", never $0."""
    if calls and unpriced >= calls:
        return "unpriced"
    return (ESTIMATE_MARK if estimated else "") + amount(money, cost) + (UNPRICED_MARK if unpriced else "")


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
    columns: Sequence[Column] = DAY_COLUMNS,
) -> list[Row]:
    """`columns`: the day's (DAY_COLUMNS) or a period's (PERIOD_SESSION_COLUMNS, whose start has its date)."""
    keys = [c.key for c in columns]
    dated = columns is PERIOD_SESSION_COLUMNS
    return [_session_row(s, day, money, dated, keys) for s in sessions]


def _session_row(s: SessionSummary, day: date | None, money: Money, dated: bool, columns: list[str]) -> Row:
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
        "cost": (
            covered_by(s.calls, s.plan_calls, s.free_calls)
            or cost_text(s.cost_usd, s.estimated_cost_usd, s.unpriced_calls, s.calls, money),
            s.cost_usd,
        ),
    }
    tags = tuple(t for t in (s.state, "removed" if s.removed else "") if t)
    return Row(s.id, tuple(cells[k][0] for k in columns), tuple(cells[k][1] for k in columns), tags)


def day_totals(r: DayReport, money: Money = USD) -> tuple[str, ...]:
    return (
        "Total",
        plural(r.sessions, "session"),
        "",
        "",
        "",
        f"{r.calls:,}",
        tokens(r.tokens.total),
        cost_text(r.cost_usd, r.estimated_cost_usd, r.unpriced_calls, r.calls, money),
    )


def model_rows(r: DayReport, money: Money = USD) -> list[Row]:
    return [_model_row(m, money) for m in r.models]


def _model_row(m: ModelCost, money: Money) -> Row:
    values = (
        clean(m.name, 60),
        f"{m.calls:,}",
        tokens(m.tokens),
        NOT_PAID.get(m.billing or "") or cost_text(m.cost_usd, m.estimated_cost_usd, m.unpriced_calls, m.calls, money),
    )
    return Row(f"model:{m.name}", values, (m.name.casefold(), m.calls, m.tokens, m.cost_usd))


def day_cards(
    r: DayReport,
    sessions: Sequence[SessionSummary],
    money: Money = USD,
    budget: float | None = None,
    today: bool = False,
    machines: str | None = None,
    pace: str | None = None,
) -> list[tuple[str, str, str]]:
    """(caption, figure, note) for the strip above the table; with a daily budget, the cost card says
    how much of it is spent: "TODAY  $0.33  of $0.40 budget (82 %)"; with other machines held, the
    cost card also says the day's spend on all of them (`machines`: "All $4.20 on 3 machines (this one $1.10)")."""
    t = r.tokens
    estimated = estimate_note(money, r.cost_usd, r.estimated_cost_usd)
    if r.unpriced_calls:
        estimated += f" · {r.unpriced_calls} unpriced"
    if budget:  # the spend against the budget first, the estimate (if any) in words on the next line
        spent = budget_text(r.cost_usd, budget, money)
        estimated = f"{spent}\n{estimated}" if r.estimated_cost_usd or r.unpriced_calls else spent
    estimated = with_plan(estimated, r, money)
    if machines:
        estimated += f"\n{machines}"
    if pace:  # today's burn rate and where the day ends at it (`words.pace_text`)
        estimated = f"{estimated}\n{pace}" if estimated else pace
    per_session = f"{r.calls / r.sessions:.1f} per session" if r.sessions else "no sessions"
    return [
        ("Today" if today else "Cost", amount(money, r.cost_usd), estimated),
        ("Sessions", f"{len(sessions):,}", _states(sessions)),
        ("Calls", f"{r.calls:,}", per_session),
        ("Tokens", tokens(t.total), f"{tokens(t.cache_read)} cache read · {tokens(t.output)} out"),
    ]


def with_plan(note: str, covered: Covered, money: Money = USD) -> str:
    """A cost card's note with, on its own line, what a plan or a free model covered: beside the spend, never
    in it (`words.plan_text`, the menu's and the CLI's words)."""
    line = plan_text(covered, money.cents)
    return f"{note}\n{line}" if line else note


def budget_text(spent: float, budget: float, money: Money = USD, what: str = "budget") -> str:
    """ "of $0.40 budget (82 %)"; "(over 10×)" past ten times the budget, never five digits. The space before
    "%" does not break (a narrow card wraps the note before "(82 %)", not inside it)."""
    share = (budget_share(spent, budget) or 0.0) * 100
    part = f"over{NBSP}10×" if share > 1000 else f"{share:.0f}{NBSP}%"
    return f"of {amount(money, budget)} {what} ({part})"


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
