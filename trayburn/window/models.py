"""What each view of the summary window shows, as plain rows and strings: no tkinter here.

Each function turns an engine report into display rows (`Row`: an id, the cell texts, and the values to sort
by), so the views only place text and the tests check the figures without a display. Every text from Cline's
files (titles, prompts, paths, model names) passes through `clean()`: one line, shortened, shown as text and
never interpreted.

- The day: its cards, sessions (`session_rows`), cost per model and per hour.
- A period (a week, a month, a range): from `history.overview` (by day, project, model and source) and the
  period's sessions, its cards, table rows and the bars of the cost-per-day chart, with the budgets of the
  settings: a month is measured against `monthly_budget` and, while it runs, projected to its end along a
  straight line (marked as a projection).
- One session: its facts, figures, helpers (subagents) and calls.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from ..figures import periods
from ..figures.costs import Totals, covered_by
from ..figures.day import CallRow, DayReport, ModelCost, SessionDetail, SessionSummary, Subagent
from ..figures.history import Group, HistoryReport, MachineCost, MachinesReport
from ..figures.money import Money
from ..words import NOT_PAID, UNPRICED_MARK, Covered, plan_text, plural, tokens

USD = Money()

TITLE_CHARS = 90  # in a table cell
HEADING_CHARS = 240  # a session's title above its figures
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


GROUP_TABLES = (("project", "BY PROJECT", "Project"), ("model", "BY MODEL", "Model"), ("source", "BY SOURCE", "Source"))
_RANGE = re.compile(r"^\s*(\S+)\s*(?:\.\.|–|—|\bto\b)\s*(\S+)\s*$")
_MONTH = re.compile(r"^\s*(\d{4})-(\d{2})\s*$")


def group_columns(heading: str) -> tuple[Column, ...]:
    return (
        Column("name", heading, 14, stretch=True),
        Column("sessions", "Sessions", 8, numeric=True),
        Column("cost", "Cost", 9, numeric=True),
    )


@dataclass(frozen=True)
class Bar:
    day: date
    cost_usd: float
    calls: int


# ---- the period's name and what can be typed ------------------------------------------------------------


def entry_text(p: periods.Period) -> str:
    """The period as it is shown (and can be typed back) in the date field."""
    if p.kind == "month":
        return f"{p.since:%Y-%m}"
    if p.kind in ("day", "week"):
        return p.since.isoformat()
    return f"{p.since.isoformat()}..{p.until.isoformat()}"


def parse_entry(text: str, kind: str, today: date) -> periods.Period:
    """What a person typed: a range ("2026-11-01..2026-11-15", "last-month to today"), a word (7d, week,
    last-month…), a month (2026-11), or a date (the day, week or month holding it, as shown now)."""
    m = _RANGE.match(text)
    if m:
        first, last = periods.named(m.group(1), today), periods.named(m.group(2), today)
        return periods.Period(first.since, last.until, "range")
    m = _MONTH.match(text)
    if m:
        try:
            return periods.month_of(date(int(m.group(1)), int(m.group(2)), 1))
        except ValueError:
            raise periods.BadPeriod(f"'{clean(text, 40)}' is not a month: type it as YYYY-MM, e.g. 2026-11") from None
    try:
        day = periods.parse_date(text)
    except periods.BadPeriod:
        named = periods.named(text, today)  # a word, or BadPeriod saying what to type
        return named if named.kind != "range" or named.days > 1 else periods.day_of(named.since)
    return periods.of_kind(kind if kind in ("day", "week", "month") else "day", day)


# ---- cards and budget ---------------------------------------------------------------------------------


def projection(p: periods.Period, spent_usd: float, today: date) -> float | None:
    """The month's spend at its end if it goes on as it went so far (a straight line through the days
    gone, today counted whole); None unless the period is a month that is under way."""
    if p.kind != "month" or not p.contains(today):
        return None
    gone = (today - p.since).days + 1
    return spent_usd / gone * p.days


def period_cards(
    total: Group,
    sessions: Sequence[SessionSummary],
    p: periods.Period,
    today: date,
    money: Money = USD,
    daily_budget: float | None = None,
    monthly_budget: float | None = None,
    plan: Totals | None = None,
) -> list[tuple[str, str, str]]:
    t = total.totals
    cost_note = estimate_note(money, t.cost_usd, t.estimated_usd)
    if t.unpriced_calls:
        cost_note += f" · {t.unpriced_calls} unpriced"
    budget = month_budget(p, monthly_budget)
    if budget:  # the spend against the budget first, the estimate (if any) in words on the next line
        spent = budget_text(t.cost_usd, budget, money)
        cost_note = f"{spent}\n{cost_note}" if t.estimated_usd or t.unpriced_calls else spent
    covered = plan or t
    cost_note = with_plan(cost_note, covered, money)
    days = min(p.days, max((today - p.since).days + 1, 1)) if p.contains(today) else p.days
    ahead = projection(p, t.cost_usd, today)
    if ahead is not None:
        note = f"projection: a straight line from {days} of {p.days} days"
        if budget and ahead > budget:
            note += f" · over the budget by {amount(money, ahead - budget)}"
        second = ("Projected", amount(money, ahead), note)
    else:
        per_day = t.cost_usd / days
        note = f"over {days} day{'s' if days != 1 else ''}"
        if daily_budget:
            note += f" · daily budget {amount(money, daily_budget)}"
        second = ("Per day", amount(money, per_day), note)
    per_session = f"{t.calls / total.sessions:.1f} per session" if total.sessions else "no sessions"
    return [
        ("Cost", amount(money, t.cost_usd), cost_note),
        second,
        ("Sessions", f"{len(sessions):,}", f"{t.calls:,} calls · {per_session}"),
        ("Tokens", tokens(t.tokens.total), f"{tokens(t.tokens.cache_read)} cache read · {tokens(t.tokens.output)} out"),
    ]


def month_budget(p: periods.Period, monthly_budget: float | None) -> float | None:
    return monthly_budget if monthly_budget and p.kind == "month" else None


def budget_progress(
    p: periods.Period, spent_usd: float, daily_budget: float | None, monthly_budget: float | None
) -> float | None:
    """The share of the budget spent, for a progress bar: a day against `daily_budget`, a month against
    `monthly_budget`; None when no budget applies."""
    if p.kind == "day":
        return budget_share(spent_usd, daily_budget)
    return budget_share(spent_usd, month_budget(p, monthly_budget))


# ---- chart and tables ---------------------------------------------------------------------------------


def bars(days: HistoryReport) -> list[Bar]:
    return [Bar(g.since, g.totals.cost_usd, g.totals.calls) for g in days.rows if g.since is not None]


def group_rows(r: HistoryReport, money: Money = USD) -> list[Row]:
    return [_group_row(g, r.by, money) for g in r.rows]


def _group_row(g: Group, by: str, money: Money) -> Row:
    t = g.totals
    values = (
        clean(g.label, 60),
        f"{g.sessions:,}",
        covered_by(t.calls, t.plan_calls, t.free_calls)
        or cost_text(t.cost_usd, t.estimated_usd, t.unpriced_calls, t.calls, money),
    )
    return Row(f"{by}:{g.key}", values, (g.label.casefold(), g.sessions, t.cost_usd))


MACHINE_COLUMNS = (
    Column("name", "Machine", 14, stretch=True),
    Column("calls", "Calls", 7, numeric=True),
    Column("cost", "Cost", 9, numeric=True),
)


def machine_rows(r: MachinesReport, money: Money = USD) -> list[Row]:
    """The "By machine" tab: this machine named as such, a machine whose file left sync_dir marked;
    empty while no other machine is held (the tab is then hidden)."""
    if not r.shared:
        return []
    return [_machine_row(m, money) for m in r.machines]


def _machine_row(m: MachineCost, money: Money) -> Row:
    name = clean(m.name, 40) + (" (this one)" if m.this else "") + (" (file gone; history kept)" if m.file_gone else "")
    cost = cost_text(m.cost_usd, m.estimated_cost_usd, m.unpriced_calls, m.calls, money)
    return Row(f"machine:{m.id or 'this'}", (name, f"{m.calls:,}", cost), (name.casefold(), m.calls, m.cost_usd))


def period_totals(total: Group, money: Money = USD) -> tuple[str, ...]:
    t = total.totals
    cost = cost_text(t.cost_usd, t.estimated_usd, t.unpriced_calls, t.calls, money)
    return ("Total", plural(total.sessions, "session"), "", f"{t.calls:,}", cost)


def bar_label(bar: Bar, money: Money = USD) -> str:
    return f"{bar.day:%a} {bar.day.day} {bar.day:%b}   {amount(money, bar.cost_usd)}   {bar.calls:,} calls"


CALL_COLUMNS = (
    Column("n", "#", 4, numeric=True),
    Column("time", "Time", 8, whole=True),
    Column("agent", "Agent", 9),
    Column("model", "Model", 17),
    Column("input", "In", 8, numeric=True),
    Column("output", "Out", 7, numeric=True),
    Column("cache_read", "Cache read", 10, numeric=True),
    Column("cache_write", "Cache write", 10, numeric=True),
    Column("cost", "Cost", 9, numeric=True),
    Column("tools", "Tools used", 18, stretch=True),
)
SUBAGENT_COLUMNS = (
    Column("name", "Agent", 24, stretch=True),
    Column("kind", "Kind", 10),
    Column("calls", "Calls", 6, numeric=True),
    Column("cost", "Cost", 9, numeric=True),
)


def call_rows(d: SessionDetail, money: Money = USD) -> list[Row]:
    """A session's calls in order. Their cost column is the one place the window writes fractions of a cent: a
    call costs less than a cent more often than not, a call's cost is shown nowhere else, and which call cost
    what is what the list is read for; so the column has one precision (`Money.decimals`: four decimals when a
    call is under a cent), with "≈" before an estimated call's cost."""
    decimals = money.decimals(c.cost_usd for c in d.calls)
    return [_call_row(n, c, money, decimals) for n, c in enumerate(d.calls, 1)]


