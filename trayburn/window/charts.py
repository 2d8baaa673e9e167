"""The summary window's charts: cost per hour of a day, and cost per day of a period (a bar per day, the day
under the pointer named with its cost, a click on a bar opens that day). Never computes a figure: they draw the
values and `period_rows.Bar`s they are given.
"""

from __future__ import annotations

import math
import tkinter as tk
import tkinter.font as tkfont
from collections.abc import Callable, Sequence
from datetime import date

from ..figures.money import Money
from . import models
from .models import USD
from .period_rows import Bar, bar_label
from .theme import Metrics, Palette

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
