"""*Export…* in the summary window: the platform's save dialog (GTK's native chooser on Linux, in a child
process so the window keeps drawing; Tk's elsewhere), opening in the Documents folder with the file name
filled in, then the period's calls as CSV or JSON (by the name's ending), streamed by `trayburn.figures.export` as
`trayburn export` writes them."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import tkinter as tk
from collections.abc import Callable
from tkinter import filedialog

from .. import platform as launch
from ..engine import Engine
from ..errors import TrayburnError
from ..figures import export
from ..figures import periods as pd
from . import model

log = logging.getLogger(__name__)


POLL_MS = 100  # how often the window looks whether the save dialog (a child process) has answered


def ask_and_export(root: tk.Misc, p: pd.Period, say: Callable[[str], None], write: Callable[[str], str]) -> None:
    from ..tray.dialogs import documents_folder

    name = f"trayburn-{p.since}" + ("" if p.days == 1 else f"-to-{p.until}") + ".csv"
    title = "Export the calls of " + p.label()
    folder = documents_folder()

    def chosen(path: str) -> None:
        if path:
            say(f"Exporting the calls of {p.label()}…")
            root.update_idletasks()  # a long period takes a second or two: say so first
            say(write(path))

    if sys.platform.startswith("linux") and not os.environ.get("TRAYBURN_TK_DIALOGS"):
        argv = launch.command("_dialog", "save", title, folder, name)
        try:
            child = subprocess.Popen(argv, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
        except OSError as exc:
            log.warning("the save dialog did not start (%s): Tk's instead", exc)
        else:
            _wait(root, child, chosen)
            return
    path = filedialog.asksaveasfilename(
        parent=root,
        title=title,
        initialdir=folder,
        initialfile=name,
        defaultextension=".csv",
        filetypes=[("CSV (spreadsheets)", "*.csv"), ("JSON", "*.json")],
    )
    chosen(path)


def _wait(root: tk.Misc, child: subprocess.Popen[str], then: Callable[[str], None]) -> None:
    """The window goes on drawing and refreshing while the dialog is open; its answer comes to `then`."""
    if child.poll() is None:
        root.after(POLL_MS, _wait, root, child, then)
        return
    out = child.stdout.read() if child.stdout else ""
    then(out.strip() if child.returncode == 0 else "")


def write_period(e: Engine, p: pd.Period, path: str) -> str:
    """Write the period's calls to `path` (JSON when it ends in .json, else CSV); what happened, in words."""
    fmt = "json" if path.lower().endswith(".json") else "csv"
    try:
        n = export.to_file(export.rows(e.ledger, e.book, p), path, fmt, e.money())
    except (OSError, ValueError, TrayburnError) as exc:
        log.warning("export to %s failed: %s", path, exc)
        return f"Could not export: {exc}"
    return f"Exported {n:,} calls to {model.clean(path, model.PATH_CHARS)}"
