"""What the desktop offers the tray: can it be seen here (`can_start`), which pystray backend, and what that can do.
Never starts anything, never hangs, and imports pystray only in `load_pystray()`.

Standard library only at import time: the display and the bus are asked through `probe` (python-xlib and Gio
inside its functions), and pystray is imported by `load_pystray()` alone.

Can the tray be seen here? A display, a session bus, and something that hosts tray icons. `can_start()` answers
without starting anything and never hangs (every connection has a timeout); `trayburn doctor` and the tray's
start both call it. Its kinds:

- ``ok``: a tray host is there (``xembed``: an XEmbed tray owns _NET_SYSTEM_TRAY_S0;
  ``sni``: a StatusNotifierWatcher is on the session bus);
- ``no_display``, ``display_unreachable``, ``no_session_bus``: the tray cannot run; one line
  says why, and the tray exits non-zero (without a session bus it runs where an XEmbed tray is: ``ok``
  with ``bus`` False, notifications off);
- ``no_tray_host``: it can run, but nothing would show its icon; the person is told what to
  install, and the tray keeps running in case a panel comes up later.

Which backend, and what it can do: pystray picks its backend once, from ``PYSTRAY_BACKEND``, when ``pystray`` is
first imported. So the choice is made here (`choose_backend`), before that import, and `load_pystray()` is the
one place that imports it. The capability table mirrors the ``HAS_MENU`` / ``HAS_DEFAULT_ACTION`` /
``HAS_NOTIFICATION`` class attributes of pystray 0.19.5 (``pystray/_<backend>.py``), with one correction found
on a real display: see ``_OVERRIDES``. Whether the desktop's StatusNotifierItem host draws an item's label
(`host_draws_labels`) is here too. The Icon classes themselves are in `icons`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from types import ModuleType
from typing import Any

from . import probe

# ---- can the tray be seen here -----------------------------------------------------------------------------------

FATAL = ("no_display", "display_unreachable", "no_session_bus")
TERMINAL_HINT = "`trayburn today` works in a terminal"
NO_BUS_NOTICE = "no D-Bus session bus, so desktop notifications are off"
NO_HOST_HINT = (
    "nothing here shows tray icons: on GNOME install the AppIndicator extension "
    "(gnome-shell-extension-appindicator), elsewhere add a system tray to the panel; "
) + TERMINAL_HINT


@dataclass(frozen=True)
class StartCheck:
    """Whether a tray can start here, and what is missing if not."""

    kind: str  # ok | no_display | display_unreachable | no_session_bus | no_tray_host
    message: str  # one line for a person
    xembed: bool = False  # an XEmbed tray owns the system tray selection
    sni: bool = False  # a StatusNotifierWatcher is on the session bus
    bus: bool = True  # a session bus answers (without one: an XEmbed icon, no notifications)

    @property
    def ok(self) -> bool:
        return self.kind == "ok"

    @property
    def fatal(self) -> bool:
        return self.kind in FATAL


def can_start(env: Mapping[str, str] | None = None, *, platform: str | None = None) -> StartCheck:
    """Whether the tray can start and be seen here, and why not. A session bus is needed except
    by the bare X11 backend (PYSTRAY_BACKEND=xorg), which talks to the X server alone."""
    env = os.environ if env is None else env
    platform = platform or sys.platform
    if platform in ("darwin", "win32"):
        return StartCheck("ok", "the system's own menu bar / notification area")
    display = env.get("DISPLAY", "")
    if not display:
        where = " (a Wayland session without XWayland)" if env.get("WAYLAND_DISPLAY") else ""
        return StartCheck("no_display", f"no graphical session: DISPLAY is not set{where}; {TERMINAL_HINT}")
    problem = probe.display_problem(display)
    if problem:
        return StartCheck("display_unreachable", f"no graphical session: {problem}; {TERMINAL_HINT}")
    bus = probe.session_bus(env)
    if not bus and env.get("PYSTRAY_BACKEND") == "xorg":
        xembed = probe.has_xembed_tray(display)
        return (
            StartCheck("ok", f"an XEmbed tray on {display}", xembed=True)
            if xembed
            else StartCheck("no_tray_host", NO_HOST_HINT)
        )
    problem = probe.bus_problem(bus) if bus else "DBUS_SESSION_BUS_ADDRESS is not set"
    if problem and probe.has_xembed_tray(display):  # an XEmbed icon needs no bus: only notifications do
        return StartCheck("ok", f"an XEmbed tray on {display}; {NO_BUS_NOTICE} ({problem})", xembed=True, bus=False)
    if not bus:
        return StartCheck(
            "no_session_bus",
            "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set): start trayburn from your desktop "
            f"session, or as `dbus-run-session trayburn`; {TERMINAL_HINT}",
        )
    if problem:
        return StartCheck("no_session_bus", f"the D-Bus session bus does not answer: {problem}; {TERMINAL_HINT}")
    xembed, sni = probe.has_xembed_tray(display), probe.has_sni_watcher(bus)
    if not (xembed or sni):
        return StartCheck("no_tray_host", NO_HOST_HINT)
    hosts = " and ".join(n for n, on in (("an XEmbed tray", xembed), ("a StatusNotifierWatcher", sni)) if on)
    return StartCheck("ok", f"{hosts} on {display}", xembed=xembed, sni=sni)


# ---- which backend, and what it can do ---------------------------------------------------------------------------

BACKENDS = ("gtk", "appindicator", "xorg", "darwin", "win32", "dummy")


class BackendError(Exception):
    """A tray backend is unknown, unavailable, or clashes with one already loaded."""


@dataclass(frozen=True)
class Capabilities:
    """What the tray backend in use can do (menu, default action, notices)."""

    backend: str
    has_menu: bool
    has_default_action: bool  # a left click on the icon runs the default menu item
    can_notify: bool
    needs_main_thread: bool  # Icon.run() must be called from the main thread

    def missing(self) -> list[str]:
        """What this backend lacks, in words a user can act on."""
        lacks = []
        if self.backend == "dummy":
            lacks.append("dummy backend: shows nothing (for tests only)")
        if not self.has_menu and not self.has_default_action:
            lacks.append("no menu and no clicks: use `trayburn summary` or the CLI")
        elif not self.has_menu:
            lacks.append("no menu: click the icon for the summary, or use the CLI")
        elif not self.has_default_action:
            lacks.append("no left-click action: open the summary from the menu")
        if not self.can_notify:
            lacks.append("no desktop notifications")
        return lacks


# pystray 0.19.5's own class attributes, per backend (read from its source).
_PYSTRAY_FLAGS = {
    #                menu   default notify
    "gtk": (True, True, True),
    "appindicator": (True, False, True),
    "xorg": (False, True, False),
    "darwin": (True, False, True),
    "win32": (True, True, True),
    "dummy": (True, True, True),
}

# Where pystray's flag is wrong in practice. The xorg icon window selects only
# Exposure|StructureNotify events, never ButtonPress, so no click ever reaches it
# (checked under trayer: the icon docks and draws, clicks do nothing).
_OVERRIDES: dict[str, dict[str, bool]] = {"xorg": {"has_default_action": False}}

_BLURBS = {
    "gtk": "GTK 3 status icon in an XEmbed tray",
    "appindicator": "AppIndicator / StatusNotifierItem",
    "xorg": "bare X11 XEmbed icon",
    "darwin": "macOS menu bar item",
    "win32": "Windows notification area icon",
    "dummy": "no icon at all",
}


def capabilities(backend: str) -> Capabilities:
    if backend not in _PYSTRAY_FLAGS:
        raise BackendError(f"unknown tray backend {backend!r}; known: {', '.join(BACKENDS)}")
    menu, default, notify = _PYSTRAY_FLAGS[backend]
    caps = Capabilities(
        backend=backend,
        has_menu=menu,
        has_default_action=default,
        can_notify=notify,
        needs_main_thread=backend == "darwin",
    )
    has_default_action = _OVERRIDES.get(backend, {}).get("has_default_action", caps.has_default_action)
    return replace(caps, has_default_action=has_default_action)


def describe(backend: str) -> str:
    """One line for the log and `trayburn doctor`."""
    lacks = capabilities(backend).missing()
    tail = "lacks: " + "; ".join(lacks) if lacks else "menu, click and notifications"
    return f"tray backend {backend} ({_BLURBS[backend]}): {tail}"


def choose_backend(
    env: Mapping[str, str] = os.environ,
    *,
    platform: str = sys.platform,
    available: Callable[[str], bool] | None = None,
    sni: bool | None = None,
    xembed: bool | None = None,
    promised: bool = False,
) -> str:
    """The backend to use: PYSTRAY_BACKEND if set, else the best one this system has.

    ``available(name)`` says whether a Linux backend can load; tests pass a fake. ``sni``: whether
    a StatusNotifierWatcher is on the session bus (`host.can_start` finds out); GNOME, KDE, XFCE
    and Cinnamon panels host StatusNotifierItems, so the appindicator backend is chosen there.
    ``promised``: this desktop will have a watcher (`watcher.promised`) that is not there yet: with no XEmbed
    tray either, the appindicator backend too (its item registers with the watcher when it comes, and shows
    as an XEmbed icon meanwhile where a tray comes first).
    """
    forced = env.get("PYSTRAY_BACKEND")
    if forced:  # pystray ignores an empty value too
        if forced not in BACKENDS:
            raise BackendError(
                f"PYSTRAY_BACKEND={forced!r} is not a pystray backend; use one of: {', '.join(BACKENDS)}"
            )
        return forced
    if platform == "darwin":
        return "darwin"
    if platform == "win32":
        return "win32"
    available = available or _available
    gnome = "GNOME" in env.get("XDG_CURRENT_DESKTOP", "").upper()
    later = promised and not xembed  # the panel is still loading: its watcher is on the way
    if (sni or later or (sni is None and gnome)) and available("appindicator"):
        return "appindicator"  # stock GNOME has no XEmbed tray: a gtk status icon would be invisible
    if env.get("DISPLAY") and available("gtk"):
        return "gtk"
    if available("appindicator"):
        return "appindicator"
    return "xorg"


def _available(backend: str) -> bool:
    probe = {"gtk": _gtk3_works, "appindicator": _appindicator_installed}[backend]
    try:
        return probe()
    except (ImportError, ValueError):
        return False


def _gtk3_works() -> bool:
    import gi

    gi.require_version("Gtk", "3.0")
    from gi.repository import Gtk

    return bool(Gtk.init_check()[0])  # what pystray itself checks on import


def _appindicator_installed() -> bool:
    import gi

    for namespace in ("AppIndicator3", "AyatanaAppIndicator3"):
        try:
            gi.require_version(namespace, "0.1")
            return True
        except ValueError:
            continue
    return False


def load_pystray(backend: str) -> ModuleType:
    """Import pystray with ``backend``; the only place trayburn imports pystray.

    Raises BackendError if pystray is already loaded with another backend (it
    cannot switch) or if the backend fails to load.
    """
    capabilities(backend)  # validates the name
    loaded = sys.modules.get("pystray")
    if loaded is not None:
        current = loaded_backend(loaded)
        if current != backend:
            raise BackendError(
                f"pystray is already loaded with the {current} backend, not {backend}; "
                "choose the backend before anything imports pystray"
            )
        return loaded
    os.environ["PYSTRAY_BACKEND"] = backend
    try:
        import pystray
    except ImportError as exc:
        raise BackendError(f"the {backend} tray backend does not load: {exc}") from exc
    module: ModuleType = pystray
    return module


def loaded_backend(pystray: ModuleType) -> str:
    """The backend an imported pystray module is using, e.g. "gtk"."""
    module = pystray.Icon.__module__.rsplit(".", 1)[-1].lstrip("_")
    return "dummy" if module == "base" else module


def available(backend: str) -> bool:
    """Whether a Linux backend ("gtk", "appindicator") can load here."""
    return _available(backend)


LABEL_DESKTOPS = ("GNOME", "UNITY", "UBUNTU", "BUDGIE", "PANTHEON", "MATE")  # hosts known to draw the item's label


def host_draws_labels(env: Any = None) -> bool:
    """Whether this desktop's StatusNotifierItem host draws an item's label (GNOME's AppIndicator extension,
    Unity, Budgie, MATE's indicator applet). KDE Plasma and xfce4-panel show the icon only: the icon then
    carries the figure, as on an XEmbed tray."""
    desktop = (env if env is not None else os.environ).get("XDG_CURRENT_DESKTOP", "").upper()
    return any(name in desktop for name in LABEL_DESKTOPS)
