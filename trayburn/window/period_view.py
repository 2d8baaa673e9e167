"""The period view: a week, a month or a range of days — its figures, a bar of cost per day (click one
to open that day), its sessions, and its spend by project, by model and by source."""

from __future__ import annotations

import tkinter as tk
from collections.abc import Callable, Mapping, Sequence
from datetime import date
from tkinter import ttk

from ..figures import periods as pd
from ..figures.costs import Totals
from ..figures.day import SessionSummary
from ..figures.history import HistoryReport, MachinesReport
from ..figures.money import Money
from . import model, period_model
from .charts import DayChart
from .model import USD
from .nav import header
from .theme import Metrics, Palette
from .widgets import BudgetBar, Cards, Table, show_text


class PeriodView(ttk.Frame):
    def __init__(
        self,
        master: tk.Misc,
        metrics: Metrics,
        palette: Palette,
        *,
        nav: Mapping[str, Callable],
        on_day: Callable[[date], None],
        on_open: Callable[[str], None],
    ):
        m = metrics
        super().__init__(master, padding=(m.px(16), m.px(12), m.px(16), 0))
        self.m = m
        self.period: pd.Period | None = None
        self.columnconfigure(0, weight=1)
        self.heading, self.zone, self.nav = header(self, m, nav)
        self.problem = ttk.Label(self, style="Error.TLabel")
        self.problem.grid(row=1, column=0, sticky="w")
        self.problem.grid_remove()
        self.cards = Cards(self, 4, m)
        self.cards.grid(row=2, column=0, sticky="ew", pady=(m.px(10), m.px(4)))
        self.budget = BudgetBar(self, m)
        self.budget.grid(row=3, column=0, sticky="ew", pady=(0, m.px(6)))
        frame = ttk.Frame(self, style="Table.TFrame", padding=1)
        frame.grid(row=4, column=0, sticky="ew", pady=(m.px(2), m.px(10)))
        frame.columnconfigure(0, weight=1)
        self.chart = DayChart(frame, m, palette, height=m.px(104), on_day=on_day)
        self.chart.grid(row=0, column=0, sticky="nsew")
        self._tables(m, on_open)
        self.legend = ttk.Label(self, style="Small.TLabel")
        self.legend.grid(row=6, column=0, sticky="w", pady=(m.px(4), m.px(8)))
        self.recolor(palette)

    def _tables(self, m: Metrics, on_open: Callable[[str], None]) -> None:
        below = ttk.Frame(self)
        below.grid(row=5, column=0, sticky="nsew")
        self.rowconfigure(5, weight=1)
        below.columnconfigure(0, weight=3, uniform="below")
        below.columnconfigure(1, weight=2, uniform="below")
        below.rowconfigure(0, weight=1)
        self.sessions = Table(
            below,
            model.PERIOD_SESSION_COLUMNS,
            m,
            height=6,
            totals=True,
            on_open=on_open,
            empty="No Cline sessions in this period.",
            sort=("start", True),
        )
        self.sessions.grid(row=0, column=0, sticky="nsew")
        self.tabs = ttk.Notebook(below, takefocus=False)
        self.tabs.grid(row=0, column=1, sticky="nsew", padx=(m.px(12), 0))
        self.groups: dict[str, Table] = {}
        for by, caption, heading in period_model.GROUP_TABLES:
            table = Table(self.tabs, period_model.group_columns(heading), m, height=4, empty="–", sort=("cost", True))
            table.tree.configure(takefocus=False)
            self.tabs.add(table, text=caption.capitalize())
            self.groups[by] = table
        self.machines = Table(self.tabs, period_model.MACHINE_COLUMNS, m, height=4, empty="–", sort=("cost", True))
        self.machines.tree.configure(takefocus=False)
        self.tabs.add(self.machines, text="By machine", state="hidden")  # shown when other machines are held

    # ---- showing a period -----------------------------------------------------------------------

    def show(
        self,
        p: pd.Period,
        views: Mapping[str, HistoryReport],
        sessions: Sequence[SessionSummary],
        today: date,
        money: Money = USD,
        daily_budget: float | None = None,
        monthly_budget: float | None = None,
        machines: MachinesReport | None = None,
        plan: Totals | None = None,
    ) -> None:
        self.period = p
        days = views["day"]
        self.heading.set(p.label())
        ahead = period_model.projection(p, 0.0, today) is not None
        note = "  ·  the projection is a straight line, not a forecast" if ahead else ""
        self.zone.set(f"Times in {model.clean(days.timezone, 40)}{note}")
        self.nav.show(p, today)
        total = days.total
        self.cards.show(period_model.period_cards(total, sessions, p, today, money, daily_budget, monthly_budget, plan))
        self.budget.show(period_model.budget_progress(p, total.totals.cost_usd, daily_budget, monthly_budget))
        self.chart.show(period_model.bars(days), today, money)
        decimals = money.decimals([s.cost_usd for s in sessions] + [total.cost_usd])
        rows = model.session_rows(sessions, None, money, decimals, model.PERIOD_SESSION_COLUMNS)
        self.sessions.set_rows(rows)
        totals = period_model.period_totals(total, money, decimals)
        self.sessions.set_totals(totals)
        for by, table in self.groups.items():
            table.set_rows(period_model.group_rows(views[by], money))
        split = period_model.machine_rows(machines, money) if machines else []
        self.machines.set_rows(split)
        self.tabs.tab(self.machines, state="normal" if split else "hidden")
        texts = [r.values[-1] for r in rows] + [totals[-1]]
        texts += [r.values[-1] for t in (*self.groups.values(), self.machines) for r in t.rows.values()]
        show_text(self.legend, model.legend(texts))
        self.say(None)

    def say(self, problem: str | None) -> None:
        show_text(self.problem, problem or "")

    def recolor(self, p: Palette) -> None:
        self.sessions.recolor(p)
        for t in (*self.groups.values(), self.machines):
            t.recolor(p)
        self.chart.recolor(p)
