"""The settings: each declared once, as a `Settings` field, and the TOML file that holds them.

A setting's declaration (`setting(kind, default, help, where=..., choices=...)`) is all there is of it: checking
a value from the file, parsing one typed after `trayburn config set`, README's table (`readme_table`) and the
menu's choices (`menu_choices`) are loops over `SETTINGS`. The editor apps' settings come from their entries in
`sources/editor_tasks/places.py`.

A broken file is reported with its line and never overwritten; a bad value falls back to its
default with a warning; unknown keys are kept on save and reported.
"""

from __future__ import annotations

import copy
import os
import re
import stat
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from .billing import PLANS
from .files import Refused, atomic_write, read_file
from .setting_kinds import (
    Aliases,
    Choice,
    Currency,
    Flag,
    Folders,
    Kind,
    Number,
    Prices,
    ProjectBudgets,
    Routes,
    Table,
    Text,
    Whole,
)
from .sources.editor_tasks.places import APPS

MAX_BYTES = 1_000_000  # a settings file is a few hundred bytes; anything near this is not one
FILE, MENU, CLI = "file", "menu", "CLI"  # where a setting can be set: the file, the tray's menu, `trayburn config`
EVERYWHERE = (FILE, MENU, CLI)
T = TypeVar("T")


class SettingsError(Exception):
    """The settings file cannot be read or a value cannot be set; the message says where and why."""


# ---- the declaration ------------------------------------------------------------------------------------------------


class Setting(NamedTuple):
    """One setting as declared: its checking, its parsing, README's row and the menu's choices all come from it."""

    kind: Kind
    default: Any
    help: str  # README's "meaning"
    shown: str | None = None  # the default as README says it, where the value alone does not say it
    where: tuple[str, ...] = (FILE, CLI)
    choices: tuple[Any, ...] = ()  # what the menu offers (a Choice's values when empty)

    def fresh(self) -> Any:
        """The default, a copy of its own (a list or a table is never shared)."""
        return copy.deepcopy(self.default)

    @property
    def menu_choices(self) -> tuple[Any, ...]:
        return self.choices or (self.kind.values if isinstance(self.kind, Choice) else ())


def setting(
    kind: Kind[T],
    default: T,
    help: str,
    *,
    shown: str | None = None,
    where: tuple[str, ...] = (FILE, CLI),
    choices: tuple[T, ...] = (),
) -> T:
    """Declare a setting: a `Settings` field carrying its `Setting` (its name is the field's)."""
    spec = Setting(kind, default, help, shown, where, choices)
    meta = {"setting": spec}
    if isinstance(default, (list, dict)):
        return field(default_factory=spec.fresh, metadata=meta)
    return field(default=default, metadata=meta)


FOLDER = Text("a folder path (a string)")
FLAG = Flag()


def _editor_app_settings(cls: type[T]) -> type[T]:
    """Each editor app's two settings, from its one entry in `editor_tasks.places.APPS`: `<key>` reads it or
    not, `<key>_dirs` replaces the folders found for it. Fields like the others, placed before the two that
    are not settings (`extra`, `invalid`)."""
    annotations = cls.__dict__["__annotations__"]
    kept = {name: annotations.pop(name) for name in ("extra", "invalid")}
    for app in APPS:
        annotations[app.enabled_key] = "bool"
        setattr(cls, app.enabled_key, setting(FLAG, True, "read that editor app's task folders"))
    for app in APPS:
        annotations[app.dirs_key] = "list[str]"
        why = "that app's folders holding `tasks/`, replacing the found ones"
        setattr(cls, app.dirs_key, setting(Folders(), [], why, shown="unset (found)"))
    annotations.update(kept)
    return cls


