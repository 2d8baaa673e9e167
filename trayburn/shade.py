"""Whether the desktop is light or dark: one answer for the tray icon and the summary window
(`panel_shade`, `window_shade`). Never imports a GUI toolkit, never raises, never waits more than a second.

The `theme` setting names the panel's shade: "light" and "dark" are taken as given; "auto" asks the
platform. The platform may tell two things: the colour scheme of windows, and the shade of the panel
(they differ on GNOME, whose top bar is dark in light mode too). Either may be unknown (None): the
tray then draws an icon that reads on both, the window uses its light palette.

What it reads: environment variables, a settings file, a time-limited `gsettings` or `defaults` call,
the Windows registry.
"""

from __future__ import annotations

import configparser
import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

log = logging.getLogger(__name__)

Shade = Literal["light", "dark"]
Runner = Callable[[list[str]], "str | None"]
CACHE_SECONDS = 60.0  # the window asks at every refresh; the desktop's answer rarely changes


@dataclass(frozen=True)
class Appearance:
    """Whether the desktop's windows and its panel are light or dark (None: not known)."""

    windows: Shade | None  # the colour scheme apps use
    panel: Shade | None  # the panel the tray icon sits on


UNKNOWN = Appearance(None, None)


def run_quiet(argv: list[str]) -> str | None:
    """The command's stdout if it ran (whatever its exit code), else None. Without a session bus it may not start
    one: `gsettings` with DISPLAY set and no DBUS_SESSION_BUS_ADDRESS autolaunches a `dbus-launch` that outlives
    it (dconf reads its settings file without a bus)."""
    env = dict(os.environ)
    env.setdefault("DBUS_SESSION_BUS_ADDRESS", "disabled:")
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=1.0, check=False, env=env)
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
