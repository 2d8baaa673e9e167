"""The summary window's three views: a day, a period and one session, laid out to the room the window gives them.
They place the rows and strings of models.py, period_rows.py, detail_rows.py and spent.py in the widgets of
widgets.py, table.py and charts.py; they compute no figure.

- `DayView`: the day's figures, its sessions, cost per model and cost per hour.
- `PeriodView`: a week, a month or a range of days — its figures, a bar of cost per day (click one to open
  that day), its sessions, and its spend by project, by model and by source.
- `SessionView`: one session's facts and figures, and in tabs its calls in order, by tool and by agent.

In a short window the tables keep their rows first: a period's chart shrinks, then gives way (an error line under
the header taking its room), a session's title is cut to fewer lines.
Their top (heading, time zone, error line, navigation strip) is nav.py's.
"""

from __future__ import annotations

import tkinter as tk
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from functools import partial
from tkinter import ttk

from ..figures import periods
from ..figures.attribution import Attribution
from ..figures.costs import Totals
from ..figures.day import SessionDetail, SessionSummary
from ..figures.glance import DayFigures
from ..figures.history import HistoryReport, MachinesReport
from ..figures.listprice import CacheReport, WhatIf
from ..figures.money import Money
from ..words import pace_text
from . import detail_rows, models, period_rows, spent
from .charts import DayChart, HourChart
from .models import USD
from .nav import header, wrapped_error
from .table import Table
from .theme import Metrics, Palette
from .widgets import BudgetBar, Cards, FitLabel, WrapLabel, show_text, style_font


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
            models.DAY_COLUMNS,
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
        self.problem = wrapped_error(self, self.m)

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
        self.models = Table(strip, models.MODEL_COLUMNS, m, height=2, empty="No model calls.", sort=("cost", True))
        self.models.tree.configure(takefocus=False)
        self.models.grid(row=1, column=0, sticky="nsew", pady=(m.px(4), 0))
        frame = ttk.Frame(strip, style="Table.TFrame", padding=1)
        frame.grid(row=1, column=1, sticky="nsew", padx=(m.px(12), 0), pady=(m.px(4), 0))
        frame.columnconfigure(0, weight=1)
        frame.rowconfigure(0, weight=1)
        self.chart = HourChart(frame, m, p, height=m.px(80))
        self.chart.grid(row=0, column=0, sticky="nsew")
        # At the smallest size the sessions table gives up its rows first: the strip keeps the model table's
        # two rows and a chart that reads (they had none and 3 px); it grows with the window beyond that.
        strip.update_idletasks()
        self.rowconfigure(6, weight=1, minsize=strip.winfo_reqheight() + m.px(22))

    # ---- showing a day --------------------------------------------------------------------------

    def show(
        self, figures: DayFigures, today: date, now_hour: int | None, money: Money = USD, budget: float | None = None
    ) -> None:
        """The day's figures (`Engine.day_figures`, with its hours); with other machines held, the cost card
        also says the day's spend on all of them ("All $4.20 on 3 machines (this one $1.10)")."""
        report, sessions, day = figures.report, figures.sessions, figures.day
        machines = figures.machines.menu_line(partial(models.amount, money), label="All")
        self.today, self.day = today, day
        self.nav.show(periods.day_of(day), today)
        self.heading.set(models.day_heading(day))
        self.zone.set(f"Times in {models.clean(report.timezone, 40)}" + ("  ·  today" if day == today else ""))
        pace = pace_text(figures.burn, money) if day == today else None
        cards = models.day_cards(report, sessions, money, budget, today=day == today, machines=machines, pace=pace)
        self.cards.show(cards)
        self.budget.show(models.budget_share(report.cost_usd, budget))
        rows = models.session_rows(sessions, day, money)
        self.sessions.set_rows(rows)
        totals = models.day_totals(report, money)
        self.sessions.set_totals(totals)
        self.models.set_rows(models.model_rows(report, money))
        self._legend(models.legend([r.values[-1] for r in rows] + [totals[-1]]))
        self.chart.show(figures.hourly, now_hour if day == today else None, money)
        self.say(None)

    def say(self, problem: str | None) -> None:
        show_text(self.problem, problem or "")

    def _legend(self, text: str) -> None:
        show_text(self.legend, text)

    def recolor(self, p: Palette) -> None:
        self.sessions.recolor(p)
        self.models.recolor(p)
        self.chart.recolor(p)


