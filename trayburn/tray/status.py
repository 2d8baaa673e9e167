"""The one line at the top of the menu when something is wrong, chosen by the health's kind.

The engine's `Health.kind` names the state (ok, settings_broken, override_missing, not_installed,
no_sessions_folder, sessions_not_a_folder, no_sessions); the words are the tray's own. Until the
engine carries `kind`, `health_kind()` derives it from the levels and counts the Health already
has (never from the wording of its verdict).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .. import paths


def tilde(text: str | Path) -> str:
    """A path, or a sentence with paths in it, with the home folder written as ~."""
    home, text = os.path.expanduser("~"), str(text)
    if home in ("/", ""):
        return text
    return "~" if text == home else text.replace(home + os.sep, "~" + os.sep)


def health_kind(health: Any) -> str:
    kind = getattr(health, "kind", None)
    if isinstance(kind, str):
        return kind
    levels: paths.Levels = health.levels
    if health.config_error:
        return "settings_broken"
    if missing_override(levels) is not None:
        return "override_missing"
    root, sessions = levels.root, levels.sessions
    if not root.exists and root.origin == "default" and not sessions.path.exists():
        return "not_installed"
    if not sessions.path.exists():
        return "no_sessions_folder"
    if not sessions.exists:
        return "sessions_not_a_folder"
    return "no_sessions" if health.sessions == 0 else "ok"


def missing_override(levels: paths.Levels) -> paths.Level | None:
    """An override (setting or variable) pointing nowhere, among the levels the sessions folder derives from."""
    used = [levels.sessions]
    while used[0].origin == "default" and used[0] is not levels.root:
        used.insert(0, levels.root if used[0] is levels.data else levels.data)
    return next((lv for lv in used if lv.origin != "default" and not lv.exists), None)


def problem_line(health: Any, settings_problem: Any = None) -> str | None:
    """The one plain sentence shown at the top of the menu, from the same checks as `doctor`.

    `settings_problem`: the engine's `loaded.problem` (a SettingsProblem), where the Health does not
    carry it yet as `settings_problem`."""
    kind = health_kind(health)
    if kind == "settings_broken":
        problem = getattr(health, "settings_problem", None) or settings_problem
        line = getattr(problem, "line", None)
        where = f" at line {line}" if line else ""
        return f"Settings file is broken{where}: {tilde(health.config_path)} (using defaults)"
    if kind == "not_installed" and health.sessions == 0:
        return None  # first run: said by the first-run entries instead
    if kind == "override_missing":
        level = getattr(health, "problem_level", None) or missing_override(health.levels)
        if level is not None:
            who = f"The setting {level.name} in {health.config_path}" if level.origin == "settings" else level.variable
            return tilde(f"{who} points to {level.path}, which does not exist")
    if kind == "sessions_not_a_folder":
        return tilde(f"The sessions folder {health.levels.sessions.path} is not a folder")
    if health.problems:
        n = len(health.problems)
        return f"{n} file{'s' if n > 1 else ''} could not be read (see trayburn doctor)"
    return None