@dataclass
@_editor_app_settings
class Settings:
    """Every setting, each declared once by its field (`setting(kind, default, help, ...)`). A new setting is one
    more field here; README's table is `readme_table()` (tests/test_docs.py compares them)."""

    cline_dir: str | None = setting(
        FOLDER, None, "the Cline folder", shown="unset (`CLINE_DIR`, `~/.cline`)", where=EVERYWHERE
    )
    data_dir: str | None = setting(
        FOLDER, None, "the data folder", shown="unset (`CLINE_DATA_DIR`, `<cline_dir>/data`)", where=EVERYWHERE
    )
    sessions_dir: str | None = setting(
        FOLDER,
        None,
        "the sessions folder",
        shown="unset (`CLINE_SESSION_DATA_DIR`, `<data_dir>/sessions`)",
        where=EVERYWHERE,
    )
    refresh_seconds: int = setting(
        Whole("seconds", 5, 3600),
        30,
        "how often the tray and the window look for changes (5–3600)",
        where=EVERYWHERE,
        choices=(15, 30, 60, 300),
    )
    daily_budget: float | None = setting(
        Number("a number of US dollars, 0 or more (0 turns the budget off)", zero_is_off=True),
        None,
        "USD; crossing 80 % and 100 % notifies once a day and colours the icon",
        where=EVERYWHERE,
    )
    monthly_budget: float | None = setting(
        Number("a number of US dollars, 0 or more (0 turns the budget off)", zero_is_off=True),
        None,
        "USD; the window's month view shows spend against it and a month-end projection",
    )
    project_budgets: dict[str, dict[str, float]] = setting(
        ProjectBudgets(),
        {},
        "`daily`, `monthly` in USD for a project as `report --by project` names it: the same notices and marks",
        shown="none",
    )
    session_alert_usd: float | None = setting(
        Number("a number of US dollars, 0 or more (0 turns the alert off)", zero_is_off=True),
        None,
        "USD; a running session whose spend passes it is notified once and named atop the menu",
    )
    rate_alert_usd_per_hour: float | None = setting(
        Number("a number of US dollars per hour, 0 or more (0 turns the alert off)", zero_is_off=True),
        None,
        "USD per hour; a running session spending faster is notified once and named atop the menu",
    )
    theme: str = setting(
        Choice("auto", "light", "dark"),
        "auto",
        "icon for a `light` or `dark` panel; `auto` asks the desktop",
        where=EVERYWHERE,
    )  # the panel's shade
    max_file_mb: int = setting(Whole("megabytes", 1), 256, "larger session files are skipped and listed by `doctor`")
    aliases: dict[str, str] = setting(
        Aliases(), {}, '`"my-proxy/glm" = "glm-5.2"`: count a model under another name', shown="none"
    )
    prices: dict[str, dict[str, float]] = setting(
        Prices(), {}, "`input`, `output`, `cache_read`, `cache_write` in USD per million tokens", shown="none"
    )
    billing: dict[str, str] = setting(
        Routes(),
        {},
        '`"my-gateway" = "plan"`: its calls are covered by a plan (API value, $0 spent); `"openai-codex" = "paid"`:'
        " count a plan route's calls as spend",
        shown=f"none ({', '.join(f'`{route}`' for route in PLANS)} are plans)",
    )
    currency: str = setting(
        Currency(), "USD", 'show amounts in this currency (ISO code, e.g. `"EUR"`), converted with `usd_rate`'
    )
    usd_rate: float | None = setting(
        Number("a positive number (units of your currency per US dollar)", positive=True),
        None,
        "units of `currency` per US dollar, set by you: trayburn never fetches rates",
    )
    sync_dir: str | None = setting(
        Text(),
        None,
        "a folder you already sync between machines; each machine writes its own file there",
        where=EVERYWHERE,
    )
    machine_name: str | None = setting(Text(), None, "this machine's name in shared figures", shown="the host name")
    sync_titles: bool = setting(
        FLAG, False, "whether session titles and folder paths leave this machine through `sync_dir`"
    )
    kilo_code_db: list[str] = setting(
        Folders(),
        [],
        "Kilo Code 7's `kilo.db` files, or folders holding them, replacing the ones found (`KILO_DB`, "
        "`$XDG_DATA_HOME/kilo`); `kilo_code = false` turns Kilo Code 7 off too",
        shown="unset (found)",
    )
    # (then each editor app's two settings: `_editor_app_settings`)
    extra: dict[str, Any] = field(default_factory=dict)  # unknown keys, kept as they were
    invalid: dict[str, Any] = field(default_factory=dict)  # known keys with bad values: defaults used, kept on save

    def to_toml_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, spec in SETTINGS.items():
            value = getattr(self, key)
            if value is None or value == {} or value == [] or value == spec.default:
                continue
            out[key] = value
        for key, value in self.invalid.items():
            out.setdefault(key, value)
        out.update(self.extra)
        return out


SETTINGS: dict[str, Setting] = {f.name: f.metadata["setting"] for f in fields(Settings) if "setting" in f.metadata}
KEYS = tuple(SETTINGS)
DEFAULTS = Settings()


def menu_choices(key: str) -> tuple[Any, ...]:
    """What the tray's menu offers for `key` (refresh intervals, themes)."""
    return SETTINGS[key].menu_choices


