"""The summary window's small building blocks: figure cards, a budget bar, labels cut or wrapped to their room,
and the notice shown in place of the figures. Never computes a figure; the table is table.py, the charts charts.py.
"""

from __future__ import annotations

import functools
import tkinter as tk
import tkinter.font as tkfont
from collections.abc import Callable, Sequence
from tkinter import ttk

from .theme import Metrics

LONG_NOTE = 32  # characters: a card's note line longer than this widens its card (see `Cards._weight`)


def style_font(widget: tk.Misc, style: str, default: str) -> tkfont.Font:
    """The font a ttk style draws with (`default` where the style sets none)."""
    name = ttk.Style(widget).lookup(style, "font") or default
    try:
        return tkfont.nametofont(name, root=widget)
    except tk.TclError:  # a font description rather than a named font
        return tkfont.Font(root=widget, font=name)


def fit_text(text: str, width: int, font: tkfont.Font) -> str:
    """`text` as it fits in `width` pixels of `font`: whole, or its longest start that fits with "…"."""
    if width <= 1 or font.measure(text) <= width:
        return text
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if font.measure(text[:mid].rstrip() + "…") <= width else (lo, mid - 1)
    return text[:lo].rstrip() + "…"


class Cards(ttk.Frame):
    """A strip of figure cards: caption, big figure, small note."""

    def __init__(self, master: tk.Misc, count: int, metrics: Metrics, wide: Sequence[int] = ()):
        super().__init__(master)
        self.wide = tuple(wide)
        self.cells: list[tuple[ttk.Label, ttk.Label, ttk.Label]] = []
        for i in range(count):
            card = ttk.Frame(self, style="Card.TFrame", padding=(metrics.px(12), metrics.px(8)))
            card.grid(row=0, column=i, sticky="nsew", padx=(0 if i == 0 else metrics.px(8), 0))
            self.columnconfigure(i, weight=self._weight(i, ""), uniform="card")
            labels = (
                ttk.Label(card, style="Card.TLabel"),
                ttk.Label(card, style="Figure.TLabel"),
                ttk.Label(card, style="Note.TLabel"),
            )
            for row, label in enumerate(labels):
                label.grid(row=row, column=0, sticky="w")
            # the caption and the note wrap to their card's width, between words: at the minimum size a session's
            # six cards are narrower than "CACHE WRITE" and than "4 failed · 1 cancelled · 1 stale"
            for label in (labels[0], labels[2]):
                card.bind("<Configure>", functools.partial(self._wrap, label, 2 * metrics.px(12)), add="+")
            self.cells.append(labels)

    def show(self, cards: Sequence[tuple[str, str, str]]) -> None:
        for i, ((caption, figure, note), (a, b, c)) in enumerate(zip(cards, self.cells, strict=False)):
            self.columnconfigure(i, weight=self._weight(i, note))
            a.configure(text=caption.upper())
            b.configure(text=figure)
            c.configure(text=note)

    @staticmethod
    def _wrap(label: ttk.Label, padding: int, event: tk.Event) -> None:
        width = max(1, event.width - padding)
        if str(label.cget("wraplength")) != str(width):
            label.configure(wraplength=width)

    def _weight(self, i: int, note: str) -> int:
        """Wide cards twice the others; a note with a long line (a plan's value, other machines) half again: two
        short lines (the spend against a budget, then the estimate) need no more width than one."""
        return 4 if i in self.wide else 3 if max(len(line) for line in note.split("\n")) > LONG_NOTE else 2

    def texts(self) -> list[tuple[str, str, str]]:
        return [(str(a.cget("text")), str(b.cget("text")), str(c.cget("text"))) for a, b, c in self.cells]


class Notice(ttk.Frame):
    """A message in place of the figures (unknown session, bad date, no ledger) with one way out."""

    def __init__(self, master: tk.Misc, metrics: Metrics):
        super().__init__(master, padding=metrics.px(40))
        self.columnconfigure(0, weight=1)
        self.headline = ttk.Label(self, style="Title.TLabel", anchor="center", justify="center")
        self.detail = ttk.Label(
            self, style="Muted.TLabel", anchor="center", justify="center", wraplength=metrics.px(620)
        )
        self.button = ttk.Button(self)
        self.headline.grid(row=1, column=0, pady=(0, metrics.px(8)))
        self.detail.grid(row=2, column=0, pady=(0, metrics.px(18)))
        self.button.grid(row=3, column=0)
        self.rowconfigure(0, weight=1)
        self.rowconfigure(4, weight=2)

    def show(
        self, headline: str, detail: str, action: str | None = None, command: Callable[[], None] | None = None
    ) -> None:
        self.headline.configure(text=headline)
        self.detail.configure(text=detail)
        if action and command:
            self.button.configure(text=action, command=command)
            self.button.grid()
            self.button.bind("<Return>", lambda e: self.button.invoke())
            self.button.focus_set()
        else:
            self.button.grid_remove()

    def text(self) -> str:
        return f"{self.headline.cget('text')}\n{self.detail.cget('text')}"


