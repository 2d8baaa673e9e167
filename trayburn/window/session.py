"""The session view: one session's facts and figures, its helpers, and its calls in order."""

from __future__ import annotations

import tkinter as tk
from collections.abc import Callable
from tkinter import ttk

from ..figures.day import SessionDetail
from ..figures.money import Money
from . import model, session_model
from .model import USD
from .theme import Metrics, Palette
from .widgets import Cards, Table, show_text


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
        self.facts.grid(row=1, column=0, sticky="ew", pady=(metrics.px(8), 0))
        self.fact_values = self._fact_grid(metrics)
        self.cards = Cards(self, 6, metrics, wide=(0,))
        self.cards.grid(row=2, column=0, sticky="ew", pady=(metrics.px(12), metrics.px(10)))
        self.agents_caption = ttk.Label(self, text="SUBAGENTS AND TEAMMATES", style="Section.TLabel")
        self.agents_caption.grid(row=3, column=0, sticky="w")
        self.agents = Table(self, session_model.SUBAGENT_COLUMNS, metrics, height=2)
        self.agents.tree.configure(takefocus=False)
        self.agents.grid(row=4, column=0, sticky="ew", pady=(metrics.px(4), metrics.px(10)))
        ttk.Label(self, text="CALLS IN ORDER", style="Section.TLabel").grid(row=5, column=0, sticky="w")
        self.calls = Table(self, session_model.CALL_COLUMNS, metrics, height=8, empty="No model calls recorded yet.")
        self.calls.grid(row=6, column=0, sticky="nsew", pady=(metrics.px(4), 0))
        self.rowconfigure(6, weight=1)
        self.legend = ttk.Label(self, style="Small.TLabel")
        self.legend.grid(row=7, column=0, sticky="w", pady=(metrics.px(4), 0))
        self.recolor(palette)

    def _header(self, m: Metrics, on_back, on_copy, on_folder) -> None:
        top = ttk.Frame(self)
        top.grid(row=0, column=0, sticky="ew")
        top.columnconfigure(1, weight=1)
        self.back = ttk.Button(top, text="◀ Day", style="Nav.TButton", command=on_back)
        self.back.grid(row=0, column=0, sticky="nw", padx=(0, m.px(12)))
        self.title = ttk.Label(top, style="Title.TLabel", justify="left")
        self.title.grid(row=0, column=1, sticky="ew")
        self.buttons = buttons = ttk.Frame(top)
        buttons.grid(row=0, column=2, sticky="ne", padx=(m.px(12), 0))
        self.copy = ttk.Button(buttons, text="Copy session id", command=on_copy)
        self.folder = ttk.Button(buttons, text="Open session folder", command=on_folder)
        self.copy.grid(row=0, column=0)
        self.folder.grid(row=0, column=1, padx=(m.px(6), 0))
        top.bind("<Configure>", lambda e: self._wrap_title(e.width))

    def _wrap_title(self, width: int) -> None:
        """Wrap the title in the room the buttons leave (a label's own width follows its text)."""
        room = width - self.back.winfo_reqwidth() - self.buttons.winfo_reqwidth() - self.m.px(24)
        self.title.configure(wraplength=max(room, self.m.px(200)))

    def _fact_grid(self, m: Metrics) -> dict[str, ttk.Label]:
        labels = {}
        self.facts.columnconfigure(1, weight=3)
        self.facts.columnconfigure(3, weight=2)
        for i, name in enumerate(session_model.FACT_LABELS):
            row, col = i % 4, (i // 4) * 2
            ttk.Label(self.facts, text=name, style="Fact.TLabel").grid(
                row=row, column=col, sticky="nw", padx=(0 if col == 0 else m.px(24), m.px(10)), pady=m.px(1)
            )
            value = ttk.Label(self.facts)
            value.grid(row=row, column=col + 1, sticky="nw", pady=m.px(1))
            labels[name] = value
        return labels

    # ---- showing a session ----------------------------------------------------------------------

    def show(self, d: SessionDetail, day_label: str, money: Money = USD) -> None:
        self.detail = d
        s = d.summary
        self.back.configure(text=f"◀ {day_label}")
        self.title.configure(text=model.clean(s.title, model.HEADING_CHARS))
        for name, value in session_model.session_facts(d):
            self.fact_values[name].configure(text=value)
        self.cards.show(session_model.session_cards(d, money))
        if s.subagents:
            self.agents.set_rows(session_model.subagent_rows(s, money))
            self.agents.tree.configure(height=min(len(s.subagents), 4))
            self.agents_caption.grid()
            self.agents.grid()
        else:
            self.agents_caption.grid_remove()
            self.agents.grid_remove()
        rows = session_model.call_rows(d, money)
        self.calls.set_rows(rows)
        cost = [c.key for c in session_model.CALL_COLUMNS].index("cost")
        self._legend(model.legend([r.values[cost] for r in rows]))
        self.folder.state(["!disabled"] if s.folder and not s.removed else ["disabled"])

    def _legend(self, text: str) -> None:
        show_text(self.legend, text)

    def recolor(self, p: Palette) -> None:
        self.calls.recolor(p)
        self.agents.recolor(p)
