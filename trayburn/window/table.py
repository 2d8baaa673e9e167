"""The summary window's table: a Treeview with sortable headings, an optional totals line and an empty note,
updated in place by row id (the selection, the focus and the scroll position survive a refresh). Never computes
a figure or a text: it shows `models.Row`s, cut to the width of their columns.
"""

from __future__ import annotations

import functools
import tkinter as tk
import tkinter.font as tkfont
from collections.abc import Callable, Sequence
from tkinter import ttk
from typing import Literal

from . import models
from .theme import Metrics, Palette
from .widgets import fit_text, style_font

TOTALS_IID = "total"
FIT_SAMPLE = "the quick brown fox jumps over a lazy dog: Fix add() in app.py, 2026-11-30"


def _cut(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "…"


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
        self.room: dict[str, int] = {}  # ... and the pixels
        self.font = font
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
            self.room = {k: w - self.m.px(12) for k, w in widths.items()}
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
        """The texts cut to their columns: by the letters a column holds on average, then, where that is still
        too wide (digits and capitals are wider than most letters), to its pixels."""
        return [
            self._fit(c.key, str(v)) if c.key in self.chars else v for c, v in zip(self.columns, values, strict=True)
        ]

    def _fit(self, key: str, text: str) -> str:
        cut = _cut(text, self.chars[key])
        return cut if self.font.measure(cut) <= self.room[key] else fit_text(text, self.room[key], self.font)

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
        """Each heading with its sort arrow, ended with "…" where its column is narrower (never "Sessior"), none
        where the column has no room even for "…"."""
        font = style_font(self, "Treeview.Heading", "TkHeadingFont")
        for c in self.columns:
            arrow = (" ▼" if self.sort_desc else " ▲") if c.key == self.sort_key else ""
            text = c.heading + arrow
            if not c.fixed:
                room = int(self.tree.column(c.key, "width")) - self.m.px(16)
                text = fit_text(text, room, font)
                text = text if font.measure(text) <= room else ""
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
