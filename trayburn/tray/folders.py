"""Which of Cline's three folders a folder picked in a dialog is, whatever it was picked for.

A Cline folder holds `data/sessions`; a data folder holds `sessions`; a sessions folder holds
session folders (`<id>/<id>.json` or `<id>/<id>.messages.json`). A folder that is none of these
(a fresh install, say) is taken as the level it was picked for.
"""

from __future__ import annotations

from pathlib import Path

LEVEL_LABELS = {"cline_dir": "Cline folder", "data_dir": "data folder", "sessions_dir": "sessions folder"}
LOOKED_AT = 200  # entries looked at in a big folder: enough to recognise, never a long scan


def recognise(folder: Path) -> str | None:
    """The level `folder` is, by what it holds; None if it holds none of Cline's layouts."""
    try:
        if (folder / "data" / "sessions").is_dir():
            return "cline_dir"
        if (folder / "sessions").is_dir():
            return "data_dir"
        return "sessions_dir" if _holds_sessions(folder) else None
    except OSError:
        return None


def _holds_sessions(folder: Path) -> bool:
    for i, entry in enumerate(folder.iterdir()):
        if i >= LOOKED_AT:
            return False
        name = entry.name
        if entry.is_dir() and ((entry / f"{name}.json").is_file() or (entry / f"{name}.messages.json").is_file()):
            return True
    return False


def level_for(folder: Path, asked: str) -> tuple[str, str | None]:
    """(the level to set, a note for the person when it is not the one asked for)."""
    found = recognise(folder)
    if found is None or found == asked:
        return asked, None
    return found, f"{folder} is a {LEVEL_LABELS[found]}: set as the {LEVEL_LABELS[found]}"
