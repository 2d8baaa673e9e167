"""Budgets: the daily and monthly ones of the settings and those of named projects, each as how much of it is
spent and the level passed (80 % warns, 100 % is over). Never speaks SQL; the project's spend comes from the
one project rule (`day.project_name`, through `history.report(by="project")`).

The tray's marks and notices, `trayburn budget check`, `trayburn status`'s class and `report --by project`'s
budget column all read a `BudgetState`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Literal

from ..ledger import Ledger
from ..pricing import PriceBook
from .costs import Totals
from .history import HistoryReport, report
from .periods import Period

WARN, OVER = 80, 100  # the levels: a share of the budget spent, in per cent
Which = Literal["daily", "monthly"]


def level(spent_usd: float, budget_usd: float | None) -> int:
    """0, WARN (80 % spent) or OVER (100 %); 0 without a budget."""
    if not budget_usd:
        return 0
    return OVER if spent_usd >= budget_usd else WARN if spent_usd >= 0.8 * budget_usd else 0


@dataclass(frozen=True)
class BudgetState:
    """One budget: which (daily, monthly), whose (None: all spend; else a project), its spend and level."""

    which: Which
    project: str | None
    budget_usd: float
    spent_usd: float

    @property
    def level(self) -> int:
        return level(self.spent_usd, self.budget_usd)

    @property
    def share(self) -> float:
        return self.spent_usd / self.budget_usd

    @property
    def percent(self) -> str:
        """ "82 %"; "over 10×" past ten times the budget (never "103281 %")."""
        return "over 10×" if self.share > 10 else f"{self.share * 100:.0f} %"

    @property
    def name(self) -> str:
        """ "the daily budget", "project web's monthly budget"."""
        return f"the {self.which} budget" if self.project is None else f"project {self.project}'s {self.which} budget"

    def to_json(self) -> dict:
        return {
            "which": self.which,
            "project": self.project,
            "budget_usd": self.budget_usd,
            "spent_usd": round(self.spent_usd, 6),
            "share": round(self.share, 6),
            "level": self.level,
        }


def overall(daily: float | None, monthly: float | None, day_usd: float, month_usd: float) -> list[BudgetState]:
    """The settings' daily and monthly budgets (those set)."""
    out = [BudgetState("daily", None, daily, day_usd)] if daily else []
    return out + ([BudgetState("monthly", None, monthly, month_usd)] if monthly else [])


def per_project(
    budgets: Mapping[str, Mapping[str, float]], spend: Mapping[str, tuple[float, float]]
) -> list[BudgetState]:
    """Each named project's budgets (`project_budgets`), against its (today, this month) spend."""
    out = []
    for project, set_ in sorted(budgets.items()):
        day_usd, month_usd = spend.get(project, (0.0, 0.0))
        for which, spent in (("daily", day_usd), ("monthly", month_usd)):
            if set_.get(which):
                out.append(BudgetState(which, project, set_[which], spent))  # type: ignore[arg-type]
    return out


def project_spend(
    ledger: Ledger, book: PriceBook, today: date, projects: Iterable[str]
) -> dict[str, tuple[float, float]]:
    """(today's, this month's) spend of each of these projects (read only when one has a budget)."""
    wanted = set(projects)
    if not wanted:
        return {}
    day = report(ledger, book, Period(today, today, "day"), by="project")
    month = report(ledger, book, Period(today.replace(day=1), today, "month"), by="project")
    spent_day = {g.key: g.totals.cost_usd for g in day.rows}
    return {g.key: (spent_day.get(g.key, 0.0), g.totals.cost_usd) for g in month.rows if g.key in wanted}


def project_spend_of(today: HistoryReport, month_before: Mapping[str, Totals]) -> dict[str, tuple[float, float]]:
    """(today's, this month's) spend of the projects of `month_before` and of today's report by project (a tray's
    kept month before today, `figures.glance.Basis`, and today's part of it), as `project_spend` gives them."""
    day = {g.key: g.totals for g in today.rows}
    out = {}
    for key in {*month_before, *day}:
        month = Totals()
        for part in (month_before.get(key), day.get(key)):
            if part is not None:
                month.merge(part)
        out[key] = (day[key].cost_usd if key in day else 0.0, month.cost_usd)
    return out


def worst(states: Iterable[BudgetState]) -> BudgetState | None:
    """The budget nearest to (or furthest past) its end: the highest level, then the largest share."""
    return max(states, key=lambda s: (s.level, s.share), default=None)


def for_period(budgets: Mapping[str, float], period: Period) -> tuple[Which, float] | None:
    """The budget a period of `report` is measured against: a day's daily budget; a month from its 1st (to its
    end or to today), the monthly; none for another period (a week, a range across months)."""
    if period.since == period.until and budgets.get("daily"):
        return "daily", budgets["daily"]
    same_month = (period.since.year, period.since.month) == (period.until.year, period.until.month)
    if same_month and period.since.day == 1 and budgets.get("monthly"):
        return "monthly", budgets["monthly"]
    return None
