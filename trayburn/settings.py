"""The settings file (TOML): tolerant load, validation, atomic save.

A broken file is reported with its line and never overwritten; a bad value falls back to its
default with a warning; unknown keys are kept on save and reported.
"""

from __future__ import annotations

import math
import os
import re
import stat
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import tomli_w

from .files import Refused, atomic_write, read_file

THEMES = ("auto", "light", "dark")
PRICE_FIELDS = ("input", "output", "cache_read", "cache_write")
REFRESH_CHOICES = (15, 30, 60, 300)
TASK_APPS = ("cline_tasks", "roo_code", "kilo_code")  # on/off per editor app (sources/task_places.py)
TASK_DIRS = ("cline_tasks_dirs", "roo_code_dirs", "kilo_code_dirs")  # folders holding tasks/, replacing the found ones
MAX_BYTES = 1_000_000  # a settings file is a few hundred bytes; anything near this is not one


class SettingsError(Exception):
    """The settings file cannot be read or a value cannot be set; the message says where and why."""


@dataclass
class Settings:
    cline_dir: str | None = None
    data_dir: str | None = None
    sessions_dir: str | None = None
    refresh_seconds: int = 30
    daily_budget: float | None = None
    monthly_budget: float | None = None
    theme: str = "auto"  # the panel's shade: auto / light / dark
    max_file_mb: int = 256
    aliases: dict[str, str] = field(default_factory=dict)
    prices: dict[str, dict[str, float]] = field(default_factory=dict)
    currency: str = "USD"  # display currency (ISO 4217); amounts are converted with usd_rate
    usd_rate: float | None = None  # units of `currency` per US dollar, set by the person (never fetched)
    sync_dir: str | None = None  # a folder the person syncs between machines
    machine_name: str | None = None  # this machine's name in shared figures (default: the host name)
    sync_titles: bool = False  # whether titles and folder paths leave this machine through sync_dir
    # Editor task folders (sources/task_places.py): whether each app is read, and folders replacing the found ones
    cline_tasks: bool = True  # the Cline extension's pre-4.0 task folders (and the old CLI's ~/.cline/data/tasks)
    roo_code: bool = True
    kilo_code: bool = True
    cline_tasks_dirs: list[str] = field(default_factory=list)
    roo_code_dirs: list[str] = field(default_factory=list)
    kilo_code_dirs: list[str] = field(default_factory=list)
    kilo_code_db: list[str] = field(default_factory=list)  # Kilo Code 7's kilo.db files (or folders holding them)
    extra: dict[str, Any] = field(default_factory=dict)  # unknown keys, kept as they were
    invalid: dict[str, Any] = field(default_factory=dict)  # known keys with bad values: defaults used, kept on save

    def to_toml_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in _KEPT or value is None or value == {} or value == [] or value == f.default:
                continue
            out[f.name] = value
        for key, value in self.invalid.items():
            out.setdefault(key, value)
        out.update(self.extra)
        return out


_KEPT = ("extra", "invalid")
DEFAULTS = Settings()
KEYS = tuple(f.name for f in fields(Settings) if f.name not in _KEPT)


@dataclass(frozen=True)
class SettingsProblem:
    """Why the settings file could not be used (defaults are in use meanwhile)."""

    kind: str  # "unreadable" | "not_a_file" | "too_big" | "not_utf8" | "not_toml"
    message: str  # a sentence naming the file and what is wrong, without "using defaults"
    line: int | None = None  # 1-based, where the file's text says where
    key: str | None = None


@dataclass
class Loaded:
    settings: Settings
    path: Path
    exists: bool
    problem: SettingsProblem | None = None  # the file could not be parsed: defaults are in use
    warnings: list[str] = field(default_factory=list)

    @property
    def error(self) -> str | None:
        return self.problem.message if self.problem else None


_TOML_LINE = re.compile(r"\(at line (\d+), column \d+\)")


def _check(key: str, value: Any) -> Any:
    """Validate one value; raise ValueError with a plain message."""
    if key in ("cline_dir", "data_dir", "sessions_dir"):
        if not isinstance(value, str):
            raise ValueError("must be a folder path (a string)")
        return value.strip() or None
    if key == "refresh_seconds":
        if isinstance(value, bool) or not isinstance(value, int) or not 5 <= value <= 3600:
            raise ValueError("must be a whole number of seconds between 5 and 3600")
        return value
    if key == "max_file_mb":
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError("must be a whole number of megabytes, at least 1")
        return value
    if key in ("daily_budget", "monthly_budget"):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise ValueError("must be a number of US dollars, 0 or more (0 turns the budget off)")
        return float(value) or None
    if key == "usd_rate":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            raise ValueError("must be a positive number (units of your currency per US dollar)")
        return float(value)
    if key == "currency":
        if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z]{3}", value.strip()):
            raise ValueError("must be a three-letter currency code such as USD, EUR or GBP")
        return value.strip().upper()
    if key in ("sync_dir", "machine_name"):
        if not isinstance(value, str):
            raise ValueError("must be a string")
        return value.strip() or None
    if key in TASK_DIRS or key == "kilo_code_db":
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError("must be a list of folder paths (strings)")
        return [v.strip() for v in value if v.strip()]
    if key in ("sync_titles", *TASK_APPS):
        if not isinstance(value, bool):
            raise ValueError("must be true or false")
        return value
    if key == "theme":
        if value not in THEMES:
            raise ValueError(f"must be one of {', '.join(THEMES)}")
        return value
    if key == "aliases":
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise ValueError('must be a table of model = "canonical model" strings')
        return dict(value)
    if key == "prices":
        return _check_prices(value)
    raise ValueError("is not a trayburn setting")


