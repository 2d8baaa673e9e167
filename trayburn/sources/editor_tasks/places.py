"""Where the editor apps keep their task folders (docs/formats/editor-tasks.md, "Where"), and each app declared
once: the Cline extension before 4.0 (and the old Cline CLI's `~/.cline/data/tasks`), Roo Code, its fork Zoo Code,
Kilo Code up to 5.x and the old Kilo CLI 0.x, IBM Bob, in every editor flavour's global storage on Linux, macOS
and Windows. A place is a folder holding `tasks/<id>/`; each
app's list can be replaced in the settings (`<key>_dirs`) and each app turned off (`<key>`): settings.py declares
those two settings for every entry of APPS.

Pure functions of (settings, env, home, platform): testable for every OS from any OS.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath
from typing import NamedTuple

from ...files import clean

# Editor flavours: (label, the user-data folder's name under the OS's config folder)
FLAVOURS: tuple[tuple[str, str], ...] = (
    ("VS Code", "Code"),
    ("VS Code Insiders", "Code - Insiders"),
    ("VSCodium", "VSCodium"),
    ("Cursor", "Cursor"),
    ("Windsurf", "Windsurf"),
)
# IBM Bob, a VS Code build of its own: (label, its user-data folder); preview builds used another name
BOB_FLAVOURS: tuple[tuple[str, str], ...] = (("IBM Bob", "IBM Bob"), ("IBM Bob (preview)", "Bob-IDE"))
# Remote servers and code-server (Linux only: where they run), under the home folder
SERVERS: tuple[tuple[str, str], ...] = (
    ("VS Code Server (Remote-SSH, containers)", ".vscode-server/data"),
    ("VS Code Insiders Server", ".vscode-server-insiders/data"),
    ("VSCodium Server", ".vscodium-server/data"),
    ("Cursor Server", ".cursor-server/data"),
    ("Windsurf Server", ".windsurf-server/data"),
    ("code-server", ".local/share/code-server"),
)


class TaskFormat(NamedTuple):
    """How a family of apps writes its task folders: what the reader does differently for each."""

    metadata: bool  # `task_metadata.json` beside the messages (model_usage, environment_history): Cline
    models_in_conversation: bool  # the model only as `<model>` lines in api_conversation_history.json: Roo, Kilo
    input_by_provider: bool  # tokensIn uncached unless the provider passes the whole prompt (Cline); else
    # inclusive since Roo 3.29.5, older files telling by their cache tokens (`parse.normalise`)


CLINE_FORMAT = TaskFormat(metadata=True, models_in_conversation=False, input_by_provider=True)
ROO_FORMAT = TaskFormat(metadata=False, models_in_conversation=True, input_by_provider=False)


class App(NamedTuple):
    """One editor app whose task folders are read: everything that differs between apps is here, so another
    (Zoo Code, IBM Bob, the old Kilo CLI) is one more entry in APPS."""

    name: str  # the id: the feed's and the session ids' word ("cline", "roo", "kilo")
    label: str  # for people: "Cline (VS Code)"
    extensions: tuple[str, ...]  # its globalStorage folders (VS Code lower-cases extension ids)
    enabled_key: str  # its settings: this key turns it on or off, `<key>_dirs` replaces its places
    source: str  # the sessions' `source` ("by source"): what the menu line and `report --by source` show
    format: TaskFormat
    storage_setting: str | None = None  # the editor setting moving its storage (Roo, Kilo: `<x>.customStoragePath`)
    cline_data: bool = False  # also the old Cline CLI's data folder (trayburn's resolved CLINE_DATA_DIR level)
    flavours: tuple[tuple[str, str], ...] = FLAVOURS  # the editors it runs in (their user-data folders)
    servers: tuple[tuple[str, str], ...] = SERVERS  # and their remote servers (Linux, under the home folder)
    home_folders: tuple[tuple[str, str], ...] = ()  # (label, folder under the home folder) on every OS: a CLI's own
    # The files' `cost` is not proven to be dollars (IBM Bob bills in Bobcoins): this names what it may be. Its
    # calls are then estimated from their tokens at list price, and the written figure is kept aside (doctor)
    cost_unit: str | None = None

    @property
    def dirs_key(self) -> str:
        return f"{self.enabled_key}_dirs"


APPS: tuple[App, ...] = (
    App("cline", "Cline (VS Code)", ("saoudrizwan.claude-dev",), "cline_tasks", "vscode", CLINE_FORMAT,
        cline_data=True),
    App("roo", "Roo Code", ("rooveterinaryinc.roo-cline",), "roo_code", "roo-code", ROO_FORMAT,
        storage_setting="roo-cline.customStoragePath"),
    App("kilo", "Kilo Code", ("kilocode.kilo-code",), "kilo_code", "kilo-code", ROO_FORMAT,
        storage_setting="kilo-code.customStoragePath"),
    App("zoo", "Zoo Code", ("zoocodeorganization.zoo-code",), "zoo_code", "zoo-code", ROO_FORMAT,
        storage_setting="zoo-code.customStoragePath"),
    App("bob", "IBM Bob", ("ibm.bob-code",), "ibm_bob", "ibm-bob", ROO_FORMAT, flavours=BOB_FLAVOURS, servers=(),
        cost_unit="not stated (Bobcoins or dollars; 1 Bobcoin = $0.50)"),
    App("kilocli", "Kilo CLI (0.x)", (), "kilo_cli", "kilo-cli", ROO_FORMAT, flavours=(), servers=(),
        home_folders=(("Kilo CLI 0.x", ".kilocode/cli/global"),)),
)  # fmt: skip
BY_NAME = {a.name: a for a in APPS}


# Sessions' `source` values → the app people know. Since Cline 4.0 every Cline app writes the one sessions folder,
# its manifest's `source` naming the app (docs/formats/cline-cli.md); the editor apps' tasks carry theirs.
SOURCE_LABELS = {
    "cli": "Cline CLI",
    "vscode": "Cline for VS Code",
    "jetbrains": "Cline for JetBrains",
    "desktop": "Cline Desktop",
    "unknown": "other",
}
SOURCE_LABELS |= {a.source: a.label for a in APPS if a.source not in SOURCE_LABELS}
MAX_LABEL = 40  # a `source` this app does not know is shown as written, at most this long


def source_label(source: str | None) -> str:
    """The app a session's `source` names ("Cline CLI"); one not known here as written, cleaned: no controls,
    spaces collapsed, at most MAX_LABEL characters ("unknown" when nothing is left)."""
    text = " ".join(clean(source or "").split())
    known = SOURCE_LABELS.get(text.lower())
    if known:
        return known
    return (text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "…") or "unknown"


def menu_line(spend: Sequence[tuple[str, float | None]], money: Callable[[float], str]) -> str | None:
    """ "Cline CLI $1.20 · Cline for VS Code $3.40" from `Engine.spend_by_source()` (None while there is one app)."""
    shown = [(label, usd) for label, usd in spend if usd]
    if len(spend) < 2 or not shown:
        return None
    return " · ".join(f"{label} {money(usd or 0.0)}" for label, usd in shown)


class Place(NamedTuple):
    """A folder that may hold `tasks/`: where it came from in words, and whether it is there."""

    app: str
    path: Path
    origin: str  # "settings (roo_code_dirs)", "VS Code (default)", "Cursor: roo-cline.customStoragePath", …

    @property
    def tasks(self) -> Path:
        """The task root: `<place>/tasks`, or the place itself when it is a `tasks` folder given in the settings."""
        if self.path.name == "tasks" and not (self.path / "tasks").is_dir():
            return self.path
        return self.path / "tasks"

    @property
    def exists(self) -> bool:
        return self.tasks.is_dir()


def user_data_dirs(
    env: Mapping[str, str],
    home: PurePath,
    platform: str,
    flavours: Sequence[tuple[str, str]] = FLAVOURS,
    servers: Sequence[tuple[str, str]] = SERVERS,
) -> list[tuple[str, PurePath]]:
    """Every editor flavour's user-data folder for this OS (`platform` as `sys.platform`), existing or not."""
    out: list[tuple[str, PurePath]] = []
    if platform.startswith("win"):
        appdata = env.get("APPDATA", "").strip()
        base: PurePath = PureWindowsPath(appdata) if appdata else PureWindowsPath(home) / "AppData" / "Roaming"
        out += [(label, base / folder) for label, folder in flavours]
    elif platform == "darwin":
        base = PurePosixPath(home) / "Library" / "Application Support"
        out += [(label, base / folder) for label, folder in flavours]
    else:
        xdg = env.get("XDG_CONFIG_HOME", "").strip()
        base = PurePosixPath(xdg) if xdg.startswith("/") else PurePosixPath(home) / ".config"
        out += [(label, base / folder) for label, folder in flavours]
        out += [(label, PurePosixPath(home) / sub) for label, sub in servers]
    portable = env.get("VSCODE_PORTABLE", "").strip()
    if portable:  # portable VS Code: <install>/data, its user data in user-data
        out.append(("VS Code (portable)", type(base)(portable) / "user-data"))
    return out