def readme_table() -> str:
    """README's settings table, from the declaration: a row per setting (consecutive ones saying the same share
    one, as the editor apps' do). Every setting lives in the file; the last column says where else it is set."""
    rows: list[tuple[list[str], str, str, str]] = []
    for key, spec in SETTINGS.items():
        cells = (_shown(spec), spec.help, ", ".join(WHERE_SAID[w] for w in spec.where if w != FILE))
        if rows and rows[-1][1:] == cells:
            rows[-1][0].append(spec.kind.readme_key(key))
        else:
            rows.append(([spec.kind.readme_key(key)], *cells))
    lines = ["| key | default | meaning | also set from |", "|---|---|---|---|"]
    lines += [f"| {', '.join(keys)} | {default} | {meaning} | {where} |" for keys, default, meaning, where in rows]
    return "\n".join(lines) + "\n"


WHERE_SAID = {FILE: "the file", MENU: "the menu", CLI: "`config set`"}


def _shown(spec: Setting) -> str:
    if spec.shown is not None:
        return spec.shown
    if spec.default is None:
        return "unset"
    import tomli_w  # (only where settings are written or shown as TOML)

    return f"`{tomli_w.dumps({'x': spec.default}).partition(' = ')[2].strip()}`"


class SettingsProblem(NamedTuple):
    """Why the settings file could not be used (defaults are in use meanwhile)."""

    kind: str  # "unreadable" | "not_a_file" | "too_big" | "not_utf8" | "not_toml"
    message: str  # a sentence naming the file and what is wrong, without "using defaults"
    line: int | None = None  # 1-based, where the file's text says where
    key: str | None = None


@dataclass
class Loaded:
    """The settings as read from their file, with where it is and what was wrong in it."""

    settings: Settings
    path: Path
    exists: bool
    problem: SettingsProblem | None = None  # the file could not be parsed: defaults are in use
    warnings: list[str] = field(default_factory=list)

    @property
    def error(self) -> str | None:
        return self.problem.message if self.problem else None


_TOML_LINE = re.compile(r"\(at line (\d+), column \d+\)")


def from_dict(data: dict[str, Any]) -> tuple[Settings, list[str]]:
    settings, warnings = Settings(), []
    for key, value in data.items():
        if key not in KEYS:
            settings.extra[key] = value
            warnings.append(f"unknown setting '{key}' (kept, not used)")
            continue
        try:
            setattr(settings, key, SETTINGS[key].kind.check(value))
        except ValueError as exc:
            settings.invalid[key] = value
            warnings.append(f"'{key}' {exc}; using the default")
    return settings, warnings


def load(path: Path) -> Loaded:
    """Read the settings file. Never raises: a problem is reported in .error / .warnings."""
    try:
        raw = _read(path)
    except FileNotFoundError:
        return Loaded(Settings(), path, exists=False)
    if isinstance(raw, SettingsProblem):
        return Loaded(Settings(), path, True, raw)
    import tomllib  # (where there is a file to read: 3 % of a warm `today` without one)

    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return Loaded(Settings(), path, True, SettingsProblem("not_utf8", f"{path} is not UTF-8 text"))
    except tomllib.TOMLDecodeError as exc:
        line = _TOML_LINE.search(str(exc))
        problem = SettingsProblem("not_toml", f"{path} is not valid TOML: {exc}", int(line[1]) if line else None)
        return Loaded(Settings(), path, True, problem)
    settings, warnings = from_dict(data)
    return Loaded(settings, path, True, warnings=[f"{path}: {w}" for w in warnings])


def _read(path: Path) -> bytes | SettingsProblem:
    """The file's bytes, read like a session file: a regular file only, without blocking (a FIFO
    never hangs), never past MAX_BYTES (a link to /dev/zero never eats memory). FileNotFoundError
    is raised; any other failure is returned as the problem."""
    try:
        return read_file(path, MAX_BYTES)
    except FileNotFoundError:
        raise
    except Refused as exc:
        return SettingsProblem(exc.kind, f"{exc} for a settings file" if exc.kind == "too_big" else str(exc))
    except OSError as exc:
        return SettingsProblem("unreadable", f"cannot read {path}: {exc.strerror or exc}")


def save(path: Path, settings: Settings) -> None:
    """Write the whole file from `settings`, atomically (0600: it may hold budgets and folders)."""
    import tomli_w  # (only where settings are written or shown as TOML)

    _write(path, tomli_w.dumps(settings.to_toml_dict()).encode("utf-8"))


