"""The summary window's building blocks: a sortable table, cards, a budget bar, fitting labels, the charts.

The table is updated in place (keeping selection and scroll); labels are cut to their width; the charts are
cost per hour of a day, and cost per day of a period (a bar per day, the day under the pointer named with its
cost, a click on a bar opens that day). They show `models.Row`s and strings; they know nothing of the engine.
"""

from __future__ import annotations

import functools
import math
import tkinter as tk
import tkinter.font as tkfont
from collections.abc import Callable, Sequence
from datetime import date
from tkinter import ttk
from typing import Literal

from ..figures.money import Money
from . import models
from .models import USD, Bar, bar_label
from .theme import Metrics, Palette

TOTALS_IID = "total"
LONG_NOTE = 32  # characters: a card's note line longer than this widens its card (see `Cards._weight`)
FIT_SAMPLE = "the quick brown fox jumps over a lazy dog: Fix add() in app.py, 2026-11-30"


def _cut(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "…"


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


class Table(ttk.Frame):
    """A Treeview with a scrollbar, sortable headings, an optional totals line and an empty note.

    `set_rows` updates rows in place by id, so the selection, the focus and the scroll position
    survive a refresh.
    """

    def __init__(
        self,
        master: tk.Misc,
        columns: Sequence[models.Column],
        metrics: Metrics,
        *,
        height: int = 8,
        totals: bool = False,
        empty: str = "Nothing to show.",
        sort: tuple[str, bool] | None = None,
        on_open: Callable[[str], None] | None = None,
    ):
        super().__init__(master, style="Table.TFrame", padding=1)
        self.columns, self.on_open = tuple(columns), on_open
        self.rows: dict[str, models.Row] = {}
        self.m = metrics
        font = tkfont.nametofont("TkDefaultFont", root=self)
        self.unit = font.measure("0")
        # a generous average letter (titles are mostly lower case): a text is cut to what its column holds
        self.letter = font.measure(FIT_SAMPLE) / len(FIT_SAMPLE) * 1.08
        self.chars: dict[str, int] = {}  # text column → characters it holds at its current width
        self._tags: dict[str, tuple[str, ...]] = {}  # the tags each row has in the tree
        self.sort_key: str | None = sort[0] if sort else None
        self.sort_desc = sort[1] if sort else False
        keys = [c.key for c in self.columns]
        self.tree = ttk.Treeview(self, columns=keys, show="headings", height=height, selectmode="extended")
        self.vsb = ttk.Scrollbar(self, orient="vertical", command=self.tree.yview)
        self.tree.configure(yscrollcommand=self._scrolled)
        self.tree.grid(row=0, column=0, sticky="nsew")
        self.vsb.grid(row=0, column=1, sticky="ns")
        self.columnconfigure(0, weight=1)
        self.rowconfigure(0, weight=1)
        self.totals: ttk.Treeview | None = None
        self.totals_values: tuple[str, ...] = ()
        self._setup_columns(self.tree, metrics, headings=True)
        self.totals = self._totals(metrics, keys) if totals else None
        self.empty = ttk.Label(self, text=empty, style="Muted.TLabel", anchor="center")
        self.tree.bind("<Configure>", lambda e: self._layout(e.width), add=True)
        self.tree.bind("<Double-1>", self._double_click)
        self.tree.bind("<Return>", self._enter)
        self.tree.bind("<KP_Enter>", self._enter)

    def _setup_columns(self, tree: ttk.Treeview, metrics: Metrics, headings: bool) -> None:
        for c in self.columns:
            anchor: Literal["e", "w"] = "e" if c.numeric else "w"
            if headings:
                tree.heading(c.key, text=c.heading, anchor=anchor, command=functools.partial(self.sort_by, c.key))
            width = self._natural(c)
            # `_layout` sets every width as the table's own width changes: figures keep theirs
            tree.column(c.key, width=width // 2 if c.stretch else width, minwidth=0, anchor=anchor, stretch=False)

    def _natural(self, c: models.Column) -> int:
        return self.unit * c.chars + self.m.px(16)

    def _layout(self, width: int) -> None:
        """Share the table's width: figures (numeric columns) always whole at their natural width, the
        stretching column takes what is left over, and when room is short the text columns give it up,
        in proportion, their texts cut with an ellipsis, each keeping the width of its heading while the
        headings fit at all."""
        numeric = sum(self._natural(c) for c in self.columns if c.fixed)
        texts = [c for c in self.columns if not c.fixed]
        wanted = {c.key: self._natural(c) // (2 if c.stretch else 1) for c in texts}
        room = max(width - numeric, len(texts) * self.unit * 3)
        extra = room - sum(wanted.values())
        stretch = [c for c in texts if c.stretch]
        widths = {}
        if extra >= 0:
            for c in texts:
                widths[c.key] = wanted[c.key] + (extra // len(stretch) if c in stretch else 0)
        else:
            floor = {c.key: min(wanted[c.key], self._heading_width(c)) for c in texts}
            if sum(floor.values()) > room:  # not even the headings fit: the figures keep their room first
                floor = {k: min(wanted[k], self.unit * 3) for k in floor}
            spare = max(room - sum(floor.values()), 0)
            need = {k: wanted[k] - floor[k] for k in floor}
            for k in floor:
                widths[k] = floor[k] + int(need[k] * spare / (sum(need.values()) or 1))
        for c in self.columns:
            self.tree.column(c.key, width=widths.get(c.key, self._natural(c)))
        chars = {k: max(int((w - self.m.px(12)) / self.letter), 2) for k, w in widths.items()}
        if chars != self.chars:
            self.chars = chars
            for r in self.rows.values():
                self.tree.item(r.iid, values=self._fitted(r.values))
            self.set_totals(self.totals_values)
        self._headings()
        if self.totals is not None:
            self.after_idle(self._sync_widths)

    def _heading_width(self, c: models.Column) -> int:
        """What a column's heading needs, with the sort arrow and the heading's padding."""
        return style_font(self, "Treeview.Heading", "TkHeadingFont").measure(c.heading + " ▼") + self.m.px(20)

    def _fitted(self, values: Sequence[str]) -> list[str]:
        return [
            _cut(str(v), self.chars[c.key]) if c.key in self.chars else v
            for c, v in zip(self.columns, values, strict=True)
        ]

    def _totals(self, metrics: Metrics, keys: list[str]) -> ttk.Treeview:
        line = ttk.Treeview(
            self, columns=keys, show="", height=1, selectmode="none", style="Totals.Treeview", takefocus=False
        )
        self._setup_columns(line, metrics, headings=False)
        line.insert("", "end", iid=TOTALS_IID, values=[""] * len(keys))
        line.grid(row=1, column=0, sticky="ew")
        self.tree.bind("<Configure>", lambda e: self.after_idle(self._sync_widths), add=True)
        self.tree.bind("<ButtonRelease-1>", lambda e: self.after_idle(self._sync_widths), add=True)
        return line

    def _sync_widths(self) -> None:
        if self.totals is not None and self.winfo_exists():
            for c in self.columns:
                self.totals.column(c.key, width=self.tree.column(c.key, "width"))

    def _scrolled(self, first: str | float, last: str | float) -> None:  # Tk passes strings
        self.vsb.set(first, last)
        if float(first) <= 0.0 and float(last) >= 1.0:
            self.vsb.grid_remove()
        else:
            self.vsb.grid()

    # ---- content --------------------------------------------------------------------------------

    def set_rows(self, rows: Sequence[models.Row]) -> None:
        top = self.tree.yview()[0]
        fresh = {r.iid: r for r in rows}
        gone = [iid for iid in self.tree.get_children() if iid not in fresh]
        if gone:
            self.tree.delete(*gone)
            for iid in gone:
                self._tags.pop(iid, None)
        for r in rows:
            if not self.tree.exists(r.iid):
                self.tree.insert("", "end", iid=r.iid, values=self._fitted(r.values))
            elif self.rows.get(r.iid) != r:
                self.tree.item(r.iid, values=self._fitted(r.values))
        self.rows = fresh
        self._order()
        self.tree.yview_moveto(top)
        if rows:
            self.empty.place_forget()
        else:
            self.empty.place(relx=0.5, rely=0.5, anchor="center")

    def set_totals(self, values: Sequence[str]) -> None:
        """The totals line, its texts cut to their columns as the rows' are."""
        self.totals_values = tuple(values)
        if self.totals is not None and self.totals_values:
            font = style_font(self, "Totals.Treeview", "TkDefaultFont")  # bold: wider than the rows' letters
            fitted = [
                fit_text(str(v), int(self.tree.column(c.key, "width")) - self.m.px(12), font) if not c.fixed else v
                for c, v in zip(self.columns, self.totals_values, strict=True)
            ]
            self.totals.item(TOTALS_IID, values=fitted)

    def shown(self, iid: str) -> dict[str, str]:
        """The cells of a row as they are on screen (cut to their columns)."""
        return {k: str(v) for k, v in self.tree.set(iid).items()}

    def sort_by(self, key: str, descending: bool | None = None) -> None:
        """Sort by a column; the selected row stays in view (else the view stays where it was)."""
        if descending is None:
            column = next(c for c in self.columns if c.key == key)
            descending = (not self.sort_desc) if key == self.sort_key else column.numeric
        self.sort_key, self.sort_desc = key, descending
        top = self.tree.yview()[0]
        self._order()
        self.tree.yview_moveto(top)
        if self.selected and self.tree.winfo_ismapped():
            self.tree.see(self.selected)

    def _order(self) -> None:
        keys = [c.key for c in self.columns]
        rows = list(self.rows.values())
        if self.sort_key in keys:
            rows = models.sort_rows(rows, keys.index(self.sort_key), self.sort_desc)
        if [r.iid for r in rows] != list(self.tree.get_children()):
            for index, r in enumerate(rows):
                self.tree.move(r.iid, "", index)
        for index, r in enumerate(rows):
            tags = r.tags + (("odd",) if index % 2 else ())
            if self._tags.get(r.iid) != tags:  # a Tk call only where the stripes or the state changed
                self.tree.item(r.iid, tags=tags)
                self._tags[r.iid] = tags
        self._headings()

    def _headings(self) -> None:
        """Each heading with its sort arrow, ended with "…" where its column is narrower (never "Sessior")."""
        font = style_font(self, "Treeview.Heading", "TkHeadingFont")
        for c in self.columns:
            arrow = (" ▼" if self.sort_desc else " ▲") if c.key == self.sort_key else ""
            text = c.heading + arrow
            if not c.fixed:
                text = fit_text(text, int(self.tree.column(c.key, "width")) - self.m.px(16), font)
            if str(self.tree.heading(c.key, "text")) != text:
                self.tree.heading(c.key, text=text)

    def recolor(self, p: Palette) -> None:
        self.tree.tag_configure("odd", background=p.stripe)
        self.tree.tag_configure("running", foreground=p.running)
        self.tree.tag_configure("failed", foreground=p.failed)
        self.tree.tag_configure("cancelled", foreground=p.cancelled)
        self.tree.tag_configure("stale", foreground=p.muted)
        self.tree.tag_configure("removed", foreground=p.muted)
        self.empty.configure(background=p.surface)

    # ---- selection and keys ---------------------------------------------------------------------

    @property
    def selected(self) -> str | None:
        chosen = self.tree.selection()
        return chosen[0] if chosen else None

    def order(self) -> list[str]:
        return list(self.tree.get_children())

    def select_all(self) -> None:
        """Every row selected (Ctrl+A)."""
        self.tree.selection_set(self.order())

    def selected_text(self) -> str:
        """The selected rows as text, in the order shown: a header line, then one line a row, the cells whole
        (not cut to their columns) and tab-separated, as a spreadsheet or an editor takes them."""
        chosen = set(self.tree.selection())
        rows = [self.rows[iid] for iid in self.order() if iid in chosen and iid in self.rows]
        if not rows:
            return ""
        lines = ["\t".join(c.heading for c in self.columns)]
        lines += ["\t".join(str(v) for v in r.values) for r in rows]
        return "\n".join(lines) + "\n"

    def focus_rows(self) -> None:
        """Keyboard focus on the table, on the selected row (or the first)."""
        self.tree.focus_set()
        iid = self.selected or next(iter(self.tree.get_children()), None)
        if iid:
            self.tree.selection_set(iid)
            self.tree.focus(iid)
            if self.tree.winfo_ismapped():  # an unmapped tree scrolls oddly; a hidden one kept its place
                self.tree.see(iid)
        self._given = tuple(self.tree.selection())

    def chosen(self) -> bool:
        """Whether rows are selected by the person (not only the row `focus_rows` selected for the arrow keys)."""
        selection = tuple(self.tree.selection())
        return bool(selection) and selection != getattr(self, "_given", ())

    def _double_click(self, event: tk.Event) -> str | None:
        if self.tree.identify_region(event.x, event.y) != "cell":
            return None
        iid = self.tree.identify_row(event.y)
        if iid and self.on_open:
            self.on_open(iid)
        return "break"

    def _enter(self, _event: tk.Event) -> str | None:
        iid = self.tree.focus() or self.selected
        if iid and self.on_open:
            self.on_open(iid)
            return "break"
        return None


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
            # the note wraps to its card's width (at the minimum size "4 failed · 1 cancelled · 1 stale" does not fit)
            card.bind("<Configure>", functools.partial(self._wrap, labels[2], 2 * metrics.px(12)))
            self.cells.append(labels)

    def show(self, cards: Sequence[tuple[str, str, str]]) -> None:
        for i, ((caption, figure, note), (a, b, c)) in enumerate(zip(cards, self.cells, strict=False)):
            self.columnconfigure(i, weight=self._weight(i, note))
            a.configure(text=caption.upper())
            b.configure(text=figure)
            c.configure(text=note)

    @staticmethod
    def _wrap(note: ttk.Label, padding: int, event: tk.Event) -> None:
        width = max(1, event.width - padding)
        if str(note.cget("wraplength")) != str(width):
            note.configure(wraplength=width)

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


LABELS = 12  # at most this many day labels under the bars


class _Bars(tk.Canvas):
    """What both charts share: a canvas of equal slots that redraws on resize and on a new palette."""

    def __init__(self, master: tk.Misc, metrics: Metrics, palette: Palette, height: int):
        super().__init__(master, height=height, highlightthickness=0, borderwidth=0)
        self.m, self.p = metrics, palette
        self.money = USD
        self.hover: int | None = None
        self.bind("<Configure>", lambda e: self.redraw())
        self.bind("<Motion>", self._motion)
        self.bind("<Leave>", lambda e: self._set_hover(None))

    def redraw(self) -> None:
        raise NotImplementedError

    def _motion(self, event: tk.Event) -> None:
        raise NotImplementedError

    def _set_hover(self, i: int | None) -> None:
        raise NotImplementedError

    def recolor(self, p: Palette) -> None:
        self.p = p
        self.redraw()

    def _slots(self, n: int) -> tuple[float, float, float, float]:
        """left, top, bottom, slot width, for `n` slots"""
        px = self.m.px
        left, right = px(10), self.winfo_width() - px(10)
        return left, px(26), self.winfo_height() - px(20), max(1.0, (right - left) / max(n, 1))


class DayChart(_Bars):
    def __init__(
        self, master: tk.Misc, metrics: Metrics, palette: Palette, height: int, on_day: Callable[[date], None]
    ):
        super().__init__(master, metrics, palette, height)
        self.on_day = on_day
        self.bars: list[Bar] = []
        self.today: date | None = None
        self.bind("<Button-1>", self._click)

    def show(self, bars: Sequence[Bar], today: date | None, money: Money = USD) -> None:
        self.bars, self.today, self.money = list(bars), today, money
        if self.hover is not None and self.hover >= len(self.bars):
            self.hover = None
        self.redraw()

    def _geometry(self) -> tuple[float, float, float, float]:
        return self._slots(len(self.bars))

    def redraw(self) -> None:
        p, px = self.p, self.m.px
        self.delete("all")
        self.configure(background=p.surface)
        left, top, bottom, slot = self._geometry()
        peak = max((b.cost_usd for b in self.bars), default=0.0)
        small = tkfont.nametofont("trayburn.small", root=self)
        self.create_line(left, bottom, left + slot * len(self.bars), bottom, fill=p.border)
        gap = max(1.0, slot * 0.2)
        every = max(1, math.ceil(len(self.bars) / LABELS))
        for i, bar in enumerate(self.bars):
            x0 = left + i * slot + gap / 2
            height = (bottom - top) * bar.cost_usd / peak if peak else 0
            height = max(height, 2 if bar.cost_usd > 0 else 0)
            fill = p.accent if i == self.hover else p.bar
            if height:
                self.create_rectangle(
                    x0, bottom - height, x0 + slot - gap, bottom, fill=fill, width=0, tags=("bar", f"d{i}")
                )
            if bar.day == self.today:
                self.create_line(x0, bottom + px(2), x0 + slot - gap, bottom + px(2), fill=p.accent, width=px(2))
            if i % every == 0:
                self.create_text(
                    x0 + (slot - gap) / 2, bottom + px(4), text=str(bar.day.day), anchor="n", font=small, fill=p.muted
                )
        self.create_text(
            left, px(4), text=self._caption(peak), anchor="nw", font=small, fill=p.muted, tags=("caption",)
        )

    def _caption(self, peak: float) -> str:
        if self.hover is not None:
            return bar_label(self.bars[self.hover], self.money) + "   (click: open the day)"
        if peak:
            busiest = next(b for b in self.bars if b.cost_usd == peak)
            return "Busiest day " + bar_label(busiest, self.money)
        return "No spend in this period"

    def _index_at(self, x: float, y: float) -> int | None:
        left, top, bottom, slot = self._geometry()
        i = int((x - left) // slot)
        inside = 0 <= i < len(self.bars) and x >= left and 0 <= y <= bottom + self.m.px(18)
        return i if inside else None

    def _motion(self, event: tk.Event) -> None:
        self._set_hover(self._index_at(event.x, event.y))

    def _click(self, event: tk.Event) -> None:
        i = self._index_at(event.x, event.y)
        if i is not None:
            self.on_day(self.bars[i].day)

    def _set_hover(self, i: int | None) -> None:
        if i != self.hover:
            self.hover = i
            self.redraw()

    def caption(self) -> str:
        items = self.find_withtag("caption")
        return str(self.itemcget(items[0], "text")) if items else ""

    def bar_center(self, day: date) -> tuple[int, int]:
        """Where a person would point to open `day` (for the desktop tests)."""
        left, top, bottom, slot = self._geometry()
        i = next(n for n, b in enumerate(self.bars) if b.day == day)
        return int(left + (i + 0.5) * slot), int(bottom - 1)


class HourChart(_Bars):
    """Cost per hour of the day: 24 bars, a label every three hours, the value under the pointer."""

    def __init__(self, master: tk.Misc, metrics: Metrics, palette: Palette, height: int):
        super().__init__(master, metrics, palette, height)
        self.values: list[float] = [0.0] * 24
        self.now_hour: int | None = None

    def show(self, values: Sequence[float], now_hour: int | None = None, money: Money = USD) -> None:
        self.values, self.now_hour = list(values)[:24] + [0.0] * (24 - len(values)), now_hour
        self.money = money
        self.redraw()

    def _geometry(self) -> tuple[float, float, float, float]:
        return self._slots(24)

    def redraw(self) -> None:
        p, px = self.p, self.m.px
        self.delete("all")
        self.configure(background=p.surface)
        left, top, bottom, slot = self._geometry()
        peak = max(self.values) if any(self.values) else 0.0
        small = tkfont.nametofont("trayburn.small", root=self)
        self.create_line(left, bottom, left + slot * 24, bottom, fill=p.border)
        gap = max(1.0, slot * 0.2)
        for hour, value in enumerate(self.values):
            x0 = left + hour * slot + gap / 2
            height = (bottom - top) * value / peak if peak else 0
            height = max(height, 2 if value > 0 else 0)
            fill = p.accent if hour == self.hover else p.bar
            if height:
                self.create_rectangle(
                    x0, bottom - height, x0 + slot - gap, bottom, fill=fill, width=0, tags=("bar", f"h{hour}")
                )
            if hour == self.now_hour:
                self.create_line(x0, bottom + px(2), x0 + slot - gap, bottom + px(2), fill=p.accent, width=px(2))
            if hour % 3 == 0:
                self.create_text(
                    x0 + (slot - gap) / 2, bottom + px(4), text=f"{hour:02d}", anchor="n", font=small, fill=p.muted
                )
        if self.hover is not None:
            text = f"{models.hour_label(self.hover)}   {models.amount(self.money, self.values[self.hover])}"
        elif peak:
            busiest = self.values.index(peak)
            text = f"Busiest hour {models.hour_label(busiest)}   {models.amount(self.money, peak)}"
        else:
            text = "No spend on this day"
        self.create_text(left, px(4), text=text, anchor="nw", font=small, fill=p.muted, tags=("caption",))

    def _motion(self, event: tk.Event) -> None:
        left, top, bottom, slot = self._geometry()
        hour = int((event.x - left) // slot)
        self._set_hover(hour if 0 <= hour < 24 and top - slot <= event.y <= bottom + 2 else None)

    def _set_hover(self, hour: int | None) -> None:
        if hour != self.hover:
            self.hover = hour
            self.redraw()

    def caption(self) -> str:
        items = self.find_withtag("caption")
        return str(self.itemcget(items[0], "text")) if items else ""
