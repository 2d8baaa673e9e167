"""The day view: the day's figures, its sessions, cost per model and cost per hour."""

from __future__ import annotations

import tkinter as tk
from collections.abc import Callable, Mapping, Sequence
from datetime import date
from tkinter import ttk

from ..figures import periods as pd
from ..figures.day import DayReport, SessionSummary
from ..figures.money import Money
from . import model
from .charts import HourChart
from .model import USD
from .nav import header
from .theme import Metrics, Palette
from .widgets import BudgetBar, Cards, Table, show_text


class DayView(ttk.Frame):
    def __init__(
        self,
        master: tk.Misc,
        metrics: Metrics,
        palette: Palette,
        *,
        nav: Mapping[str, Callable],
        on_open: Callable[[str], None],
    ):
        super().__init__(master, padding=(metrics.px(16), metrics.px(12), metrics.px(16), 0))
        self.m = metrics
        self.day: date | None = None
        self.today: date | None = None
        self.columnconfigure(0, weight=1)
        self._header(metrics, nav)
        self.cards = Cards(self, 4, metrics)
        self.cards.grid(row=2, column=0, sticky="ew", pady=(metrics.px(10), metrics.px(4)))
        self.budget = BudgetBar(self, metrics)
        self.budget.grid(row=3, column=0, sticky="ew", pady=(0, metrics.px(8)))
        self.sessions = Table(
            self,
            model.DAY_COLUMNS,
            metrics,
            height=9,
            totals=True,
            on_open=on_open,
            empty="No Cline sessions on this day.",
            sort=("start", True),
        )
        self.sessions.grid(row=4, column=0, sticky="nsew")
        self.rowconfigure(4, weight=3)  # at a small size the tables below give up room too
        self.rowconfigure(6, weight=1)
        self.legend = ttk.Label(self, style="Small.TLabel")
        self.legend.grid(row=5, column=0, sticky="w", pady=(metrics.px(4), 0))
        self._bottom(metrics, palette)
        self.recolor(palette)

    def _header(self, m: Metrics, nav: Mapping[str, Callable]) -> None:
        self.heading, self.zone, self.nav = header(self, m, nav)
        self.prev, self.next, self.entry = self.nav.prev, self.nav.next, self.nav.entry
        self.today_button, self.date_text = self.nav.now, self.nav.text
        self.problem = ttk.Label(self, style="Error.TLabel")
        self.problem.grid(row=1, column=0, sticky="w")
        self.problem.grid_remove()

    def _bottom(self, m: Metrics, p: Palette) -> None:
        strip = ttk.Frame(self)
        strip.grid(row=6, column=0, sticky="nsew", pady=(m.px(10), m.px(12)))
        strip.columnconfigure(0, weight=5, uniform="strip")
        strip.columnconfigure(1, weight=6, uniform="strip")
        strip.rowconfigure(1, weight=1)
        ttk.Label(strip, text="COST PER MODEL", style="Section.TLabel").grid(row=0, column=0, sticky="w")
        ttk.Label(strip, text="COST PER HOUR", style="Section.TLabel").grid(
            row=0, column=1, sticky="w", padx=(m.px(12), 0)
        )
        self.models = Table(strip, model.MODEL_COLUMNS, m, height=3, empty="No model calls.", sort=("cost", True))
        self.models.tree.configure(takefocus=False)
        self.models.grid(row=1, column=0, sticky="nsew", pady=(m.px(4), 0))
        frame = ttk.Frame(strip, style="Table.TFrame", padding=1)
        frame.grid(row=1, column=1, sticky="nsew", padx=(m.px(12), 0), pady=(m.px(4), 0))
        frame.columnconfigure(0, weight=1)
        frame.rowconfigure(0, weight=1)
        self.chart = HourChart(frame, m, p, height=m.px(96))
        self.chart.grid(row=0, column=0, sticky="nsew")

    # ---- showing a day --------------------------------------------------------------------------

    def show(
        self,
        report: DayReport,
        sessions: Sequence[SessionSummary],
        hours: Sequence[float],
        today: date,
        now_hour: int | None,
        money: Money = USD,
        budget: float | None = None,
        machines: str | None = None,
    ) -> None:
        day = model.parse_day(report.date)
        self.today, self.day = today, day
        self.nav.show(pd.day_of(day), today)
        self.heading.set(model.day_heading(day))
        self.zone.set(f"Times in {model.clean(report.timezone, 40)}" + ("  ·  today" if day == today else ""))
        self.cards.show(model.day_cards(report, sessions, money, budget, today=day == today, machines=machines))
        self.budget.show(model.budget_share(report.cost_usd, budget))
        decimals = money.decimals([s.cost_usd for s in sessions] + [report.cost_usd])
        rows = model.session_rows(sessions, day, money, decimals)
        self.sessions.set_rows(rows)
        totals = model.day_totals(report, money, decimals)
        self.sessions.set_totals(totals)
        self.models.set_rows(model.model_rows(report, money))
        self._legend(model.legend([r.values[-1] for r in rows] + [totals[-1]]))
        self.chart.show(hours, now_hour if day == today else None, money)
        self.say(None)

    def say(self, problem: str | None) -> None:
        show_text(self.problem, problem or "")

    def _legend(self, text: str) -> None:
        show_text(self.legend, text)

    def recolor(self, p: Palette) -> None:
        self.sessions.recolor(p)
        self.models.recolor(p)
        self.chart.recolor(p)