def _call_row(n: int, c: CallRow, money: Money, decimals: int) -> Row:
    t = c.tokens
    cost = NOT_PAID.get(c.billing) or money.text(c.cost_usd, False, decimals)
    if c.estimated and c.cost_usd is not None:
        cost = ESTIMATE_MARK + cost
    tools = ", ".join(c.tools) or "–"
    values = (
        str(n),
        clock(c.time, seconds=True),
        c.agent,
        clean(c.model, 60),
        f"{t.input:,}",
        f"{t.output:,}",
        f"{t.cache_read:,}",
        f"{t.cache_write:,}",
        cost,
        clean(tools, 80),
    )
    keys = (
        n,
        c.ts_ms,
        c.agent,
        c.model.casefold(),
        t.input,
        t.output,
        t.cache_read,
        t.cache_write,
        -1.0 if c.cost_usd is None else c.cost_usd,
        tools,
    )
    return Row(f"call:{n}", values, keys, (c.agent,) if c.agent != "lead" else ())


def subagent_rows(s: SessionSummary, money: Money = USD) -> list[Row]:
    names = helper_names(s.subagents)
    return [_subagent_row(a, name, money) for a, name in zip(s.subagents, names, strict=True)]


def helper_names(helpers: Sequence[Subagent]) -> list[str]:
    """How helpers are named to a person: "Subagent 1", "Subagent 2" (their ids are random), a teammate by
    the name it was given (`<name>__<task>`), numbered when the name repeats."""
    names, counts = [], {"subagent": 0}
    for a in helpers:
        if a.kind == "subagents":  # an editor task's subagents, summed by the task
            names.append("Subagents (together)")
        elif a.kind == "teammate":
            base = a.name.split("__", 1)[0] or "teammate"
            counts[base] = counts.get(base, 0) + 1
            names.append(base if counts[base] == 1 else f"{base} {counts[base]}")
        else:
            counts["subagent"] += 1
            names.append(f"Subagent {counts['subagent']}")
    return names


