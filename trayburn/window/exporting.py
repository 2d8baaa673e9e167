"""Export… in the summary window: the platform's save dialog, then the period's calls written where it says.
Never computes a figure: `trayburn.figures.export` writes the calls as `trayburn export` does.

The dialog is GTK's native chooser on Linux, in a child process so the window keeps drawing (`_dialog save`),
Tk's elsewhere (or with TRAYBURN_TK_DIALOGS set); it opens in the Documents folder with the file name filled in.
The name's ending chooses the format: JSON for .json, CSV otherwise.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import tkinter as tk
from collections.abc import Callable
from tkinter import filedialog

from .. import system
from ..engine import Engine
from ..errors import TrayburnError
from ..figures import export, periods
from . import models

log = logging.getLogger(__name__)
POLL_MS = 100  # how often the window looks whether the save dialog (a child process) has answered


def documents_folder() -> str:
    """Where an export starts: the desktop's Documents folder (XDG), else ~/Documents, else home."""
    try:
        import gi

        gi.require_version("GLib", "2.0")
        from gi.repository import GLib

        found = GLib.get_user_special_dir(GLib.UserDirectory.DIRECTORY_DOCUMENTS)
        if found and os.path.isdir(found) and os.path.realpath(found) != os.path.realpath(os.path.expanduser("~")):
            return str(found)
    except (ImportError, ValueError, AttributeError):
        pass
    documents = os.path.expanduser("~/Documents")
    return documents if os.path.isdir(documents) else os.path.expanduser("~")


def ask_and_export(root: tk.Misc, p: periods.Period, say: Callable[[str], None], write: Callable[[str], str]) -> None:
    name = f"trayburn-{p.since}" + ("" if p.days == 1 else f"-to-{p.until}") + ".csv"
    title = "Export the calls of " + p.label()
    folder = documents_folder()

    def chosen(path: str) -> None:
        if path:
            say(f"Exporting the calls of {p.label()}…")
            root.update_idletasks()  # a long period takes a second or two: say so first
            say(write(path))

    if sys.platform.startswith("linux") and not os.environ.get("TRAYBURN_TK_DIALOGS"):
        argv = system.command("_dialog", "save", title, folder, name)
        try:
            child = subprocess.Popen(argv, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
        except OSError as exc:
            log.warning("the save dialog did not start (%s): Tk's instead", exc)
        else:
            _wait_for_dialog(root, child, chosen)
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


def _wait_for_dialog(root: tk.Misc, child: subprocess.Popen[str], then: Callable[[str], None]) -> None:
    """The window goes on drawing and refreshing while the dialog is open; its answer comes to `then`."""
    if child.poll() is None:
        root.after(POLL_MS, _wait_for_dialog, root, child, then)
        return
    out = child.stdout.read() if child.stdout else ""
    then(out.strip() if child.returncode == 0 else "")


def write_period(e: Engine, p: periods.Period, path: str) -> str:
    """Write the period's calls to `path` (JSON when it ends in .json, else CSV); what happened, in words."""
    fmt = "json" if path.lower().endswith(".json") else "csv"
    try:
        n = export.to_file(e.export_rows(p), path, fmt, e.money())
    except (OSError, ValueError, TrayburnError) as exc:
        log.warning("export to %s failed: %s", path, exc)
        return f"Could not export: {exc}"
    return f"Exported {n:,} calls to {models.clean(path, models.PATH_CHARS)}"
