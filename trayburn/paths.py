"""Where things are: the Cline CLI's three folders, and trayburn's own files. Never opens a file.

The Cline CLI resolves each level on its own (root, then data, then sessions); trayburn does the
same, and a value in the settings file overrides that level's environment variable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Literal, NamedTuple

APP = "trayburn"
Origin = Literal["settings", "environment", "default"]


class Level(NamedTuple):
    """One of the three Cline folders: its path, where that path came from, and whether it exists."""

    name: str  # "cline_dir" | "data_dir" | "sessions_dir"
    label: str  # "Cline folder" ...
    variable: str  # the environment variable for this level
    path: Path
    origin: Origin

    @property
    def exists(self) -> bool:
        return self.path.is_dir()

    def source(self) -> str:
        """Where the path came from, in words: 'settings (sessions_dir)', 'CLINE_DIR', 'default'."""
        if self.origin == "settings":
            return f"settings ({self.name})"
        if self.origin == "environment":
            return self.variable
        return "default"


class Levels(NamedTuple):
    """The three folders the sessions are found through: Cline's root, its data folder, its sessions folder."""

    root: Level
    data: Level
    sessions: Level

    def __iter__(self):
        return iter((self.root, self.data, self.sessions))


def home(env: Mapping[str, str]) -> Path:
    """The home folder as the CLI finds it: HOME, then USERPROFILE, then HOMEDRIVE+HOMEPATH."""
    for value in (env.get("HOME"), env.get("USERPROFILE")):
        if value and value.strip():
            return Path(value)
    if env.get("HOMEDRIVE") and env.get("HOMEPATH"):
        return Path(env["HOMEDRIVE"] + env["HOMEPATH"])
    return Path.home()


PATH_VARIABLES: tuple[str, ...] = ("CLINE_DIR", "CLINE_DATA_DIR", "CLINE_SESSION_DATA_DIR")
PATH_VARIABLES += ("TRAYBURN_CONFIG", "TRAYBURN_STATE_DIR", "TRAYBURN_LOG_DIR")


def absolute_env(env: MutableMapping[str, str]) -> None:
    """Relative folders in these variables made absolute against the folder trayburn was started in (as Cline
    reads them, against its own): the tray's children run in the home folder and must find the same ones."""
    for name in PATH_VARIABLES:
        value = env.get(name, "").strip()
        if value and not value.startswith("~") and not os.path.isabs(value):
            env[name] = os.path.abspath(value)


def _expand(value: str, env: Mapping[str, str]) -> Path:
    value = value.strip()
    if value == "~" or value.startswith(("~/", "~\\")):
        return home(env) / value[2:]
    return Path(value)


def _pick(setting: str | None, env: Mapping[str, str], variable: str, default: Path) -> tuple[Path, Origin]:
    if setting and setting.strip():
        return _expand(setting, env), "settings"
    value = env.get(variable)
    if value and value.strip():
        return _expand(value, env), "environment"
    return default, "default"


def resolve_levels(
    cline_dir: str | None = None,
    data_dir: str | None = None,
    sessions_dir: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Levels:
    """Resolve root → data → sessions exactly as the CLI does, with settings overriding each level."""
    env = os.environ if env is None else env
    root_path, root_origin = _pick(cline_dir, env, "CLINE_DIR", home(env) / ".cline")
    data_path, data_origin = _pick(data_dir, env, "CLINE_DATA_DIR", root_path / "data")
    sess_path, sess_origin = _pick(sessions_dir, env, "CLINE_SESSION_DATA_DIR", data_path / "sessions")
    return Levels(
        Level("cline_dir", "Cline folder", "CLINE_DIR", root_path, root_origin),
        Level("data_dir", "Data folder", "CLINE_DATA_DIR", data_path, data_origin),
        Level("sessions_dir", "Sessions folder", "CLINE_SESSION_DATA_DIR", sess_path, sess_origin),
    )


def _platform_dir(kind: str) -> str:
    """The platform's folder of that kind for trayburn. platformdirs is imported here, when no option or
    environment variable gives the folder: it brings tempfile, shutil, random and three compressors."""
    import platformdirs

    return str(getattr(platformdirs, kind)(APP, appauthor=False))


def config_file(explicit: str | os.PathLike | None = None, env: Mapping[str, str] | None = None) -> Path:
    """The settings file: --config, then TRAYBURN_CONFIG, then the platform config dir."""
    env = os.environ if env is None else env
    if explicit:
        return Path(explicit).expanduser()
    if env.get("TRAYBURN_CONFIG", "").strip():
        return Path(env["TRAYBURN_CONFIG"].strip()).expanduser()
    return Path(_platform_dir("user_config_dir")) / "settings.toml"


def state_dir(explicit: str | os.PathLike | None = None, env: Mapping[str, str] | None = None) -> Path:
    """Where the ledger lives: --state-dir, then TRAYBURN_STATE_DIR, then the platform state dir."""
    env = os.environ if env is None else env
    if explicit:
        return Path(explicit).expanduser()
    if env.get("TRAYBURN_STATE_DIR", "").strip():
        return Path(env["TRAYBURN_STATE_DIR"].strip()).expanduser()
    return Path(_platform_dir("user_state_dir"))


def log_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("TRAYBURN_LOG_DIR", "").strip():
        return Path(env["TRAYBURN_LOG_DIR"].strip()).expanduser()
    return Path(_platform_dir("user_log_dir"))


# ---- trayburn's own files, each named once (in the state folder unless said otherwise) ----------------


def ledger_file(state: Path) -> Path:
    """The SQLite ledger, with SQLite's -wal and -shm beside it,
    and, if it was ever found damaged, the moved-aside `.broken-<time>` copies."""
    return state / "ledger.db"


def tray_lock(state: Path) -> Path:
    """Held while a tray runs on this state folder (one tray per ledger)."""
    return state / "tray.lock"


def prices_cache_file(state: Path) -> Path:
    """Prices resolved from genai-prices' data, so a warm run never imports it (`pricing/cache.py`)."""
    return state / "prices.json"


def listings_file(state: Path) -> Path:
    """The Cline CLI's session folders as last listed, so a new process lists only those changed since."""
    return state / "listings.json"


def notified_file(state: Path) -> Path:
    """What the tray has already told the person (so a notice is shown once)."""
    return state / "notified.json"


def alerts_file(state: Path) -> Path:
    """The runaway sessions and project budgets the tray has told of, and the runaways silenced from its menu."""
    return state / "alerts.json"


def demo_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where `trayburn demo` makes its throwaway folders: under TRAYBURN_STATE_DIR when that is set
    (tests and sandboxes keep everything in one place), else the platform's cache folder."""
    env = os.environ if env is None else env
    if env.get("TRAYBURN_STATE_DIR", "").strip():
        return Path(env["TRAYBURN_STATE_DIR"].strip()).expanduser() / "demo"
    return Path(_platform_dir("user_cache_dir")) / "demo"


def machine_file(state: Path) -> Path:
    """This machine's id for shared figures (made once; delete it to get a new one)."""
    return state / "machine.json"


def sync_state_file(state: Path) -> Path:
    """When this machine last shared its figures through `sync_dir`, and what went wrong if it failed."""
    return state / "sync.json"


def machines_dir(sync_dir: Path) -> Path:
    """Where every machine writes its own file: `<sync_dir>/trayburn/machines/` (nothing else is written
    in `sync_dir`)."""
    return sync_dir / APP / "machines"
