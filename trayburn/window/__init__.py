"""The summary window as a process: `trayburn summary` (`main`) and whether Tk is here (`tk_missing`).

`trayburn summary [SESSION_ID] [--date D] [--period day|week|month]` opens the window in its own process,
started by the tray (its day, week and month lines) or by hand, so it never blocks the tray; the tray keeps
one such window and writes it requests on its stdin (`listen_for_requests`).

The window needs Tk for Python, which some systems ship apart (Debian and Ubuntu: python3-tk). Importing this
package never imports tkinter (only `main` does, once `tk_missing` said it is there), so the CLI and the tray
say a missing Tk in one clear line instead of a traceback.
"""

from __future__ import annotations

import functools
import logging
import os
import sqlite3
import sys
from typing import TYPE_CHECKING

from .. import system
from ..engine import Engine
from ..errors import Exit, TrayburnError
from ..figures import periods

if TYPE_CHECKING:
    import tkinter as tk

    from .app import SummaryWindow

log = logging.getLogger(__name__)
BUSY_TIMEOUT_S = 2.0

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


def open_engine(config: str | None, state_dir: str | None) -> tuple[Engine | None, str | None]:
    """The engine, or None and what went wrong, in words for the window."""
    try:
        # A short wait for the ledger: the tray may be writing a big ingest; the window shows what
        # it has and tries again at its next refresh rather than freezing for SQLite's 30 s.
        return Engine(config, state_dir, busy_timeout_s=BUSY_TIMEOUT_S), None
    except TrayburnError as exc:  # the ledger cannot be opened (newer, locked, …), the state folder refused
        problem = str(exc)
    except OSError as exc:
        problem = f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc)
    except sqlite3.Error as exc:
        problem = f"the ledger cannot be opened ({exc})"
    log.error("cannot open the ledger: %s", problem)
    return None, problem


def main(args) -> int:
    """`trayburn summary`: open the window and run until it is closed."""
    system.setup()
    missing = tk_missing()
    if missing:  # no python3-tk: one line, no traceback
        _say(missing)
        return int(Exit.CANNOT_SHOW)
    import tkinter as tk  # (only now: Tk is there)

    from .app import APP_TITLE, SummaryWindow  # (imports tkinter)

    try:
        root = tk.Tk(className=APP_TITLE)
        root.withdraw()  # mapped by `SummaryWindow.start` once built and laid out: never shown blank
    except tk.TclError as exc:
        message = (
            f"cannot open a window ({exc}); `trayburn today` and `trayburn session ID` show the same "
            "figures in a terminal"
        )
        _say(message)
        return int(Exit.CANNOT_SHOW)  # as the tray's

    engine, problem = open_engine(getattr(args, "config", None), getattr(args, "state_dir", None))
    window = SummaryWindow(
        root,
        engine,
        day=getattr(args, "date", None),
        kind=getattr(args, "period", None) or "day",
        session_id=getattr(args, "session_id", None),
        problem=problem,
    )
    window.start()
    listen_for_requests(root, window)
    root.mainloop()
    return 0


def _say(message: str) -> None:
    if sys.stderr:
        print(f"trayburn: {message}", file=sys.stderr)
    log.error("%s", message)  # started without a terminal (gui-scripts): the log is all there is


def listen_for_requests(root: tk.Tk, window: SummaryWindow) -> None:
    """The tray keeps one summary window: it writes `raise`, `day`, `period KIND` or `session ID` lines
    to our stdin (a pipe) and the window shows that and lifts itself. Not on Windows (Tk has no file handlers)."""
    if os.name == "nt" or sys.stdin is None or sys.stdin.isatty():
        return
    fd = sys.stdin.fileno()

    def readable(_fd: int, _mask: int) -> None:
        data = os.read(fd, 4096)
        if not data:  # the tray is gone: keep the window, stop listening
            root.tk.deletefilehandler(fd)
            return
        for line in data.decode("utf-8", "replace").splitlines():
            verb, _, arg = line.strip().partition(" ")
            if verb == "session" and arg:
                window.show_session(arg)
            elif verb == "day":
                window.show_day(None)
            elif verb == "period" and arg in ("day", "week", "month"):
                window.show_period(periods.of_kind(arg, window.today()))
        root.deiconify()
        root.lift()
        root.focus_force()

    import tkinter  # (loaded already by `main`; the package itself never imports it)

    root.tk.createfilehandler(fd, tkinter.READABLE, readable)