CliData = Sequence[tuple[str, PurePath]]  # the old Cline CLI's data folders: (origin, folder)


def cline_data_places(root: PurePath, root_source: str, data: PurePath, data_source: str) -> list[tuple[str, PurePath]]:
    """Where the old Cline CLI (before 3.0) kept `tasks/`: `<CLINE_DIR or ~/.cline>/data`, where 2.x writes them
    whatever `CLINE_DATA_DIR` says (that variable moves only its logs); and the data level as trayburn resolves
    it (`data`, from CLINE_DATA_DIR or the settings) when that is another folder. `*_source`: `Level.source()`."""
    under_root = root / "data"
    if data == under_root:
        return [(f"Cline CLI data folder (before 3.0; {root_source})", under_root)]
    moved = f"{root_source}/data: 2.x writes here whatever {data_source} says"
    return [
        (f"Cline CLI data folder (before 3.0; {moved})", under_root),
        (f"Cline CLI data folder (before 3.0; {data_source})", data),
    ]


def default_places(
    app: App, env: Mapping[str, str], home: PurePath, platform: str, cline_data: PurePath | CliData | None = None
) -> list[tuple[str, PurePath]]:
    """(origin, folder) of every place `app` may keep `tasks/` in, without the settings: each flavour's
    `User/globalStorage/<extension>`, each folder of its own under the home folder, and for Cline the old CLI's
    data folders (`cline_data_places`; one folder alone is taken as `~/.cline/data`, the default)."""
    out: list[tuple[str, PurePath]] = []
    for label, data in user_data_dirs(env, home, platform, app.flavours, app.servers):
        gs = data / "User" / "globalStorage"
        out += [(f"{label} (default)", gs / extension) for extension in app.extensions]
    out += [(f"{label} (default)", home / sub) for label, sub in app.home_folders]
    if app.cline_data and cline_data is not None:
        if isinstance(cline_data, PurePath):
            cline_data = [("Cline CLI data folder (before 3.0; default)", cline_data)]
        out += cline_data
    return out


