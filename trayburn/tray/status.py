"""The one line at the top of the menu when something is wrong, chosen by the health's kind.

The engine's `Health.kind` names the state (ok, settings_broken, override_missing, not_installed,
no_sessions_folder, sessions_not_a_folder, no_sessions); the words are the tray's own.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..engine import Health


def tilde(text: str | Path) -> str:
    """A path, or a sentence with paths in it, with the home folder written as ~."""
    home, text = os.path.expanduser("~"), str(text)
    if home in ("/", ""):
        return text
    return "~" if text == home else text.replace(home + os.sep, "~" + os.sep)


# The ledger cannot be written: what the menu says (the figures shown are what it held; they are stale).
LEDGER_FAULTS = {
    "ledger_disk_full": "The disk is full, trayburn cannot record new calls",
    "ledger_read_only": "trayburn's ledger is read-only",
    "ledger_io": "trayburn's ledger failed to read or write (an I/O error)",
}


def problem_line(health: Health, sharing: str | None = None) -> str | None:
    """The one plain sentence shown at the top of the menu, from the same checks as `doctor`;
    `sharing`: what is wrong with sharing through sync_dir, named before a bare count of unreadable
    files (a bad machine file is one of those)."""
    kind = health.kind
    if kind == "settings_broken":
        line = health.settings_problem.line if health.settings_problem else None
        where = f" at line {line}" if line else ""
        return f"Settings file is broken{where}: {tilde(health.config_path)} (using defaults)"
    if kind == "not_installed" and health.sessions == 0:
        return None  # first run: said by the first-run entries instead
    if kind == "override_missing":
        level = health.problem_level
        if level is not None:
            who = f"The setting {level.name} in {health.config_path}" if level.origin == "settings" else level.variable
            return tilde(f"{who} points to {level.path}, which does not exist")
    if kind == "sessions_not_a_folder":
        return tilde(f"The sessions folder {health.levels.sessions.path} is not a folder")
    if kind in LEDGER_FAULTS:
        return f"{LEDGER_FAULTS[kind]}: figures as of the last good refresh (see trayburn doctor)"
    if sharing:
        return sharing
    if health.problems:
        n = len(health.problems)
        return f"{n} file{'s' if n > 1 else ''} could not be read (see trayburn doctor)"
    return None