def _write(path: Path, data: bytes) -> None:
    """The settings file written atomically. A symbolic link (a dotfile kept by stow, chezmoi or
    home-manager) stays a link: the file it points to is written (a temp file beside it, then replaced; its
    mode kept) when it is the person's own regular file, else a SettingsError says why nothing was written."""
    if not os.path.islink(path):
        atomic_write(path, data)
        return
    real = Path(os.path.realpath(path))
    try:
        st = os.stat(real)
    except FileNotFoundError:
        missing = f"{path} is a link to {real}, which does not exist; create that file or remove the link"
        raise SettingsError(missing) from None
    except OSError as exc:
        raise SettingsError(f"{path} is a link to {real}, which cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(st.st_mode):
        raise SettingsError(f"{path} is a link to {real}, which is not a regular file; trayburn will not write to it")
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        raise SettingsError(
            f"{path} is a link to {real}, which belongs to another user; trayburn will not write to it"
            " (change it by hand, or replace the link with a file of your own)"
        )
    try:
        atomic_write(real, data)
        os.chmod(real, stat.S_IMODE(st.st_mode))
    except PermissionError:
        raise SettingsError(f"cannot write {real} (where the link {path} points): permission denied") from None


def _editable(path: Path) -> Settings:
    loaded = load(path)
    if loaded.error:
        raise SettingsError(f"{loaded.error}. Fix it by hand; trayburn will not overwrite it")
    return loaded.settings


def update(path: Path, key: str, text: str | None) -> Settings:
    """Set (text given) or unset (text None) one key, dotted for tables: aliases.M, prices.M.input."""
    settings = _editable(path)
    head, _, rest = key.partition(".")
    spec = SETTINGS.get(head)
    if spec is None or (rest and not spec.kind.table):
        raise SettingsError(f"unknown setting '{key}'. Known: {', '.join(KEYS)}")
    if CLI not in spec.where:
        raise SettingsError(f"'{head}' is set in the settings file only ({path})")
    if rest and head in settings.invalid:
        raise SettingsError(f"'{head}' in {path} is not valid; fix it by hand (trayburn will not overwrite it)")
    settings.invalid.pop(head, None)
    _apply(settings, spec, key, head, rest, text)
    edited = None if spec.kind.table else _edit_line(path, settings, head)
    if edited is None:
        save(path, settings)
    else:
        _write(path, edited.encode("utf-8"))
    return settings


_TOP_KEY = re.compile(r"\s*([A-Za-z0-9_-]+)\s*=")


def _edit_line(path: Path, settings: Settings, key: str) -> str | None:
    """The file's text with only `key`'s line changed, so a person's comments and layout survive
    a change made from the menu; None where only a whole rewrite is safe."""
    try:
        raw = _read(path)
        lines = raw.decode("utf-8").splitlines(keepends=True) if isinstance(raw, bytes) else None
    except (OSError, UnicodeDecodeError):
        return None
    if lines is None:
        return None
    tables = next((i for i, line in enumerate(lines) if line.lstrip().startswith("[")), len(lines))
    hits = [i for i in range(tables) if (m := _TOP_KEY.match(lines[i])) and m.group(1) == key]
    if len(hits) > 1:
        return None
    value = getattr(settings, key)
    import tomllib

    import tomli_w  # (only where settings are written or shown as TOML)

    new = [] if value is None or value == getattr(DEFAULTS, key) else [tomli_w.dumps({key: value})]
    if hits:
        lines[hits[0] : hits[0] + 1] = new
    else:
        if tables and not lines[tables - 1].endswith("\n"):
            lines[tables - 1] += "\n"
        lines[tables:tables] = new
    text = "".join(lines)
    try:  # the edit must read back as exactly these settings
        again, _ = from_dict(tomllib.loads(text))
    except tomllib.TOMLDecodeError:
        return None
    return text if again.to_toml_dict() == settings.to_toml_dict() else None


def _apply(settings: Settings, spec: Setting, key: str, head: str, rest: str, text: str | None) -> None:
    if text is None and not rest:
        setattr(settings, head, spec.fresh())
        return
    try:
        if rest:
            assert isinstance(spec.kind, Table)
            value = spec.kind.with_entry(getattr(settings, head), key, rest, text)
        else:
            value = spec.kind.parse(head, text or "")
    except ValueError as exc:
        raise SettingsError(str(exc)) from None
    _checked(settings, head, value)


def _checked(settings: Settings, key: str, value: Any) -> None:
    try:
        setattr(settings, key, SETTINGS[key].kind.check(value))
    except ValueError as exc:
        text = str(exc)
        raise SettingsError(text if text.startswith(key) else f"{key} {text}") from None
