"""The window's legacy title (WM_NAME) in the encoding X says it has: Tk writes the UTF-8 bytes of the title into
WM_NAME typed STRING, which is Latin-1, so a pager, `xdotool getwindowname` or an old window manager showed
"trayburn â\\x80\\x94 …" for "trayburn — …". Window managers that read _NET_WM_NAME (UTF-8, which Tk writes right)
are unaffected. This rewrites WM_NAME as Latin-1 text (a dash for the dashes Latin-1 lacks) after Tk wrote it.

X11 only, through python-xlib (which pystray brings on Linux); without it nothing changes. Never raises.
"""

from __future__ import annotations

import logging
import tkinter as tk
from typing import Any

log = logging.getLogger(__name__)
AFTER_MS = 10
LATIN1 = str.maketrans({"—": "-", "–": "-", "…": "...", "‘": "'", "’": "'", "“": '"', "”": '"'})


def latin1(title: str) -> bytes:
    return title.translate(LATIN1).encode("latin-1", "replace")


class LegacyName:
    """Keeps a Tk toplevel's WM_NAME a Latin-1 copy of its title (`set` after each title; at each map)."""

    def __init__(self, root: tk.Tk):
        self.root = root
        self._display: Any = None
        self._pending = ""
        self._off = root.tk.call("tk", "windowingsystem") != "x11"
        if not self._off:
            root.bind("<Map>", self._mapped, add="+")

    def _mapped(self, event: tk.Event) -> None:
        if event.widget is self.root:
            self.set()

    def set(self) -> None:
        """After Tk wrote the title (in its own connection's buffer, sent when Tk next waits for events): a few ms
        later, from the event loop, so this write comes after Tk's and is the one that stays."""
        if self._off:
            return
        if self._pending:
            self.root.after_cancel(self._pending)
        self._pending = self.root.after(AFTER_MS, self._now)

    def _now(self) -> None:
        self._pending = ""
        try:
            self._write(latin1(self.root.title()))
        except ImportError:  # no python-xlib: the title itself is fine
            self._off = True
        except Exception:  # the X window is not there yet (its map writes the name again), or the display went
            log.debug("cannot rewrite WM_NAME", exc_info=True)

    def _write(self, name: bytes) -> None:
        from Xlib import Xatom
        from Xlib import display as xdisplay

        if self._display is None:
            self._display = xdisplay.Display(self.root.winfo_screen())
        inner = self._display.create_resource_object("window", self.root.winfo_id())
        wrapper = inner.query_tree().parent  # Tk's wrapper window carries the WM_* properties
        if wrapper.get_full_property(Xatom.WM_NAME, 0) is None:  # not set by Tk yet: at the map
            return
        wrapper.change_property(Xatom.WM_NAME, Xatom.STRING, 8, name)
        self._display.flush()

    def close(self) -> None:
        if self._pending:
            self.root.after_cancel(self._pending)
            self._pending = ""
        if self._display is not None:
            self._display.close()
            self._display = None