def _subagent_row(a: Subagent, name: str, money: Money) -> Row:
    values = (clean(name, 60), a.kind, f"{a.calls:,}", amount(money, a.cost_usd))
    return Row(f"agent:{a.name}", values, (name.casefold(), a.kind, a.calls, a.cost_usd))


FACT_LABELS = ("Status", "Project", "Folder", "Models", "Started", "Ended", "Duration", "Session id")


def session_facts(d: SessionDetail) -> list[tuple[str, str]]:
    """(label, value) pairs in FACT_LABELS order (the view reads them down, then across)."""
    s = d.summary
    status = s.state + ("  (removed from disk; still counted)" if s.removed else "")
    return [
        ("Status", status),
        ("Project", clean(s.project or "–", 60)),
        ("Folder", short_path(s.cwd or "–")),
        ("Models", clean(", ".join(s.models) or "–", PATH_CHARS)),
        ("Started", when(s.started_at)),
        ("Ended", when(s.ended_at) if s.ended_at else ("still running" if s.running else "–")),
        ("Duration", duration(d.duration_s)),
        ("Session id", s.id),
    ]


def session_cards(d: SessionDetail, money: Money = USD) -> list[tuple[str, str, str]]:
    s, t = d.summary, d.summary.tokens
    reported = s.cost_usd - s.estimated_cost_usd
    note = estimate_note(money, s.cost_usd, s.estimated_cost_usd)
    if 0 < s.estimated_cost_usd < s.cost_usd:
        note = f"reported {amount(money, reported)} · {note}"
    if s.unpriced_calls:
        note += f" · {s.unpriced_calls} unpriced"
    note = with_plan(note, s, money)
    return [
        ("Cost", amount(money, s.cost_usd), note),
        ("Calls", f"{s.calls:,}", _agents_note(s)),
        ("Tokens in", tokens(t.input), f"{t.input:,}"),
        ("Tokens out", tokens(t.output), f"{t.output:,}"),
        ("Cache read", tokens(t.cache_read), f"{t.cache_read:,}"),
        ("Cache write", tokens(t.cache_write), f"{t.cache_write:,}"),
    ]


def _agents_note(s: SessionSummary) -> str:
    if not s.subagents:
        return "lead agent only"
    kinds = {a.kind for a in s.subagents}
    word = "helpers" if len(kinds) > 1 else f"{kinds.pop()}s"
    return f"with {len(s.subagents)} {word}" if len(s.subagents) > 1 else f"with 1 {word[:-1]}"
