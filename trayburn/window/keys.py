"""The summary window's keys: arrows and Alt+arrows change the day, Enter opens (the table's own
binding), Escape or Backspace go back, Ctrl+C copies the session id, F5 refreshes, Ctrl+W/Q close.

Bound on the toplevel, so they apply wherever the focus is, except where a text field needs the key.
"""

from __future__ import annotations

import functools
import tkinter as tk
from tkinter import ttk
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .app import SummaryWindow

ALT = 0x0008  # Mod1 in an X event's state


def bind(win: SummaryWindow) -> None:
    r = win.root
    for seq in ("<Control-w>", "<Control-W>", "<Control-q>", "<Control-Q>"):
        r.bind(seq, lambda e: win.close())
    for seq, step in (("<Left>", -1), ("<Right>", 1), ("<Alt-Left>", -1), ("<Alt-Right>", 1)):
        r.bind(seq, functools.partial(arrow, win, step=step))
    for seq in ("<Escape>", "<BackSpace>"):
        r.bind(seq, lambda e: escape(win, e))
    r.bind("<Control-c>", lambda e: copy(win, e))
    r.bind("<F5>", lambda e: win.refresh())
    r.bind("<Control-r>", lambda e: win.refresh())


def _in_text_field(event: tk.Event) -> bool:
    return isinstance(event.widget, (ttk.Entry, tk.Entry))


def arrow(win: SummaryWindow, event: tk.Event, step: int) -> str | None:
    alt = isinstance(event.state, int) and bool(event.state & ALT)  # a str only for non-key events
    if _in_text_field(event) and not alt:
        return None  # plain arrows move the cursor in the date field
    if win.current in (win.day_view, win.period_view):
        win.step(step)
        return "break"
    if win.current is win.session_view and alt and step < 0:
        win.back()  # Alt+Left: back, as in a browser
        return "break"
    return None


def escape(win: SummaryWindow, event: tk.Event) -> str | None:
    if _in_text_field(event) or win.current is not win.session_view:
        return None
    win.back()
    return "break"


def copy(win: SummaryWindow, event: tk.Event) -> str | None:
    if _in_text_field(event) or win.current is not win.session_view:
        return None
    win.copy_id()
    return "break"