def show_text(label, text: str) -> None:
    """Set a gridded label's text; hide it (keeping its grid place) when there is none."""
    label.configure(text=text)
    if text:
        label.grid()
    else:
        label.grid_remove()


class BudgetBar(ttk.Progressbar):
    """A thin bar of how much of a budget is spent, shown only while a budget applies; the part past
    the budget is not drawn (the card says by how much)."""

    STYLE = "Budget.Horizontal.TProgressbar"
    LEVELS = {"ok": STYLE, "warn": "Warn." + STYLE, "over": "Over." + STYLE}

    def __init__(self, master: tk.Misc, metrics: Metrics):
        for style in self.LEVELS.values():
            ttk.Style(master).configure(style, thickness=metrics.px(6))
        super().__init__(master, orient="horizontal", mode="determinate", maximum=100, style=self.STYLE)
        self.share: float | None = None
        self.level = "ok"

    def show(self, share: float | None) -> None:
        """Coloured by level: neutral under 80 %, amber from 80 %, red from 100 % (theme.budget_styles)."""
        self.share = share
        if share is None:
            self.grid_remove()
            return
        self.level = "over" if share >= 1.0 else "warn" if share >= 0.8 else "ok"
        self.configure(value=min(share, 1.0) * 100, style=self.LEVELS[self.level])
        self.grid()


class FitLabel(ttk.Label):
    """A one-line label cut with an ellipsis to the width the grid gives it (grid it with sticky "ew"),
    and whole again when there is room."""

    def __init__(self, master: tk.Misc, **options):
        super().__init__(master, **options)
        self.full = ""
        self.bind("<Configure>", lambda e: self._fit(e.width))

    def set(self, text: str) -> None:
        self.full = text
        self._fit(self.winfo_width())

    def _fit(self, width: int) -> None:
        font = style_font(self, str(self.cget("style")) or "TLabel", "TkDefaultFont")
        shown = str(self.cget("text"))
        width -= max(0, self.winfo_reqwidth() - font.measure(shown)) if shown else 0  # its padding and border
        text = fit_text(self.full, width, font)
        if shown != text:
            self.configure(text=text)


def wrap_lines(text: str, width: int, font: tkfont.Font, lines: int) -> str:
    """`text` wrapped between words to `width` pixels of `font`, in at most `lines` lines: the last one that fits
    ends with "…" where there is more (a word wider than the line is cut too)."""
    if width <= 1:
        return text
    out: list[str] = []
    for word in text.split():
        if out and font.measure(f"{out[-1]} {word}") <= width:
            out[-1] += f" {word}"
        else:
            out.append(word)
    if len(out) > lines:
        out = out[: lines - 1] + [" ".join(out[lines - 1 :])]
    return "\n".join(fit_text(line, width, font) for line in out)


class WrapLabel(ttk.Label):
    """A label wrapped to the width the grid gives it (grid it with sticky "ew"), in at most `lines` lines, the
    last cut with "…" where the text needs more; `full` is the whole text."""

    def __init__(self, master: tk.Misc, lines: int, **options):
        super().__init__(master, justify="left", **options)
        self.full, self.lines = "", lines
        self.bind("<Configure>", lambda e: self._fit(e.width))

    def set(self, text: str, lines: int | None = None) -> None:
        self.full, self.lines = text, lines or self.lines
        self._fit(self.winfo_width())

    def _fit(self, width: int) -> None:
        font = style_font(self, str(self.cget("style")) or "TLabel", "TkDefaultFont")
        shown = str(self.cget("text"))
        if shown:  # its padding and border
            width -= max(0, self.winfo_reqwidth() - max(font.measure(line) for line in shown.split("\n")))
        text = wrap_lines(self.full, width, font, self.lines)
        if shown != text:
            self.configure(text=text)
