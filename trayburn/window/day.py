"""The day view: the day's figures, its sessions, cost per model and cost per hour."""

from __future__ import annotations

import tkinter as tk
from collections.abc import Callable, Sequence
from datetime import date, timedelta
from tkinter import ttk

from ..report import DayReport, SessionSummary
from . import model
from .theme import Metrics, Palette
from .widgets import Cards, HourChart, Table, show_text


class DayView(ttk.Frame):
    def __init__(
        self,
        master: tk.Misc,
        metrics: Metrics,
        palette: Palette,
        *,
        on_day: Callable[[date | None], None],
        on_open: Callable[[str], None],
    ):
        super().__init__(master, padding=(metrics.px(16), metrics.px(12), metrics.px(16), 0))
        self.m, self.on_day = metrics, on_day
        self.day: date | None = None
        self.today: date | None = None
        self.columnconfigure(0, weight=1)
        self._header(metrics)
        self.cards = Cards(self, 4, metrics)
        self.cards.grid(row=2, column=0, sticky="ew", pady=(metrics.px(10), metrics.px(12)))
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
        self.sessions.grid(row=3, column=0, sticky="nsew")
        self.rowconfigure(3, weight=1)
        self.legend = ttk.Label(self, style="Small.TLabel")
        self.legend.grid(row=4, column=0, sticky="w", pady=(metrics.px(4), 0))
        self._bottom(metrics, palette)
        self.recolor(palette)

    def _header(self, m: Metrics) -> None:
        top = ttk.Frame(self)
        top.grid(row=0, column=0, sticky="ew")
        top.columnconfigure(0, weight=1)
        self.heading = ttk.Label(top, style="Title.TLabel")
        self.heading.grid(row=0, column=0, sticky="w")
        self.zone = ttk.Label(top, style="Muted.TLabel")
        self.zone.grid(row=1, column=0, sticky="w")
        nav = ttk.Frame(top)
        nav.grid(row=0, column=1, rowspan=2, sticky="e")
        self.prev = ttk.Button(nav, text="◀", width=3, style="Nav.TButton", command=lambda: self.step(-1))
        self.date_text = tk.StringVar()
        self.entry = ttk.Entry(nav, textvariable=self.date_text, width=11, justify="center")
        self.next = ttk.Button(nav, text="▶", width=3, style="Nav.TButton", command=lambda: self.step(1))
        self.today_button = ttk.Button(nav, text="Today", command=lambda: self.on_day(None))
        for i, w in enumerate((self.prev, self.entry, self.next, self.today_button)):
            w.grid(row=0, column=i, padx=(0 if i == 0 else m.px(4), 0), sticky="ns")
        self.entry.bind("<Return>", self._typed)
        self.entry.bind("<KP_Enter>", self._typed)
        self.entry.bind("<Escape>", lambda e: self._reset_entry())
        self.problem = ttk.Label(self, style="Error.TLabel")
        self.problem.grid(row=1, column=0, sticky="w")
        self.problem.grid_remove()

    def _bottom(self, m: Metrics, p: Palette) -> None:
        strip = ttk.Frame(self)
        strip.grid(row=5, column=0, sticky="ew", pady=(m.px(10), m.px(12)))
        strip.columnconfigure(0, weight=5, uniform="strip")
        strip.columnconfigure(1, weight=6, uniform="strip")
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
    ) -> None:
        day = model.parse_day(report.date)
        self.today = today
        if day != self.day:
            self.day = day
            self._reset_entry()
        self.heading.configure(text=model.day_heading(day))
        self.zone.configure(
            text=f"Times in {model.clean(report.timezone, 40)}" + ("  ·  today" if day == today else "")
        )
        self.next.state(["disabled"] if day >= today else ["!disabled"])
        self.today_button.state(["disabled"] if day == today else ["!disabled"])
        self.cards.show(model.day_cards(report, sessions))
        rows = model.session_rows(sessions, day)
        self.sessions.set_rows(rows)
        totals = model.day_totals(report)
        self.sessions.set_totals(totals)
        self.models.set_rows(model.model_rows(report))
        self._legend(model.legend([r.values[-1] for r in rows] + [totals[-1]]))
        self.chart.show(hours, now_hour if day == today else None)
        self.say(None)

    def step(self, days: int) -> None:
        """The previous or next day; never past today (there is nothing to see there)."""
        if self.day is None:
            return
        target = self.day + timedelta(days=days)
        if self.today is None or target <= self.today or days < 0:
            self.on_day(target)

    def say(self, problem: str | None) -> None:
        if problem:
            self.problem.configure(text=problem)
            self.problem.grid()
        else:
            self.problem.grid_remove()

    def _typed(self, _event: tk.Event) -> str:
        try:
            self.on_day(model.parse_day(self.date_text.get()))
        except model.BadDay as exc:
            self.say(str(exc))
        return "break"

    def _reset_entry(self) -> None:
        self.date_text.set(self.day.isoformat() if self.day else "")

    def _legend(self, text: str) -> None:
        show_text(self.legend, text)

    def recolor(self, p: Palette) -> None:
        self.sessions.recolor(p)
        self.models.recolor(p)
        self.chart.recolor(p)
