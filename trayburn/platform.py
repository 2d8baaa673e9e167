"""The operating system and desktop around trayburn, without a GUI toolkit: log files, opening a file or
folder, one tray per user, starting trayburn detached, starting it at login, and whether the desktop
is light or dark.

Logging to a rotating file in the platform log dir. Nothing is printed on the GUI path.

The log (it names folders and sessions) is private: its folder 0700, its files 0600, never opened
through a symbolic link. Where it cannot be written, logging goes to stderr (or nowhere) and the
reason is the first thing logged: a log problem never stops the app.

Open a file or folder with the desktop's own program (a local program; nothing leaves the machine).

The opener runs in the home folder; if it fails, its exit code and stderr are logged.

One tray per user: an exclusive lock on a file in the state dir, held for the process's life.

The lock file is private (0600) and never opened through a link: a link planted in its place is
refused (fsutil.Refused, an OSError with a message), never truncated.

The one way trayburn starts itself: at login, and as the tray's child processes.

`python -m trayburn` run from a folder that holds a `trayburn/` folder (a clone in `$HOME`, say)
imports that folder instead of the installed package. So a command never relies on the current
folder: the frozen app is its own executable; an installed entry point beside the interpreter is
used as it is (its folder, not the current one, comes first on sys.path); otherwise Python runs
with `-P` (3.11+: the current folder is not put on sys.path). `child_options()` also gives an
explicit working folder, so the child's relative paths never depend on where the tray started.

No GUI imports.

Start trayburn's tray at login: a freedesktop autostart entry, a launchd agent, or a Run key.

No GUI imports. Each platform's implementation can ``render()`` what it would write, so tests on
one OS check the other two; ``autostart_for()`` picks the right one.

Is the desktop light or dark? One answer for the tray icon and the summary window (`panel_shade`, `window_shade`).

The `theme` setting names the panel's shade: "light" and "dark" are taken as given; "auto" asks the
platform. The platform may tell two things: the colour scheme of windows, and the shade of the panel
(they differ on GNOME, whose top bar is dark in light mode too). Either may be unknown (None): the
tray then draws an icon that reads on both, the window uses its light palette.

No GUI toolkit here: environment variables, a settings file, a time-limited `gsettings` or
`defaults` call, the Windows registry. Never raises.
"""

from __future__ import annotations

import configparser
import io
import logging
import logging.handlers
import os
import plistlib
import re
import subprocess
import sys
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal, Protocol

from . import files as fsutil
from . import paths

FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """RotatingFileHandler whose files are opened through fsutil (0600, no link followed)."""

    def _open(self) -> io.TextIOWrapper:  # the base class's hook for each (re)open
        fd = fsutil.open_private(self.baseFilename, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        return open(fd, "a", encoding=self.encoding, errors=self.errors)  # noqa: SIM115 (the handler closes it)


def setup(level: int = logging.INFO, log_dir: Path | None = None) -> Path:
    path = (log_dir or paths.log_dir()) / "trayburn.log"
    handler: logging.Handler
    problem = None
    try:
        fsutil.private_dir(path.parent)
        handler = PrivateRotatingFileHandler(path, maxBytes=1_000_000, backupCount=3, encoding="utf-8")
    except OSError as exc:
        problem = f"cannot write the log {path}: {exc}"
        handler = logging.StreamHandler(sys.stderr) if sys.stderr is not None else logging.NullHandler()
    handler.setFormatter(logging.Formatter(FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for noisy in ("PIL", "genai_prices", "httpx2"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    if problem:
        logging.getLogger(__name__).warning("%s", problem)
    return path


log = logging.getLogger(__name__)


def open_path(path: str | os.PathLike[str]) -> None:
    if sys.platform == "win32":
        os.startfile(path)  # type: ignore[attr-defined,unused-ignore]  # noqa: S606
        return
    argv = ["open" if sys.platform == "darwin" else "xdg-open", str(path)]
    proc = subprocess.Popen(
        argv,
        cwd=working_folder(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    threading.Thread(target=_watch, args=(proc, argv), daemon=True).start()


def _watch(proc: subprocess.Popen[bytes], argv: list[str]) -> None:
    err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
    code = proc.wait()
    if code:
        log.error("%s exited with %d: %s", describe(argv), code, err.strip()[-600:])


EXIT_ALREADY_RUNNING = 3


class AlreadyRunning(Exception):
    def __init__(self, pid: str):
        super().__init__(
            f"the tray is already running (pid {pid or 'unknown'}); look for its icon, "
            "or use `trayburn today` in a terminal"
        )
        self.pid = pid


class InstanceLock:
    def __init__(self, path: Path):
        self.path = path
        self.fh: IO[str] | None = None

    def acquire(self) -> InstanceLock:
        fsutil.private_dir(self.path.parent)
        fd = fsutil.open_private(self.path, os.O_RDWR | os.O_CREAT)
        fh = os.fdopen(fd, "r+")  # held open while the lock lives
        try:
            _lock(fh)
        except OSError:
            fh.seek(0)
            pid = fh.read().strip()
            fh.close()
            raise AlreadyRunning(pid) from None
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        self.fh = fh
        return self

    def release(self) -> None:
        if self.fh:
            self.fh.close()
            self.fh = None


def _lock(fh: IO[str]) -> None:
    if sys.platform == "win32":
        import msvcrt  # (Windows only)

        fh.seek(0)
        msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)
    else:
        import fcntl  # (POSIX only)

        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)


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
    enabled: bool
    location: str
    detail: str


def launch_command() -> list[str]:
    """The command that starts the tray at login, as an argument list (see `trayburn.platform`)."""
    return command(entry_point=True)


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
        fsutil.atomic_write(path, data)
    except OSError as exc:
        raise AutostartError(f"cannot write {path}: {exc}") from exc


def _remove(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        raise AutostartError(f"cannot remove {path}: {exc}") from exc


Shade = Literal["light", "dark"]
Runner = Callable[[list[str]], "str | None"]
CACHE_SECONDS = 60.0  # the window asks at every refresh; the desktop's answer rarely changes


@dataclass(frozen=True)
class Appearance:
    windows: Shade | None  # the colour scheme apps use
    panel: Shade | None  # the panel the tray icon sits on


UNKNOWN = Appearance(None, None)


def run_quiet(argv: list[str]) -> str | None:
    """The command's stdout if it ran (whatever its exit code), else None."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=1.0, check=False)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return done.stdout.strip()


def panel_shade(
    setting: str, env: Mapping[str, str] | None = None, *, platform: str | None = None, run: Runner | None = None
) -> Shade | None:
    """The panel's shade for the icon: the setting if light/dark, else what the platform says, or None."""
    if setting in ("light", "dark"):
        return setting  # type: ignore[return-value]
    return detect(env, platform=platform, run=run).panel


def window_shade(
    setting: str | None, env: Mapping[str, str] | None = None, *, platform: str | None = None, run: Runner | None = None
) -> Shade:
    """The summary window's shade: the setting if light/dark, else the desktop's scheme, else light."""
    if setting in ("light", "dark"):
        return setting  # type: ignore[return-value]
    return detect(env, platform=platform, run=run).windows or "light"


_cache: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[float, Appearance]] = {}


def detect(
    env: Mapping[str, str] | None = None, *, platform: str | None = None, run: Runner | None = None
) -> Appearance:
    """What the platform says about its shades (cached for a minute when asked with the real runner)."""
    env = os.environ if env is None else env
    platform = platform or sys.platform
    if run is not None:
        return _detect(env, platform, run)
    key = (platform, tuple(sorted((k, v) for k, v in env.items() if k in _ENV_KEYS)))
    hit = _cache.get(key)
    if hit is not None and time.monotonic() - hit[0] < CACHE_SECONDS:
        return hit[1]
    found = _detect(env, platform, run_quiet)
    _cache[key] = (time.monotonic(), found)
    return found


_ENV_KEYS = ("GTK_THEME", "XDG_CURRENT_DESKTOP", "HOME", "XDG_CONFIG_HOME", "GSETTINGS_BACKEND", "DISPLAY")


def _detect(env: Mapping[str, str], platform: str, run: Runner) -> Appearance:
    try:
        if platform == "darwin":
            return _macos(run)
        if platform == "win32":
            return _windows()
        return _linux(env, run)
    except Exception:  # detection is a nicety; never take the app down
        log.debug("appearance detection failed", exc_info=True)
        return UNKNOWN


def _macos(run: Runner) -> Appearance:
    out = run(["defaults", "read", "-g", "AppleInterfaceStyle"])
    if out is None:
        return UNKNOWN
    shade: Shade = "dark" if "dark" in out.lower() else "light"  # the key is unset in light mode
    return Appearance(shade, shade)


def _windows() -> Appearance:
    import winreg  # type: ignore[import-not-found,unused-ignore]

    path = r"Software\Microsoft\Windows\CurrentVersion\Themes\Personalize"
    found: dict[str, Shade] = {}
    with winreg.OpenKey(winreg.HKEY_CURRENT_USER, path) as key:  # type: ignore[attr-defined,unused-ignore]
        for name in ("SystemUsesLightTheme", "AppsUseLightTheme"):
            try:
                value, _ = winreg.QueryValueEx(key, name)  # type: ignore[attr-defined,unused-ignore]
            except OSError:
                continue
            found[name] = "light" if value else "dark"
    taskbar = found.get("SystemUsesLightTheme") or found.get("AppsUseLightTheme")
    return Appearance(found.get("AppsUseLightTheme") or taskbar, taskbar)


def _linux(env: Mapping[str, str], run: Runner) -> Appearance:
    desktop = env.get("XDG_CURRENT_DESKTOP", "").lower()
    if ":dark" in env.get("GTK_THEME", "").lower():
        return Appearance("dark", "dark")
    if "kde" in desktop:
        kde = _kde_shade(env)
        return Appearance(kde, kde)
    scheme = _gnome_scheme(run)
    if "gnome" in desktop or "unity" in desktop:
        return Appearance(scheme, "dark")  # GNOME Shell's top bar is dark in light mode too
    return Appearance(scheme, scheme)


def _gnome_scheme(run: Runner) -> Shade | None:
    out = run(["gsettings", "get", "org.gnome.desktop.interface", "color-scheme"]) or ""
    if "prefer-dark" in out:
        return "dark"
    if "prefer-light" in out:
        return "light"
    theme = run(["gsettings", "get", "org.gnome.desktop.interface", "gtk-theme"]) or ""
    return "dark" if "dark" in theme.lower() else None  # "Adwaita" says nothing about the panel


def _kde_shade(env: Mapping[str, str]) -> Shade | None:
    """KDE's colour scheme: the window background in kdeglobals, by its luminance."""
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".config")
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read(Path(base) / "kdeglobals", encoding="utf-8")
    except (OSError, configparser.Error, UnicodeDecodeError):
        return None
    value = parser.get("Colors:Window", "BackgroundNormal", fallback="")
    try:
        red, green, blue = (int(v) for v in value.split(",")[:3])
    except ValueError:
        return None
    return "dark" if 0.2126 * red + 0.7152 * green + 0.0722 * blue < 128 else "light"
