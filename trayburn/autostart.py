"""Start trayburn's tray at login, on three systems: a freedesktop autostart entry (Linux and the other
freedesktop desktops), a launchd agent (macOS) or a Run key value (Windows): enable, disable, and say what
is there. Never imports a GUI toolkit; never starts anything itself (the desktop does, at the next login).

Each system's implementation can ``render()`` what it would write, so tests on one OS check the other
two; ``autostart_for()`` picks the right one. The command written is `system.command(entry_point=True)`.
"""

from __future__ import annotations

import os
import plistlib
import re
import subprocess
import sys
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from . import files, system
from .system import APP_NAME

COMMENT = "Shows what the Cline CLI costs you today"
LAUNCHD_LABEL = "dev.trayburn.tray"
RUN_KEY = r"Software\Microsoft\Windows\CurrentVersion\Run"

# Characters that force an Exec argument into double quotes (Desktop Entry spec, "The Exec key").
_EXEC_RESERVED = frozenset(" \t\n\"'\\><~|&;$*?#()`")
# Inside double quotes these must be backslash-escaped.
_EXEC_QUOTED_ESCAPES = frozenset('"`$\\')
# A quoted argument, a bare run, separating spaces, or a quote that is never closed.
_EXEC_TOKEN = re.compile(r'"((?:\\.|[^"\\])*)"|([^ "]+)|( +)|(")')


class AutostartError(Exception):
    """Start-at-login could not be changed; the message says where and why."""


@dataclass(frozen=True)
class AutostartStatus:
    """Whether trayburn starts at login here, where that is set, and a line saying so."""

    enabled: bool
    location: str
    detail: str


def launch_command() -> list[str]:
    """The command that starts the tray at login, as an argument list (see `trayburn.system`)."""
    return system.command(entry_point=True)


class Autostart(ABC):
    """Start-at-login for one platform."""

    def __init__(self, command: Sequence[str] | None = None) -> None:
        self.command = list(command) if command is not None else launch_command()

    @property
    @abstractmethod
    def location(self) -> str:
        """Where the entry lives: a file path or a registry value."""

    @abstractmethod
    def render(self) -> str:
        """The content ``enable()`` writes."""

    @abstractmethod
    def enable(self) -> None: ...

    @abstractmethod
    def disable(self) -> None: ...

    @abstractmethod
    def status(self) -> AutostartStatus: ...

    def _status(self, enabled: bool, detail: str) -> AutostartStatus:
        return AutostartStatus(enabled=enabled, location=self.location, detail=detail)

    def _describe(self, found: Sequence[str]) -> str:
        text = f"starts: {subprocess.list2cmdline(list(found))}"
        if list(found) != self.command:
            text += f" (this install would start: {subprocess.list2cmdline(self.command)})"
        return text


# --- Linux and other freedesktop systems -------------------------------------------------------


def quote_exec_arg(arg: str) -> str:
    """One argument for a desktop entry's Exec key, before the string-value escaping."""
    if arg and not _EXEC_RESERVED.intersection(arg):
        quoted = arg
    else:
        inner = "".join("\\" + c if c in _EXEC_QUOTED_ESCAPES else c for c in arg)
        quoted = f'"{inner}"'
    return quoted.replace("%", "%%")


def escape_string_value(value: str) -> str:
    """The Desktop Entry spec's escaping for values of type string."""
    value = value.replace("\\", "\\\\")
    value = value.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    return "\\s" + value[1:] if value.startswith(" ") else value


def exec_value(command: Sequence[str]) -> str:
    """The Exec line's value, as it appears in the file."""
    return escape_string_value(" ".join(quote_exec_arg(a) for a in command))


def parse_exec(value: str) -> list[str]:
    """An Exec value as it appears in the file, back to arguments (``%%`` becomes ``%``)."""
    args: list[str] = []
    current: str | None = None
    for match in _EXEC_TOKEN.finditer(_unescape_string_value(value)):
        quoted, bare, space, stray = match.groups()
        if stray:
            raise ValueError(f"unterminated quote in Exec value: {value!r}")
        if space is None:
            part = bare if quoted is None else re.sub(r'\\([`"$\\])', r"\1", quoted)
            current = (current or "") + part
        elif current is not None:
            args.append(current)
            current = None
    if current is not None:
        args.append(current)
    return [a.replace("%%", "%") for a in args]


