"""The top of the summary window's day and period views: the heading, its time zone, the line that says what is
wrong with what was typed, and the navigation strip (`PeriodNav`): Day / Week / Month / Range, previous and next,
a field to type a date, a month or a range, the way back to today, and Export…. Never computes a figure.
"""

from __future__ import annotations

import tkinter as tk
from collections.abc import Callable, Mapping
from functools import partial
from tkinter import ttk

from ..figures import periods
from .period_rows import entry_text
from .theme import Metrics
from .widgets import FitLabel

KINDS = (("day", "Day"), ("week", "Week"), ("month", "Month"), ("range", "Range"))
BACK_TO_NOW = {"day": "Today", "week": "This week", "month": "This month", "range": "Last 30 days"}


def wrapped_error(view: ttk.Frame, m: Metrics) -> ttk.Label:
    """The line under the header that says what is wrong with what was typed: wrapped to the width the view gives
    it (it ran off the window's right edge), hidden until there is something to say."""
    label = ttk.Label(view, style="Error.TLabel", justify="left")
    label.grid(row=1, column=0, sticky="ew")
    label.grid_remove()

    def fit(event: tk.Event) -> None:
        room = max(m.px(100), event.width)
        if str(label.cget("wraplength")) != str(room):
            label.configure(wraplength=room)

    label.bind("<Configure>", fit, add="+")
    return label


def header(view: ttk.Frame, m: Metrics, nav: Mapping[str, Callable]) -> tuple[FitLabel, FitLabel, PeriodNav]:
    """The top of the day and period views: the heading, the time zone under it, the navigation strip."""
    top = ttk.Frame(view)
    top.grid(row=0, column=0, sticky="ew")
    top.columnconfigure(0, weight=1)
    heading = FitLabel(top, style="Title.TLabel")
    heading.grid(row=0, column=0, sticky="ew")
    zone = FitLabel(top, style="Muted.TLabel")  # cut with "…" beside the navigation at a small size
    zone.grid(row=1, column=0, sticky="ew")
    strip = PeriodNav(top, m, **nav)
    strip.grid(row=0, column=1, rowspan=2, sticky="e")
    return heading, zone, strip


class PeriodNav(ttk.Frame):
    def __init__(
        self,
        master: tk.Misc,
        m: Metrics,
        *,
        on_kind: Callable[[str], None],
        on_step: Callable[[int], None],
        on_typed: Callable[[str], None],
        on_now: Callable[[], None],
        on_export: Callable[[], None],
    ):
        super().__init__(master)
        self.columnconfigure(0, weight=1)
        self.kind = tk.StringVar(value="day")
        kinds = ttk.Frame(self)
        kinds.grid(row=0, column=0, columnspan=4, sticky="e", pady=(0, m.px(4)))
        self.kind_buttons: dict[str, ttk.Radiobutton] = {}
        for i, (kind, label) in enumerate(KINDS):
            b = ttk.Radiobutton(
                kinds, text=label, value=kind, variable=self.kind, style="Toolbutton", command=partial(on_kind, kind)
            )
            b.grid(row=0, column=i, sticky="ns", padx=(0 if i == 0 else m.px(2), 0))  # apart at every scale
            self.kind_buttons[kind] = b
        self.export = ttk.Button(kinds, text="Export…", command=on_export)
        self.export.grid(row=0, column=len(KINDS), sticky="ns", padx=(m.px(10), 0))
        self.prev = ttk.Button(self, text="◀", width=3, style="Nav.TButton", command=lambda: on_step(-1))
        self.text = tk.StringVar()
        self.entry = ttk.Entry(self, textvariable=self.text, width=21, justify="center")
        self.next = ttk.Button(self, text="▶", width=3, style="Nav.TButton", command=lambda: on_step(1))
        self.now = ttk.Button(self, text="Today", width=11, command=on_now)
        for i, w in enumerate((self.prev, self.entry, self.next, self.now)):
            w.grid(row=1, column=i, padx=(0 if i == 0 else m.px(4), 0), sticky="nse" if i == 0 else "ns")
        self.on_typed = on_typed
        for seq in ("<Return>", "<KP_Enter>"):
            self.entry.bind(seq, self._typed)
        self.entry.bind("<Escape>", lambda e: self.reset())
        for seq in ("<Control-a>", "<Control-A>"):  # select the field's text (Tk's own Ctrl+A goes to its start)
            self.entry.bind(seq, self._select_all)
        self.period: periods.Period | None = None

    def show(self, p: periods.Period, today) -> None:
        """Mark the period's kind, put it in the field (unless it is being typed), and allow "next" only
        towards today."""
        changed = p != self.period
        self.period = p
        self.kind.set(p.kind)
        if changed:
            self.reset()
        self.next.state(["disabled"] if p.until >= today else ["!disabled"])
        self.now.configure(text=BACK_TO_NOW[p.kind])
        self.now.state(["disabled"] if p.contains(today) and p.kind != "range" else ["!disabled"])

    def _select_all(self, _event: tk.Event) -> str:
        self.entry.selection_range(0, "end")
        self.entry.icursor("end")
        return "break"

    def _typed(self, _event: tk.Event) -> str:
        self.on_typed(self.text.get())
        return "break"

    def reset(self) -> None:
        self.text.set(entry_text(self.period) if self.period else "")
