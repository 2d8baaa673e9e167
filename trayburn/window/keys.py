"""The summary window's keys: bound on its toplevel (`bind_keys`), so they apply wherever the focus is, except
where a text field needs the key. Never shows or computes anything itself: each key calls the window's own action.

Arrows and Alt+arrows change the day, Enter opens (the table's own binding), Escape or Backspace go back (Escape
closes the window where there is nothing to go back to), Ctrl+A selects every row of the table, Ctrl+C copies the
selected rows as text (in a session: its id unless rows of its tables are selected), F5 refreshes, Ctrl+W/Q close.
"""

from __future__ import annotations

import functools
import tkinter as tk
from tkinter import ttk
from typing import Protocol

from .table import Table


class Window(Protocol):
    """What the keys need of the summary window (`app.SummaryWindow`)."""

    root: tk.Tk

    @property
    def day_view(self) -> ttk.Frame: ...

    @property
    def period_view(self) -> ttk.Frame: ...

    @property
    def session_view(self) -> ttk.Frame: ...

    @property
    def current(self) -> ttk.Frame: ...

    def step(self, n: int) -> None: ...

    def back(self) -> None: ...

    def close(self) -> None: ...

    def refresh(self) -> None: ...

    def copy_id(self) -> None: ...

    def say(self, text: str) -> None: ...


ALT = 0x0008  # Mod1 in an X event's state


def bind_keys(win: Window) -> None:
    """The window's keys, on its toplevel (see the module's docstring)."""
    r = win.root
    for seq in ("<Control-w>", "<Control-W>", "<Control-q>", "<Control-Q>"):
        r.bind(seq, lambda e: win.close())
    for seq, step in (("<Left>", -1), ("<Right>", 1), ("<Alt-Left>", -1), ("<Alt-Right>", 1)):
        r.bind(seq, functools.partial(_key_arrow, win, step=step))
    for seq in ("<Escape>", "<BackSpace>"):
        r.bind(seq, lambda e: _key_escape(win, e))
    r.bind("<Control-c>", lambda e: _key_copy(win, e))
    for seq in ("<Control-a>", "<Control-A>"):
        r.bind(seq, lambda e: _key_select_all(win, e))
    r.bind("<F5>", lambda e: win.refresh())
    r.bind("<Control-r>", lambda e: win.refresh())


def _in_text_field(event: tk.Event) -> bool:
    return isinstance(event.widget, (ttk.Entry, tk.Entry))


def _key_arrow(win: Window, event: tk.Event, step: int) -> str | None:
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


def _key_escape(win: Window, event: tk.Event) -> str | None:
    if _in_text_field(event):
        return None
    if win.current is win.session_view:
        win.back()
    elif event.keysym == "Escape":
        win.close()  # nothing to go back to: Escape closes, as a dialog-like window does
    else:
        return None
    return "break"


def _key_table(win: Window, event: tk.Event) -> Table | None:
    """The table the key is for: the one with the focus, else the current view's main table."""
    master = getattr(event.widget, "master", None)
    if isinstance(master, Table):
        return master
    view = win.current
    return getattr(view, "sessions", None) or getattr(view, "calls", None)


def _key_select_all(win: Window, event: tk.Event) -> str | None:
    if _in_text_field(event):
        return None
    table = _key_table(win, event)
    if table is None:
        return None
    table.select_all()
    return "break"


def _key_copy(win: Window, event: tk.Event) -> str | None:
    if _in_text_field(event):
        return None
    table = _key_table(win, event)
    if win.current is win.session_view and (table is None or not table.chosen()):
        win.copy_id()  # as the footer says: the row the view selected for the arrow keys is not a choice
        return "break"
    text = table.selected_text() if table is not None else ""
    if not text:
        return None
    win.root.clipboard_clear()
    win.root.clipboard_append(text)
    rows = text.count("\n") - 1
    win.say(f"Copied {rows} row{'s' if rows != 1 else ''}")
    return "break"
