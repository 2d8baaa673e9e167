"""Where Kilo Code 7 keeps its database (docs/formats/kilo7.md, "Where"): one SQLite file shared by the VS Code
extension and the `kilo` CLI, `kilo.db` in Kilo's data folder, `kilo-<channel>.db` beside it for a preview build.

Kilo's data folder is `$XDG_DATA_HOME/kilo`, else `<home>/.local/share/kilo`, on every OS (its source resolves the
XDG folders itself, Windows and macOS included). `KILO_DB` names the file instead (relative: inside the data
folder). The macOS folder `~/Library/Application Support/kilo` is looked at too: Kilo's source does not use it,
but a place that does not exist costs one stat. The setting `kilo_code_db` (files, or folders holding them)
replaces all of these.

Pure functions of (settings, env, home, platform), apart from listing a data folder for its channel files.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath
from typing import NamedTuple

SETTING = "kilo_code_db"
DB_NAME = "kilo.db"
CHANNEL_PREFIXES = ("kilo-", "opencode-")  # a preview channel's file (an older preview build named it opencode-)


class Database(NamedTuple):
    """One database file trayburn reads: where it is and where that path came from, in words."""

    path: Path
    origin: str  # "default ($XDG_DATA_HOME/kilo)", "KILO_DB", "settings (kilo_code_db)", "preview channel", …

    @property
    def folder(self) -> Path:
        return self.path.parent


def data_dirs(env: Mapping[str, str], home: PurePath, platform: str) -> list[tuple[str, PurePath]]:
    """(origin, folder) of every folder Kilo's data may be in, the one Kilo itself uses first."""
    flavour: type[PurePath] = PureWindowsPath if platform.startswith("win") else PurePosixPath
    xdg = env.get("XDG_DATA_HOME", "").strip()
    if xdg and flavour(xdg).is_absolute():
        out = [("default ($XDG_DATA_HOME/kilo)", flavour(xdg) / "kilo")]
    else:
        out = [("default (~/.local/share/kilo)", flavour(home) / ".local" / "share" / "kilo")]
    if platform == "darwin":
        mac = flavour(home) / "Library" / "Application Support" / "kilo"
        out.append(("macOS Application Support (not used by Kilo 7.7)", mac))
    return out


def databases(configured: Sequence[str], env: Mapping[str, str], home: Path, platform: str) -> list[Database]:
    """The database files to read, each once: the setting's when given, else `KILO_DB`, else each data folder's
    `kilo.db` (whether it exists or not: `doctor` says where it looked) and its preview channels' files."""
    if configured:
        out: list[Database] = []
        for value in configured:
            path = _expand(value, home)
            found = _in_folder(path, "settings (kilo_code_db)") if path.is_dir() else []
            out += found or [Database(path, f"settings ({SETTING})")]
        return _unique(out)
    override = env.get("KILO_DB", "").strip()
    folders = data_dirs(env, home, platform)
    if override and override != ":memory:":
        given = _expand(override, home)
        path = given if given.is_absolute() else Path(folders[0][1]) / given
        return [Database(path, "KILO_DB")]
    found = []
    for origin, folder in folders:
        found += _in_folder(Path(folder), origin)
    return _unique(found)


def _in_folder(folder: Path, origin: str) -> list[Database]:
    """`kilo.db` (always listed) and the channel files beside it (only those there)."""
    out = [Database(folder / DB_NAME, origin)]
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return out
    for name in names:
        if name.endswith(".db") and name.startswith(CHANNEL_PREFIXES) and name != DB_NAME:
            out.append(Database(folder / name, f"{origin}, preview channel"))
    return out


def _expand(value: str, home: Path) -> Path:
    value = value.strip()
    if value == "~" or value.startswith(("~/", "~\\")):
        return home / value[2:]
    return Path(value)


def _unique(found: list[Database]) -> list[Database]:
    seen: set[Path] = set()
    out = []
    for d in found:
        if d.path not in seen:
            seen.add(d.path)
            out.append(d)
    return out
