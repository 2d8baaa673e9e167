"""A period of the summary window (a week, a month, a range of days) as plain rows and strings: no tkinter.

From `history.overview` (by day, project, model and source), the split by machine and the period's sessions: its
cards, its tables' rows and totals, the bars of its chart of cost per day, with the budgets of the settings (a
month is measured against `monthly_budget` and, while it runs, projected to its end along a straight line, marked
as a projection); and the period as it is written in, and typed into, the date field. Never computes a figure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from ..figures import periods
from ..figures.costs import Totals, covered_by
from ..figures.day import SessionSummary
from ..figures.history import Group, HistoryReport, MachineCost, MachinesReport
from ..figures.money import Money
from ..words import plural, tokens
from .models import USD, Column, Row, amount, budget_share, budget_text, clean, cost_text, estimate_note, with_plan

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
    """One day's bar of a period's chart."""

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
