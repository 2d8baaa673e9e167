"""The one way trayburn starts itself: at login, and as the tray's child processes.

`python -m trayburn` run from a folder that holds a `trayburn/` folder (a clone in `$HOME`, say)
imports that folder instead of the installed package. So a command never relies on the current
folder: the frozen app is its own executable; an installed entry point beside the interpreter is
used as it is (its folder, not the current one, comes first on sys.path); otherwise Python runs
with `-P` (3.11+: the current folder is not put on sys.path). `child_options()` also gives an
explicit working folder, so the child's relative paths never depend on where the tray started.

No GUI imports.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

APP_NAME = "trayburn"


def command(*args: str, entry_point: bool = False) -> list[str]:
    """The argv that runs `trayburn ARGS...` in a new process, whatever the current folder.

    `entry_point`: prefer the installed console script beside the interpreter (what a login
    entry should name: it reads as "trayburn" and survives a Python upgrade in place). Children
    of a running trayburn use the interpreter that runs it, with -P.
    """
    if getattr(sys, "frozen", False):
        return [sys.executable, *args]
    script = _console_script() if entry_point else None
    if script:
        return [script, *args]
    return [sys.executable, "-P", "-m", APP_NAME, *args]


def _console_script() -> str | None:
    # Not resolved: a venv's python is a symlink, and the script sits beside the link.
    # On Windows the gui-script (trayburn-tray.exe) first: a console script opens a console window.
    bin_dir = Path(sys.executable).parent
    names = (f"{APP_NAME}-tray.exe",) if sys.platform == "win32" else ()
    for name in (*names, APP_NAME, f"{APP_NAME}.exe"):
        candidate = bin_dir / name
        if candidate.is_file():
            return str(candidate)
    return None  # not one found on PATH: that may be another install


def working_folder(env: Mapping[str, str] | None = None) -> str:
    """Where children run: the home folder (never a folder that could shadow the package)."""
    env = os.environ if env is None else env
    home = env.get("HOME") or env.get("USERPROFILE") or os.path.expanduser("~")
    return home if home and os.path.isdir(home) else os.path.abspath(os.sep)


def child_options(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Keyword arguments for subprocess: an explicit cwd, no console window on Windows."""
    options: dict[str, Any] = {"cwd": working_folder(env), "stdin": subprocess.DEVNULL}
    if sys.platform == "win32":
        options["creationflags"] = getattr(subprocess, "CREATE_NO_WINDOW", 0)
    return options


def describe(argv: Sequence[str]) -> str:
    """An argv as one line for the log."""
    return subprocess.list2cmdline(list(argv))
