"""Whether the summary window can be had here: it needs Tk for Python, which some systems ship apart
(Debian and Ubuntu: python3-tk). Imports nothing of the window, so a missing Tk is one clear line."""

from __future__ import annotations

import functools

NO_TK = (
    "the summary window needs Tk for Python, which is not installed here: install python3-tk "
    "(Debian, Ubuntu; python3-tkinter on Fedora, tk on Arch); `trayburn today` shows the same figures in a terminal"
)


@functools.cache
def tk_missing() -> str | None:
    """None where tkinter imports, else the line to say (once a process: a failed import is not retried)."""
    try:
        import tkinter  # noqa: F401
    except ImportError:
        return NO_TK
    return None