def custom_storage(app: App, user_data: Path) -> str | None:
    """The app's `customStoragePath` from the flavour's `User/settings.json` (JSON with comments: the one
    string key is looked for, not the whole file parsed); None when not set or unreadable."""
    if app.storage_setting is None:
        return None
    try:
        with open(user_data / "User" / "settings.json", "rb") as f:
            text = f.read(2_000_000).decode("utf-8", "replace")
    except OSError:
        return None
    found = re.search(r'"' + re.escape(app.storage_setting) + r'"\s*:\s*"((?:[^"\\]|\\.)*)"', text)
    if not found:
        return None
    value = found.group(1).replace("\\\\", "\\").replace('\\"', '"').strip()
    return value or None


def places(
    app: App,
    configured: Sequence[str],
    env: Mapping[str, str],
    home: Path,
    platform: str,
    cline_data: Path | CliData | None = None,
) -> list[Place]:
    """Where `app`'s tasks are looked for: the settings' folders when given (they replace the found ones),
    else every default place and every flavour's custom storage path; each once."""
    if configured:
        return _unique([Place(app.name, _expand(p, home), f"settings ({app.dirs_key})") for p in configured])
    found = [Place(app.name, Path(p), origin) for origin, p in default_places(app, env, home, platform, cline_data)]
    for label, data in user_data_dirs(env, home, platform, app.flavours, app.servers):
        custom = custom_storage(app, Path(data))
        if custom:
            found.append(Place(app.name, _expand(custom, home), f"{label}: {app.storage_setting}"))
    return _unique(found)


def _expand(value: str, home: Path) -> Path:
    value = value.strip()
    if value == "~" or value.startswith(("~/", "~\\")):
        return home / value[2:]
    return Path(value)


def _unique(found: list[Place]) -> list[Place]:
    seen: set[Path] = set()
    out = []
    for p in found:
        if p.path not in seen:
            seen.add(p.path)
            out.append(p)
    return out