def _unescape_string_value(value: str) -> str:
    table = {"s": " ", "n": "\n", "t": "\t", "r": "\r", "\\": "\\"}
    return re.sub(r"\\(.)", lambda m: table.get(m.group(1), m.group(0)), value)


class FreedesktopAutostart(Autostart):
    """``$XDG_CONFIG_HOME/autostart/trayburn.desktop``."""

    def __init__(self, config_home: Path, command: Sequence[str] | None = None) -> None:
        super().__init__(command)
        self.path = config_home / "autostart" / f"{APP_NAME}.desktop"

    @property
    def location(self) -> str:
        return str(self.path)

    def render(self) -> str:
        lines = [
            "[Desktop Entry]",
            "Type=Application",
            "Version=1.0",
            f"Name={APP_NAME}",
            f"Comment={COMMENT}",
            f"Exec={exec_value(self.command)}",
            f"Icon={APP_NAME}",
            "Terminal=false",
            "Categories=Utility;",
            "X-GNOME-Autostart-enabled=true",
        ]
        return "\n".join(lines) + "\n"

    def enable(self) -> None:
        _write_atomic(self.path, self.render().encode("utf-8"))

    def disable(self) -> None:
        _remove(self.path)

    def status(self) -> AutostartStatus:
        try:
            entry = _read_desktop_entry(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return self._status(False, "no autostart entry")
        except (OSError, UnicodeDecodeError) as exc:
            return self._status(False, f"unreadable: {exc}")
        if entry.get("Hidden", "").lower() == "true":
            return self._status(False, "entry present but Hidden=true")
        if entry.get("X-GNOME-Autostart-enabled", "true").lower() == "false":
            return self._status(False, "entry present but X-GNOME-Autostart-enabled=false")
        try:
            found = parse_exec(entry.get("Exec", ""))
        except ValueError as exc:
            return self._status(False, f"entry present but {exc}")
        if not found:
            return self._status(False, "entry present but has no Exec")
        return self._status(True, self._describe(found))


def _read_desktop_entry(text: str) -> dict[str, str]:
    """The raw key=value pairs of the [Desktop Entry] group (values left escaped)."""
    entry: dict[str, str] = {}
    group = None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            group = line
        elif group == "[Desktop Entry]" and "=" in line:
            key, _, value = line.partition("=")
            entry[key.strip()] = value.strip()
    return entry


# --- macOS -----------------------------------------------------------------------------------


class LaunchdAutostart(Autostart):
    """``~/Library/LaunchAgents/dev.trayburn.tray.plist``, loaded by launchd at the next login."""

    def __init__(self, home: Path, command: Sequence[str] | None = None) -> None:
        super().__init__(command)
        self.path = home / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"

    @property
    def location(self) -> str:
        return str(self.path)

    def agent(self) -> dict[str, object]:
        return {
            "Label": LAUNCHD_LABEL,
            "ProgramArguments": list(self.command),
            "RunAtLoad": True,
            "ProcessType": "Interactive",
            "KeepAlive": False,
        }

    def render(self) -> str:
        return plistlib.dumps(self.agent(), fmt=plistlib.FMT_XML).decode("utf-8")

    def enable(self) -> None:
        _write_atomic(self.path, self.render().encode("utf-8"))

    def disable(self) -> None:
        _remove(self.path)

    def status(self) -> AutostartStatus:
        try:
            agent = plistlib.loads(self.path.read_bytes())
        except FileNotFoundError:
            return self._status(False, "no launch agent")
        except (OSError, plistlib.InvalidFileException, ValueError) as exc:
            return self._status(False, f"unreadable: {exc}")
        args = agent.get("ProgramArguments") if isinstance(agent, dict) else None
        if not isinstance(args, list) or not args:
            return self._status(False, "launch agent has no ProgramArguments")
        if agent.get("Disabled") is True:
            return self._status(False, "launch agent present but Disabled=true")
        if agent.get("RunAtLoad") is not True:
            return self._status(False, "launch agent present but RunAtLoad is not true")
        return self._status(True, self._describe([str(a) for a in args]))


# --- Windows ---------------------------------------------------------------------------------


class RunKey(Protocol):
    """The per-user Run key; a fake stands in for it in tests."""

    def get(self, name: str) -> str | None: ...

    def set(self, name: str, value: str) -> None: ...

    def delete(self, name: str) -> None: ...


class WinregRunKey:
    """``HKCU\\Software\\Microsoft\\Windows\\CurrentVersion\\Run`` through winreg (Windows only: elsewhere
    each call fails with an OSError, which `WindowsAutostart` reports like any unwritable key)."""

    def get(self, name: str) -> str | None:
        if sys.platform != "win32":
            raise OSError("the Run key exists only on Windows")
        import winreg  # (Windows only)

        try:
            with winreg.OpenKey(winreg.HKEY_CURRENT_USER, RUN_KEY) as key:
                value, _kind = winreg.QueryValueEx(key, name)
        except FileNotFoundError:
            return None
        return str(value)

    def set(self, name: str, value: str) -> None:
        if sys.platform != "win32":
            raise OSError("the Run key exists only on Windows")
        import winreg  # (Windows only)

        with winreg.CreateKeyEx(winreg.HKEY_CURRENT_USER, RUN_KEY, 0, winreg.KEY_SET_VALUE) as key:
            winreg.SetValueEx(key, name, 0, winreg.REG_SZ, value)

    def delete(self, name: str) -> None:
        if sys.platform != "win32":
            raise OSError("the Run key exists only on Windows")
        import winreg  # (Windows only)

        try:
            with winreg.OpenKey(winreg.HKEY_CURRENT_USER, RUN_KEY, 0, winreg.KEY_SET_VALUE) as key:
                winreg.DeleteValue(key, name)
        except FileNotFoundError:
            pass


class WindowsAutostart(Autostart):
    """The value ``trayburn`` under the per-user Run key."""

    def __init__(self, run_key: RunKey | None = None, command: Sequence[str] | None = None) -> None:
        super().__init__(command)
        self.run_key = run_key if run_key is not None else WinregRunKey()

    @property
    def location(self) -> str:
        return f"HKCU\\{RUN_KEY}\\{APP_NAME}"

    def render(self) -> str:
        return subprocess.list2cmdline(self.command)

    def enable(self) -> None:
        try:
            self.run_key.set(APP_NAME, self.render())
        except OSError as exc:
            raise AutostartError(f"cannot write {self.location}: {exc}") from exc

    def disable(self) -> None:
        try:
            self.run_key.delete(APP_NAME)
        except OSError as exc:
            raise AutostartError(f"cannot remove {self.location}: {exc}") from exc

    def status(self) -> AutostartStatus:
        try:
            value = self.run_key.get(APP_NAME)
        except OSError as exc:
            return self._status(False, f"unreadable: {exc}")
        if not value:
            return self._status(False, "no Run value")
        same = value == self.render()
        note = "" if same else f" (this install would start: {self.render()})"
        return self._status(True, f"starts: {value}{note}")


# --- choosing one, and file helpers ----------------------------------------------------------


def autostart_for(
    platform: str = sys.platform,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
    command: Sequence[str] | None = None,
    run_key: RunKey | None = None,
) -> Autostart:
    """The start-at-login implementation for ``platform`` (a ``sys.platform`` value)."""
    home = Path(home) if home is not None else Path.home()
    env = os.environ if env is None else env
    if platform == "darwin":
        return LaunchdAutostart(home, command)
    if platform in ("win32", "cygwin"):
        return WindowsAutostart(run_key, command)
    return FreedesktopAutostart(_xdg_config_home(home, env), command)


def _xdg_config_home(home: Path, env: Mapping[str, str]) -> Path:
    # The basedir spec says a relative XDG_CONFIG_HOME is invalid and must be ignored.
    value = env.get("XDG_CONFIG_HOME", "")
    return Path(value) if value and os.path.isabs(value) else home / ".config"


def _write_atomic(path: Path, data: bytes) -> None:
    """The entry names where trayburn is installed: written private (0600) and atomically."""
    try:
        files.atomic_write(path, data)
    except OSError as exc:
        raise AutostartError(f"cannot write {path}: {exc}") from exc


def _remove(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        raise AutostartError(f"cannot remove {path}: {exc}") from exc