def _check_prices(value: Any) -> dict[str, dict[str, float]]:
    if not isinstance(value, dict):
        raise ValueError('must be a table of [prices."model"] tables')
    out = {}
    for model, row in value.items():
        if not isinstance(row, dict):
            raise ValueError(f'prices."{model}" must be a table with {", ".join(PRICE_FIELDS)}')
        for k, v in row.items():
            if k not in PRICE_FIELDS:
                raise ValueError(f'prices."{model}".{k} is unknown (use {", ".join(PRICE_FIELDS)})')
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v < math.inf:
                raise ValueError(f'prices."{model}".{k} must be USD per million tokens, 0 or more')
        out[model] = {k: float(v) for k, v in row.items()}
    return out


def from_dict(data: dict[str, Any]) -> tuple[Settings, list[str]]:
    settings, warnings = Settings(), []
    for key, value in data.items():
        if key not in KEYS:
            settings.extra[key] = value
            warnings.append(f"unknown setting '{key}' (kept, not used)")
            continue
        try:
            setattr(settings, key, _check(key, value))
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


def parse_value(key: str, text: str) -> Any:
    """A value typed on the command line, for KEY."""
    if key in ("refresh_seconds", "max_file_mb"):
        try:
            return int(text)
        except ValueError:
            raise SettingsError(f"{key} must be a whole number, not '{text}'") from None
    if key in ("daily_budget", "monthly_budget", "usd_rate") or key.startswith("prices."):
        try:
            return float(text.lstrip("$"))
        except ValueError:
            raise SettingsError(f"{key} must be a number, not '{text}'") from None
    if key in TASK_DIRS:
        return [p for p in text.split(os.pathsep) if p.strip()]
    if key in ("sync_titles", *TASK_APPS):
        if text.strip().lower() not in ("true", "false", "yes", "no", "on", "off", "1", "0"):
            raise SettingsError(f"{key} must be true or false, not '{text}'")
        return text.strip().lower() in ("true", "yes", "on", "1")
    return text


def update(path: Path, key: str, text: str | None) -> Settings:
    """Set (text given) or unset (text None) one key, dotted for tables: aliases.M, prices.M.input."""
    settings = _editable(path)
    head, _, rest = key.partition(".")
    if head not in KEYS or (rest and head not in ("aliases", "prices")):
        raise SettingsError(f"unknown setting '{key}'. Known: {', '.join(KEYS)}")
    if rest and head in settings.invalid:
        raise SettingsError(f"'{head}' in {path} is not valid; fix it by hand (trayburn will not overwrite it)")
    settings.invalid.pop(head, None)
    _apply(settings, key, head, rest, text)
    edited = None if head in ("aliases", "prices") else _edit_line(path, settings, head)
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


def _apply(settings: Settings, key: str, head: str, rest: str, text: str | None) -> None:
    if head == "aliases" and rest:
        _update_table(settings.aliases, rest, text)
    elif head == "prices" and rest:
        model, _, part = rest.rpartition(".")
        if part not in PRICE_FIELDS or not model:
            raise SettingsError(f"use prices.MODEL.{{{','.join(PRICE_FIELDS)}}}, not '{key}'")
        row = settings.prices.setdefault(model, {})
        _update_table(row, part, None if text is None else parse_value(key, text))
        if not row:
            del settings.prices[model]
        _checked(settings, "prices", settings.prices)
    elif text is None:
        setattr(settings, head, getattr(DEFAULTS, head) if head not in ("aliases", "prices") else {})
    else:
        _checked(settings, head, parse_value(head, text))


def _checked(settings: Settings, key: str, value: Any) -> None:
    try:
        setattr(settings, key, _check(key, value))
    except ValueError as exc:
        text = str(exc)
        raise SettingsError(text if text.startswith(key) else f"{key} {text}") from None


def _update_table(table: dict, key: str, value: Any) -> None:
    if value is None:
        table.pop(key, None)
    else:
        table[key] = value
