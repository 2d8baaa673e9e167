"""*Export…* in the summary window: a save dialog, then the period's calls as CSV or JSON (by the name's
ending), streamed by `trayburn.figures.export` as `trayburn export` writes them."""

from __future__ import annotations

import logging
import tkinter as tk
from collections.abc import Callable
from tkinter import filedialog

from ..engine import Engine
from ..errors import TrayburnError
from ..figures import export
from ..figures import periods as pd
from . import model

log = logging.getLogger(__name__)


def ask_and_export(root: tk.Misc, p: pd.Period, say: Callable[[str], None], write: Callable[[str], str]) -> None:
    name = f"trayburn-{p.since}" + ("" if p.days == 1 else f"-to-{p.until}")
    path = filedialog.asksaveasfilename(
        parent=root,
        title="Export the calls of " + p.label(),
        initialfile=name + ".csv",
        defaultextension=".csv",
        filetypes=[("CSV (spreadsheets)", "*.csv"), ("JSON", "*.json")],
    )
    if path:
        say(f"Exporting the calls of {p.label()}…")
        root.update_idletasks()  # a long period takes a second or two: say so first
        say(write(path))


def write_period(e: Engine, p: pd.Period, path: str) -> str:
    """Write the period's calls to `path` (JSON when it ends in .json, else CSV); what happened, in words."""
    fmt = "json" if path.lower().endswith(".json") else "csv"
    try:
        n = export.to_file(export.rows(e.ledger, e.book, p), path, fmt, e.money())
    except (OSError, ValueError, TrayburnError) as exc:
        log.warning("export to %s failed: %s", path, exc)
        return f"Could not export: {exc}"
    return f"Exported {n:,} calls to {model.clean(path, model.PATH_CHARS)}"
