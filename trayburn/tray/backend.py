"""Which pystray backend to use, and what it can and cannot do.

pystray picks its backend once, from ``PYSTRAY_BACKEND``, when ``pystray`` is first
imported. So the choice is made here, before that import, and ``load_pystray()`` is
the one place that imports it. Nothing in this module imports pystray at import time.

The capability table mirrors the ``HAS_MENU`` / ``HAS_DEFAULT_ACTION`` /
``HAS_NOTIFICATION`` class attributes of pystray 0.19.5 (``pystray/_<backend>.py``),
with one correction found on a real display: see ``_OVERRIDES``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from types import ModuleType

BACKENDS = ("gtk", "appindicator", "xorg", "darwin", "win32", "dummy")


class BackendError(Exception):
    """A tray backend is unknown, unavailable, or clashes with one already loaded."""


@dataclass(frozen=True)
class Capabilities:
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
) -> str:
    """The backend to use: PYSTRAY_BACKEND if set, else the best one this system has.

    ``available(name)`` says whether a Linux backend can load; tests pass a fake. ``sni``: whether
    a StatusNotifierWatcher is on the session bus (`host.can_start` finds out); GNOME, KDE, XFCE
    and Cinnamon panels host StatusNotifierItems, so the appindicator backend is chosen there.
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
    if (sni or (sni is None and gnome)) and available("appindicator"):
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


def icon_class(pystray: ModuleType) -> type:
    """The Icon class to instantiate: pystray's, with trayburn's fixes for the backend (`icons`)."""
    from . import icons

    return icons.icon_class(pystray, loaded_backend(pystray))