CHART_PX = 104  # the period's chart of cost per day (at 96 dpi), at most ...
LEAST_CHART_PX = 60  # ... and at least: with less room it gives way to the tables
CHART_PADY = (2, 10)
TALL_PX = 540
TITLE_LINES = 4  # a session's title, at most (240 characters fit in the default window) ...
SHORT_TITLE_LINES = 2  # ... and in a view shorter than TALL_PX


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
        self.period: periods.Period | None = None
        self.columnconfigure(0, weight=1)
        self.heading, self.zone, self.nav = header(self, m, nav)
        self.problem = wrapped_error(self, self.m)
        self.cards = Cards(self, 4, m)
        self.cards.grid(row=2, column=0, sticky="ew", pady=(m.px(10), m.px(4)))
        self.budget = BudgetBar(self, m)
        self.budget.grid(row=3, column=0, sticky="ew", pady=(0, m.px(6)))
        self.chart_frame = frame = ttk.Frame(self, style="Table.TFrame", padding=1)
        frame.grid(row=4, column=0, sticky="ew", pady=(m.px(CHART_PADY[0]), m.px(CHART_PADY[1])))
        frame.columnconfigure(0, weight=1)
        self.chart = DayChart(frame, m, palette, height=m.px(CHART_PX), on_day=on_day)
        self.chart.grid(row=0, column=0, sticky="nsew")
        self._fitting = False
        self._tables(m, on_open)
        self.legend = ttk.Label(self, style="Small.TLabel")
        self.legend.grid(row=6, column=0, sticky="w", pady=(m.px(4), m.px(8)))
        for w in (self, *self.grid_slaves()):  # a line wrapped or shown above or below changes the room left
            w.bind("<Configure>", lambda e: self.after_idle(self._fit_chart), add="+")
        self.recolor(palette)

    def _fit_chart(self, _event: tk.Event | None = None) -> None:
        """The chart takes the room the tables leave once they have their rows (`_tables`: two at least, beside the
        totals and the tabs), up to CHART_PX; with less than LEAST_CHART_PX it gives way (at the minimum size, or
        under an error line of three)."""
        if self._fitting:
            return
        others = sum(
            w.winfo_reqheight() + _pady(w) for w in self.grid_slaves() if w not in (self.chart_frame, self.below)
        )
        padding = sum(int(self.winfo_fpixels(p)) for p in self.tk.splitlist(self.cget("padding"))[1::2])
        room = (
            self.winfo_height()
            - padding
            - others
            - self.below.winfo_reqheight()
            - self.m.px(CHART_PADY[0] + CHART_PADY[1])
        )
        height = min(room - 2, self.m.px(CHART_PX))  # (2: the frame's border)
        self._fitting = True
        try:
            if height < self.m.px(LEAST_CHART_PX):
                self.chart_frame.grid_remove()
            else:
                self.chart_frame.grid()
                if int(self.chart.cget("height")) != height:
                    self.chart.configure(height=height)
        finally:
            self._fitting = False

    def _tables(self, m: Metrics, on_open: Callable[[str], None]) -> None:
        self.below = below = ttk.Frame(self)
        below.grid(row=5, column=0, sticky="nsew")
        self.rowconfigure(5, weight=1)
        below.columnconfigure(0, weight=3, uniform="below")
        below.columnconfigure(1, weight=2, uniform="below")
        below.rowconfigure(0, weight=1)
        self.sessions = Table(
            below,
            models.PERIOD_SESSION_COLUMNS,
            m,
            height=2,  # rows at least (`_fit_chart`); the tables take the room the chart leaves
            totals=True,
            on_open=on_open,
            empty="No Cline sessions in this period.",
            sort=("start", True),
        )
        self.sessions.grid(row=0, column=0, sticky="nsew")
        self.tabs = ttk.Notebook(below, takefocus=False)
        self.tabs.grid(row=0, column=1, sticky="nsew", padx=(m.px(12), 0))
        self.groups: dict[str, Table] = {}
        for by, _caption, heading in period_rows.GROUP_TABLES:
            table = Table(self.tabs, period_rows.group_columns(heading), m, height=2, empty="–", sort=("cost", True))
            table.tree.configure(takefocus=False)
            self.tabs.add(table, text=heading)  # (the tabs' words alone: six "By …" do not fit a narrow window)
            self.groups[by] = table
        self.machines = Table(self.tabs, period_rows.MACHINE_COLUMNS, m, height=2, empty="–", sort=("cost", True))
        self.machines.tree.configure(takefocus=False)
        self.tabs.add(self.machines, text="Machine", state="hidden")  # shown when other machines are held
        self.tools, self.agents = where_tabs(self.tabs, m, 2)
        below.bind("<Configure>", lambda e: self._share(e.width), add="+")
        self._where_line(m)

    def _share(self, width: int) -> None:
        """The tables by project, model… take two fifths of the width, or what their tabs need to be read whole
        (ttk squeezes tabs that do not fit: "Projec", "Too"), the sessions the rest."""
        need = tabs_width(self.tabs) + self.m.px(12)
        right = max(round(width * 2 / 5), min(need, width // 2))
        weights = (width - right, right) if width > 1 else (3, 2)
        for column, weight in enumerate(weights):
            if self.below.columnconfigure(column)["weight"] != weight:
                self.below.columnconfigure(column, weight=weight)

    def _where_line(self, m: Metrics) -> None:
        """Under the tables: what the cache saved, and a what-if on another model (typed or picked)."""
        line = ttk.Frame(self)
        line.grid(row=7, column=0, sticky="ew", pady=(0, m.px(6)))
        line.columnconfigure(0, weight=1)
        self.cache = FitLabel(line, style="Small.TLabel")
        self.cache.grid(row=0, column=0, sticky="ew")
        ttk.Label(line, text="What if on", style="Small.TLabel").grid(row=0, column=1, padx=(m.px(8), m.px(4)))
        self.reprice_model = tk.StringVar()
        self.reprice = ttk.Combobox(line, textvariable=self.reprice_model, width=22)
        self.reprice.grid(row=0, column=2, sticky="e")
        for seq in ("<<ComboboxSelected>>", "<Return>", "<KP_Enter>"):
            self.reprice.bind(seq, lambda e: self.on_reprice(self.reprice_model.get().strip()))
        self.cache_text, self.what_if_text = "", ""
        self.on_reprice: Callable[[str], None] = lambda model: None

    # ---- showing a period -----------------------------------------------------------------------

    def show(
        self,
        p: periods.Period,
        views: Mapping[str, HistoryReport],
        sessions: Sequence[SessionSummary],
        today: date,
        money: Money = USD,
        daily_budget: float | None = None,
        monthly_budget: float | None = None,
        machines: MachinesReport | None = None,
        plan: Totals | None = None,
        where: Where | None = None,
    ) -> None:
        self.period = p
        days = views["day"]
        self.heading.set(p.label())
        ahead = period_rows.projection(p, 0.0, today) is not None
        note = "  ·  the projection is a straight line, not a forecast" if ahead else ""
        self.zone.set(f"Times in {models.clean(days.timezone, 40)}{note}")
        self.nav.show(p, today)
        total = days.total
        self.cards.show(period_rows.period_cards(total, sessions, p, today, money, daily_budget, monthly_budget, plan))
        self.budget.show(period_rows.budget_progress(p, total.totals.cost_usd, daily_budget, monthly_budget))
        self.chart.show(period_rows.bars(days), today, money)
        rows = models.session_rows(sessions, None, money, models.PERIOD_SESSION_COLUMNS)
        self.sessions.set_rows(rows)
        totals = period_rows.period_totals(total, money)
        self.sessions.set_totals(totals)
        for by, table in self.groups.items():
            table.set_rows(period_rows.group_rows(views[by], money))
        split = period_rows.machine_rows(machines, money) if machines else []
        self.machines.set_rows(split)
        self.tabs.tab(self.machines, state="normal" if split else "hidden")
        self._share(self.below.winfo_width())
        texts = [r.values[-1] for r in rows] + [totals[-1]]
        texts += [r.values[-1] for t in (*self.groups.values(), self.machines) for r in t.rows.values()]
        show_text(self.legend, models.legend(texts))
        self.show_where(where, [g.key for g in views["model"].rows if g.key != "unknown"], money)
        self.say(None)

    def show_where(self, where: Where | None, choices: Sequence[str], money: Money = USD) -> None:
        """By tool, by agent, the cache's line; the what-if's models to pick from (the period's own)."""
        if where is None:
            return
        self.tools.set_rows(spent.tool_rows(where.tools, money))
        self.agents.set_rows(spent.agent_rows(where.agents, money))
        self.cache_text = spent.cache_text(where.cache, money) if where.cache else ""
        self.reprice.configure(values=list(choices))
        self.show_what_if(where.what_if, money)

    def show_what_if(self, w: WhatIf | None, money: Money = USD) -> None:
        """The line under the tables: the what-if first when one is asked for, then the cache's figures."""
        self.what_if_text = "" if w is None else spent.what_if_text(w, money)
        self.cache.set("  ·  ".join(t for t in (self.what_if_text, self.cache_text) if t))

    def say(self, problem: str | None) -> None:
        show_text(self.problem, problem or "")

    def recolor(self, p: Palette) -> None:
        self.sessions.recolor(p)
        for t in (*self.groups.values(), self.machines, self.tools, self.agents):
            t.recolor(p)
        self.chart.recolor(p)


class SessionView(ttk.Frame):
    def __init__(
        self,
        master: tk.Misc,
        metrics: Metrics,
        palette: Palette,
        *,
        on_back: Callable[[], None],
        on_copy: Callable[[], None],
        on_folder: Callable[[], None],
    ):
        super().__init__(master, padding=(metrics.px(16), metrics.px(12), metrics.px(16), metrics.px(12)))
        self.m = metrics
        self.detail: SessionDetail | None = None
        self.columnconfigure(0, weight=1)
        self._header(metrics, on_back, on_copy, on_folder)
        self.facts = ttk.Frame(self)
        self.facts.grid(row=1, column=0, sticky="ew", pady=(metrics.px(6), 0))
        self.fact_values = self._fact_grid(metrics)
        self.cards = Cards(self, 6, metrics, wide=(0,))
        self.cards.grid(row=2, column=0, sticky="ew", pady=(metrics.px(10), metrics.px(8)))
        # the calls, by tool and by agent share the room below, as tabs: the calls keep their rows at every size
        self.where = ttk.Notebook(self, takefocus=False)
        self.where.grid(row=3, column=0, sticky="nsew")
        self.rowconfigure(3, weight=1)
        self.calls = Table(
            self.where, detail_rows.CALL_COLUMNS, metrics, height=3, empty="No model calls recorded yet."
        )
        self.where.add(self.calls, text="Calls in order")
        self.tools, self.agents = where_tabs(self.where, metrics, 2, rule=False)
        self.legend = ttk.Label(self, style="Small.TLabel")
        self.legend.grid(row=4, column=0, sticky="w", pady=(metrics.px(4), 0))
        self.bind("<Configure>", self._fit_title)
        self.recolor(palette)

    def _header(self, m: Metrics, on_back, on_copy, on_folder) -> None:
        top = ttk.Frame(self)
        top.grid(row=0, column=0, sticky="ew")
        top.columnconfigure(1, weight=1)
        self.back = ttk.Button(top, text="◀ Day", style="Nav.TButton", command=on_back)
        self.back.grid(row=0, column=0, sticky="nw", padx=(0, m.px(12)))
        self.title = WrapLabel(top, TITLE_LINES, style="Title.TLabel")
        self.title.grid(row=0, column=1, sticky="ew")
        self.buttons = buttons = ttk.Frame(top)
        buttons.grid(row=0, column=2, sticky="ne", padx=(m.px(12), 0))
        self.copy = ttk.Button(buttons, text="Copy session id", command=on_copy)
        self.folder = ttk.Button(buttons, text="Open session folder", command=on_folder)
        self.copy.grid(row=0, column=0)
        self.folder.grid(row=0, column=1, padx=(m.px(6), 0))

    def _fit_title(self, event: tk.Event) -> None:
        """The title in the room the buttons leave, in fewer lines in a short window (the calls keep their rows)."""
        if event.widget is self:
            lines = TITLE_LINES if event.height >= self.m.px(TALL_PX) else SHORT_TITLE_LINES
            if lines != self.title.lines:
                self.title.set(self.title.full, lines)

    def _fact_grid(self, m: Metrics) -> dict[str, ttk.Label]:
        labels = {}
        self.facts.columnconfigure(1, weight=3)
        self.facts.columnconfigure(3, weight=2)
        for i, name in enumerate(detail_rows.FACT_LABELS):
            row, col = i % 4, (i // 4) * 2
            ttk.Label(self.facts, text=name, style="Fact.TLabel").grid(
                row=row, column=col, sticky="nw", padx=(0 if col == 0 else m.px(24), m.px(10))
            )
            value = ttk.Label(self.facts)
            value.grid(row=row, column=col + 1, sticky="nw")
            labels[name] = value
        return labels

    # ---- showing a session ----------------------------------------------------------------------

    def show(self, d: SessionDetail, day_label: str, money: Money = USD, where: Where | None = None) -> None:
        """`where`: the session's cost by tool and by agent (the agents' tab only when it has helpers), in the tabs
        beside its calls."""
        other = self.detail is None or self.detail.summary.id != d.summary.id
        self.detail = d
        s = d.summary
        self.back.configure(text=f"◀ {day_label}")
        self.title.set(models.clean(s.title, detail_rows.HEADING_CHARS))
        for name, value in detail_rows.session_facts(d):
            self.fact_values[name].configure(text=value)
        self.cards.show(detail_rows.session_cards(d, money))
        if where is not None:
            self.tools.set_rows(spent.tool_rows(where.tools, money))
            self.agents.set_rows(spent.agent_rows(where.agents, money))
        self.where.tab(self.agents, state="normal" if s.subagents else "hidden")
        if other or not s.subagents and self.where.select() == str(self.agents):
            self.where.select(self.calls)  # another session opens on its calls; a refresh keeps the tab chosen
        rows = detail_rows.call_rows(d, money)
        self.calls.set_rows(rows)
        cost = [c.key for c in detail_rows.CALL_COLUMNS].index("cost")
        self._legend(models.legend([r.values[cost] for r in rows]))
        self.folder.state(["!disabled"] if s.folder and not s.removed else ["disabled"])

    def _legend(self, text: str) -> None:
        show_text(self.legend, text)

    def recolor(self, p: Palette) -> None:
        self.calls.recolor(p)
        self.agents.recolor(p)
        self.tools.recolor(p)


def tabs_width(tabs: ttk.Notebook) -> int:
    """The width a notebook's shown tabs need, their texts whole."""
    style = ttk.Style(tabs)
    font = style_font(tabs, "TNotebook.Tab", "TkDefaultFont")
    pad = [int(tabs.winfo_fpixels(p)) for p in tabs.tk.splitlist(style.lookup("TNotebook.Tab", "padding") or "0")]
    across = pad[0] + pad[2 if len(pad) > 2 else 0]
    shown = [t for t in tabs.tabs() if tabs.tab(t, "state") != "hidden"]
    return sum(font.measure(str(tabs.tab(t, "text"))) + across + 4 for t in shown) + 4


def _pady(w: tk.Widget) -> int:
    """The space above and below a gridded widget."""
    if w.winfo_manager() != "grid":
        return 0
    pady = w.grid_info().get("pady", 0)
    parts = pady if isinstance(pady, tuple) else w.tk.splitlist(str(pady))
    return sum(int(w.winfo_fpixels(p)) for p in parts) * (2 if len(parts) == 1 else 1)


@dataclass(frozen=True)
class Where:
    """Where the money went, as a view shows it: by tool, by agent; a period's cache line and what-if."""

    tools: Attribution
    agents: Attribution
    cache: CacheReport | None = None
    what_if: WhatIf | None = None


def where_tabs(tabs: ttk.Notebook, m: Metrics, rows: int, rule: bool = True) -> tuple[Table, Table]:
    """A "Tool" tab (its table, and under it with `rule` the rule: an attribution, not a measurement; a session's
    view has not the room at its minimum size) and an "Agent" tab in `tabs`, their tables asking for `rows` rows."""
    page = ttk.Frame(tabs)
    page.columnconfigure(0, weight=1)
    page.rowconfigure(0, weight=1)
    tools = Table(page, spent.TOOL_COLUMNS, m, height=rows, empty="–", sort=("cost", True))
    tools.grid(row=0, column=0, sticky="nsew")
    if rule:
        said = FitLabel(page, style="Small.TLabel")
        said.grid(row=1, column=0, sticky="ew", padx=m.px(4), pady=(m.px(2), 0))
        said.set(spent.TOOL_NOTE)
    agents = Table(tabs, spent.AGENT_COLUMNS, m, height=rows, empty="–", sort=("cost", True))
    tabs.add(page, text="Tool")
    tabs.add(agents, text="Agent")
    for table in (tools, agents):
        table.tree.configure(takefocus=False)
    return tools, agents
