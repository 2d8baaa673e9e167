"""The desktop around the tray: can it be seen here, which pystray backend, and pystray's Icon classes per backend.

Standard library only at import time: python-xlib and Gio are imported inside the checks, gi inside the Icon
classes of the backends that use it, and pystray only by `load_pystray()`.

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
on a real display: see ``_OVERRIDES``.

The Icon classes: every class `icon_class()` returns offers, beside pystray's own API:

- ``on_size``: a callable given the tray's real icon size in pixels when the tray reports one
  (gtk: GtkStatusIcon's size-changed), so the icon can be drawn at that size, not scaled;
- ``notifications``: whether desktop notifications work. A notification service that cannot
  start (a D-Bus session without one, or one that fails to activate) costs notifications, not
  the tray: pystray's notifier would raise in the icon's start and take the tray down;
- ``activates``: whether a primary click runs the default menu item (appindicator: only where
  the library has an "activate" signal, checked at run time; a middle click runs it everywhere);
- the tooltip: gtk sets the title only; here the status icon's tooltip is set too;
- ``has_label`` / ``set_label(text, guide)``: text beside the icon, where the item can carry it
  (appindicator's XAyatanaLabel; macOS: the status item's title, not verified on a Mac here); ``draws_label``:
  the host surely draws it (macOS), so the icon can be the bare mark.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import re
import signal
import socket
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from types import ModuleType
from typing import Any
from urllib.parse import unquote

log = logging.getLogger(__name__)

# ---- can the tray be seen here -----------------------------------------------------------------------------------

SNI_WATCHER = "org.kde.StatusNotifierWatcher"
TIMEOUT_S = 2.0
FATAL = ("no_display", "display_unreachable", "no_session_bus")
TERMINAL_HINT = "`trayburn today` works in a terminal"
NO_BUS_NOTICE = "no D-Bus session bus, so desktop notifications are off"
NO_HOST_HINT = (
    "nothing here shows tray icons: on GNOME install the AppIndicator extension "
    "(gnome-shell-extension-appindicator), elsewhere add a system tray to the panel; "
) + TERMINAL_HINT


@dataclass(frozen=True)
class StartCheck:
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
    problem = display_problem(display)
    if problem:
        return StartCheck("display_unreachable", f"no graphical session: {problem}; {TERMINAL_HINT}")
    bus = session_bus(env)
    if not bus and env.get("PYSTRAY_BACKEND") == "xorg":
        xembed = has_xembed_tray(display)
        return (
            StartCheck("ok", f"an XEmbed tray on {display}", xembed=True)
            if xembed
            else StartCheck("no_tray_host", NO_HOST_HINT)
        )
    problem = bus_problem(bus) if bus else "DBUS_SESSION_BUS_ADDRESS is not set"
    if problem and has_xembed_tray(display):  # an XEmbed icon needs no bus: only notifications do
        return StartCheck("ok", f"an XEmbed tray on {display}; {NO_BUS_NOTICE} ({problem})", xembed=True, bus=False)
    if not bus:
        return StartCheck(
            "no_session_bus",
            "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set): start trayburn from your desktop "
            f"session, or as `dbus-run-session trayburn`; {TERMINAL_HINT}",
        )
    if problem:
        return StartCheck("no_session_bus", f"the D-Bus session bus does not answer: {problem}; {TERMINAL_HINT}")
    xembed, sni = has_xembed_tray(display), has_sni_watcher(bus)
    if not (xembed or sni):
        return StartCheck("no_tray_host", NO_HOST_HINT)
    hosts = " and ".join(n for n, on in (("an XEmbed tray", xembed), ("a StatusNotifierWatcher", sni)) if on)
    return StartCheck("ok", f"{hosts} on {display}", xembed=xembed, sni=sni)


# --- the display -----------------------------------------------------------------------------------
_DISPLAY = re.compile(r"^(?P<host>[^:]*):(?P<number>\d+)(?:\.\d+)?$")


def display_problem(display: str) -> str | None:
    """None if an X server answers at `display`, else what is wrong (connects with a timeout)."""
    match = _DISPLAY.match(display)
    if match is None:
        return f"DISPLAY={display!r} is not a display name"
    host, number = match["host"], int(match["number"])
    try:
        if host in ("", "unix") or host.startswith("/"):
            _connect_unix(host if host.startswith("/") else f"/tmp/.X11-unix/X{number}")
        else:
            socket.create_connection((host, 6000 + number), timeout=TIMEOUT_S).close()
    except OSError as exc:
        return f"no X server answers at DISPLAY={display} ({exc.strerror or exc})"
    return None


def _connect_unix(path: str) -> None:
    errors: list[OSError] = []
    candidates = [path] + (["\0" + path] if sys.platform.startswith("linux") else [])
    for address in candidates:  # the socket file, then Linux's abstract socket of the same name
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(TIMEOUT_S)
            try:
                sock.connect(address)
                return
            except OSError as exc:
                errors.append(exc)
    raise errors[0]


def has_xembed_tray(display: str) -> bool:
    """Whether an XEmbed system tray owns _NET_SYSTEM_TRAY_S<screen> on `display`."""
    try:
        from Xlib import display as xdisplay

        connection = xdisplay.Display(display)
    except Exception:  # no python-xlib, or the server went away
        log.debug("cannot ask %s for its tray", display, exc_info=True)
        return False
    try:
        screen = connection.get_default_screen()
        owner = connection.get_selection_owner(connection.intern_atom(f"_NET_SYSTEM_TRAY_S{screen}"))
        return bool(getattr(owner, "id", owner) != 0)  # X.NONE when nobody owns it
    finally:
        connection.close()


# --- the session bus ---------------------------------------------------------------------------------


def session_bus(env: Mapping[str, str] | None = None) -> str | None:
    """The session bus's address: DBUS_SESSION_BUS_ADDRESS, else the per-user bus GLib finds without it."""
    env = os.environ if env is None else env
    return env.get("DBUS_SESSION_BUS_ADDRESS") or _default_bus(env)


def _default_bus(env: Mapping[str, str]) -> str | None:
    """The systemd-style per-user bus, which GLib finds without the variable."""
    runtime = env.get("XDG_RUNTIME_DIR")
    path = os.path.join(runtime, "bus") if runtime else ""
    return f"unix:path={path}" if path and os.path.exists(path) else None


def bus_problem(address: str) -> str | None:
    """None if something listens at the bus address (unix sockets are tried; others assumed fine)."""
    problem: str | None = None
    for part in address.split(";"):
        transport, _, params = part.partition(":")
        if transport != "unix":
            return None
        fields = dict(p.split("=", 1) for p in params.split(",") if "=" in p)
        path = unquote(fields.get("path", ""))
        abstract = fields.get("abstract")
        try:
            if path:
                _connect_unix_exact(path)
            elif abstract is not None:
                _connect_unix_exact("\0" + unquote(abstract))
            else:
                return None  # tmpdir= / dir= / runtime=: only a server uses those
            return None
        except OSError as exc:
            problem = f"{address} ({exc.strerror or exc})"
    return problem


def _connect_unix_exact(address: str) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(TIMEOUT_S)
        sock.connect(address)


def has_sni_watcher(address: str) -> bool:
    """Whether a StatusNotifierWatcher (the SNI host's registry) is on the bus at `address`."""
    try:
        import gi

        gi.require_version("Gio", "2.0")
        from gi.repository import Gio, GLib
    except (ImportError, ValueError):
        return False
    try:
        flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
        bus = Gio.DBusConnection.new_for_address_sync(address, flags, None, None)
        try:
            reply = bus.call_sync(
                "org.freedesktop.DBus",
                "/org/freedesktop/DBus",
                "org.freedesktop.DBus",
                "NameHasOwner",
                GLib.Variant("(s)", (SNI_WATCHER,)),
                GLib.VariantType("(b)"),
                Gio.DBusCallFlags.NONE,
                int(TIMEOUT_S * 1000),
                None,
            )
            return bool(reply.unpack()[0])
        finally:
            bus.close_sync(None)
    except Exception:  # GLib.Error: the bus went away, refused us, or timed out
        log.debug("cannot ask the session bus for %s", SNI_WATCHER, exc_info=True)
        return False


# ---- which backend, and what it can do ---------------------------------------------------------------------------

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


def icon_class(pystray: ModuleType, backend: str | None = None) -> type:
    """The Icon class to instantiate: pystray's, with trayburn's fixes for the backend it loaded (or for
    `backend`, one pystray loads beside it: the appindicator Icon a gtk icon gives way to, `TrayApp.become`)."""
    loaded = loaded_backend(pystray)
    backend = backend or loaded
    if backend == loaded:
        base = pystray.Icon
    else:
        capabilities(backend)  # validates the name
        try:
            base = importlib.import_module(f"pystray._{backend}").Icon
        except (ImportError, ValueError) as exc:
            raise BackendError(f"the {backend} tray backend does not load: {exc}") from exc
    if backend == "dummy":
        return _headless(base)
    if backend == "gtk":
        return _gtk(base)
    if backend == "appindicator":
        return _appindicator(base)
    if backend == "darwin":
        return _darwin(base)
    return _plain(base, activates=backend in ("win32",))


def available(backend: str) -> bool:
    """Whether a Linux backend ("gtk", "appindicator") can load here."""
    return _available(backend)


# ---- pystray's Icon classes, per backend -------------------------------------------------------------------------

SizeCallback = Callable[[int], None]
NOTIFIER = True  # False: no session bus (app.main): the icon runs without asking for a notifier
FIT_CHECK_MS = 400  # after drawing at the tray's size, when to look whether the tray gave the icon that room


# The icon's size until the tray says (gtk does): libappindicator's 22 px; the bare X11 backend and
# macOS scale the image themselves; Windows' small-icon size (16 px at 100 %) is asked at start.
START_SIZE = {"appindicator": 22, "xorg": 64, "darwin": 64}


def start_size(backend: str) -> int:
    if backend == "win32":
        try:
            import ctypes

            return int(ctypes.windll.user32.GetSystemMetrics(49)) or 16  # type: ignore[attr-defined,unused-ignore]
        except (AttributeError, OSError):  # SM_CXSMICON unavailable
            return 16
    return START_SIZE.get(backend, 24)


def _plain(base: type, activates: bool) -> type:
    class Icon(base):
        on_size: SizeCallback | None = None
        notifications = bool(getattr(base, "HAS_NOTIFICATION", False))

        @property
        def activates(self) -> bool:
            return activates

    return Icon


class _SafeNotifier:
    """For pystray's GtkIcon subclasses: start without a notifier when it cannot be had."""

    _notifier: Any

    def _initialize(self) -> None:
        from pystray._util import notify_dbus

        with contextlib.suppress(ValueError):  # not the main thread
            signal.signal(signal.SIGINT, signal.SIG_DFL)
        try:
            self._notifier = notify_dbus.Notifier() if NOTIFIER else None  # (None: said once, at the start)
        except Exception as exc:
            log.warning("desktop notifications are unavailable here (%s); the tray runs without them", exc)
            self._notifier = None
        self._mark_ready()  # type: ignore[attr-defined]

    @property
    def notifications(self) -> bool:
        return getattr(self, "_notifier", None) is not None

    def _notify(self, message: str, title: str | None = None) -> None:
        if self._notifier is None:
            log.info("not shown (no notification service): %s", message)
            return
        super()._notify(message, title)  # type: ignore[misc]

    def _remove_notification(self) -> None:
        if self._notifier is not None:
            super()._remove_notification()  # type: ignore[misc]


def _gtk(base: type) -> type:
    from gi.repository import GLib

    class GtkTrayIcon(_SafeNotifier, base):
        on_size: SizeCallback | None = None
        activates = True

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._status_icon.connect("size-changed", self._size_changed)

        def _size_changed(self, status_icon: Any, size: int) -> bool:
            """`size`: what the tray offers across it (a horizontal tray's height). The other side is what the
            icon asks for (trayer gives a 16 px icon a 16 px wide slot even on a 32 px panel): drawn at `size`,
            the icon gets a square slot where the tray grants it; where it does not (trayer keeps a 20 px icon
            in a 16 px slot), it is drawn again at the slot's real size rather than scaled into it.

            The slot is read only once the tray has laid the icon out, and believed only when two looks
            FIT_CHECK_MS apart agree: read at once (or once), it could still be the 16 px slot of the icon
            before this drawing, and the icon stayed 16 px on a 32 px trayer (1 start in 8)."""
            self._offered = size
            self._resize(size)
            if size > 0:
                GLib.timeout_add(FIT_CHECK_MS, self._fit, size, True)
            return True  # drawn at that size: GTK need not scale it

        def _fit(self, size: int, look_again: bool) -> bool:
            if getattr(self, "_offered", size) != size:  # the tray offered another size since: that one counts
                return False
            ok, _screen, area, _orientation = self._status_icon.get_geometry()
            room = min(area.width, area.height) if ok else 0
            if 0 < room < size:
                if look_again:
                    GLib.timeout_add(FIT_CHECK_MS, self._fit, size, False)
                else:
                    self._resize(room)
            return False  # once

        def _resize(self, size: int) -> None:
            if size > 0 and self.on_size is not None:
                try:
                    self.on_size(size)
                except Exception:
                    log.exception("could not redraw the icon at %d px", size)

        def _update_title(self) -> None:
            super()._update_title()
            GLib.idle_add(self._set_tooltip)

        def _show(self) -> None:
            super()._show()
            GLib.idle_add(self._set_tooltip)  # a title set before the icon was visible was not applied

        def _set_tooltip(self) -> bool:
            self._status_icon.set_title(self.title or "trayburn")
            self._status_icon.set_tooltip_text(self.title or None)
            return False  # once

    return GtkTrayIcon


def _appindicator(base: type) -> type:
    from gi.repository import GLib, GObject

    class IndicatorIcon(_SafeNotifier, base):
        on_size: SizeCallback | None = None
        has_label = True  # the item's XAyatanaLabel: GNOME's AppIndicator extension draws it beside the icon

        def set_label(self, text: str, guide: str) -> None:
            """The text beside the icon, in the panel's own font (`guide`: the widest text expected, so the
            panel keeps the item's width as the figure changes). Thread-safe, like pystray's setters."""
            GLib.idle_add(self._set_label, text, guide)

        def _set_label(self, text: str, guide: str) -> bool:
            self._appindicator.set_label(text, guide)
            return False  # once

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            kind = type(self._appindicator).__gtype__
            self._activates = bool(GObject.signal_lookup("activate", kind))
            if self._activates:  # libayatana-appindicator >= 0.6 / newer libappindicator
                self._appindicator.connect("activate", lambda *_: self())

        @property
        def activates(self) -> bool:
            return self._activates

        def _update_menu(self) -> None:
            # The middle click's target is let go before pystray's own idle call replaces the menu (and before the
            # indicator goes, `_finalize`): libayatana-appindicator follows the old item out of its menu and
            # asserted (a Gtk-CRITICAL "gtk_widget_get_parent" line at every start).
            GLib.idle_add(self._release_target)
            super()._update_menu()
            GLib.idle_add(self._target_default)  # after pystray's own idle call built the menu

        def _release_target(self) -> bool:
            self._appindicator.set_secondary_activate_target(None)
            return False  # once

        def _finalize(self) -> None:
            self._release_target()
            super()._finalize()

        def _create_menu_item(self, descriptor: Any) -> Any:
            item = super()._create_menu_item(descriptor)
            text = str(getattr(descriptor, "text", ""))  # (a separator's "- - - -" has no "_")
            if gnome_menu_labels() and not getattr(descriptor, "default", False):
                shown = literal_label(text)
                if shown != text:
                    item.set_use_underline(True)  # sent as it is (libdbusmenu-gtk doubles each "_" otherwise)
                    item.set_label(shown)
            return item

        def _target_default(self) -> bool:
            """A middle click (SNI SecondaryActivate) runs the default item: the summary."""
            items = [i for i in (self.menu.items if self.menu else ()) if i.visible]
            index = next((n for n, item in enumerate(items) if item.default), None)
            widgets = self._menu_handle.get_children() if self._menu_handle is not None else []
            if index is not None and index < len(widgets):
                self._appindicator.set_secondary_activate_target(widgets[index])
            return False  # once

    return IndicatorIcon


def gnome_menu_labels(env: Mapping[str, str] | None = None) -> bool:
    """Whether the menu is read by GNOME's AppIndicator extension, which takes only the first "_" of a dbusmenu
    label for a mnemonic (it drops the first "_" followed by another character: `label.replace(/_([^_])/, '$1')`
    in its dbusMenu.js) and shows the rest as written. libdbusmenu-gtk sends a plain GTK label with each "_"
    doubled, which libdbusmenu hosts (xfce4-panel, KDE) undo and GNOME showed as "b_tools__patch"."""
    desktop = (os.environ if env is None else env).get("XDG_CURRENT_DESKTOP", "").upper()
    return "GNOME" in desktop or "UBUNTU" in desktop


def literal_label(text: str) -> str:
    """The dbusmenu label GNOME's extension shows as `text`: one "_" in front, which is the "_" it drops (before
    the text's first character, or the last of its leading underscores); `text` itself where it has no "_" to
    lose."""
    return "_" + text if "_" in text and text.strip("_") else text


IMAGE_LEFT = 2  # AppKit's NSImageLeft (NSCellImagePosition): the image, then the title to its right


def _darwin(base: type) -> type:
    """macOS: today's cost as the status item's title (`NSStatusItem.button.title`) beside the mark, as a
    StatusNotifierItem's label is on GNOME. Built from pystray's darwin source (its `_status_item`) and AppKit's
    documented API; not verified on a Mac here. Where the button has no title to set, the item is left as
    pystray makes it (the icon carries the figure)."""

    class StatusItemIcon(base):
        on_size: SizeCallback | None = None
        notifications = bool(getattr(base, "HAS_NOTIFICATION", False))
        activates = False  # pystray's darwin icon: the menu opens on a click, there is no default action
        has_label = False
        draws_label = False  # the menu bar always draws the title: the icon is then the bare mark

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            button = getattr(getattr(self, "_status_item", None), "button", lambda: None)()
            self.has_label = self.draws_label = hasattr(button, "setTitle_")
            self._label_failed = False

        def set_label(self, text: str, guide: str) -> None:
            """The title beside the image (`guide` is for hosts that keep a width; the menu bar sizes the item
            to its title). On AppKit's main thread: TrayApp calls it through `_ui`."""
            try:
                button = self._status_item.button()
                button.setImagePosition_(IMAGE_LEFT)
                button.setTitle_(text)
            except Exception:  # never the tray's end: the tooltip and the menu still say the figure
                if not self._label_failed:
                    log.exception("could not set the status item's title")
                self._label_failed = True

    return StatusItemIcon


def _headless(base: type) -> type:
    """pystray's dummy Icon raises on every update; this one keeps what would have been shown,
    so `trayburn` runs headless (and menu tests run) without special cases."""

    class HeadlessIcon(base):
        on_size: SizeCallback | None = None
        notifications = True
        activates = True
        has_label = False
        label: tuple[str, str] | None = None  # what set_label() was last given (a host that draws labels)

        def set_label(self, text: str, guide: str) -> None:
            self.label = (text, guide)

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.updates: list[str] = []
            self.notified: list[tuple[str, str | None]] = []
            self._stopped: threading.Event | None = None
            super().__init__(*args, **kwargs)

        def _update_icon(self) -> None:
            self.updates.append("icon")

        def _update_title(self) -> None:
            self.updates.append("title")

        def _update_menu(self) -> None:
            self.updates.append("menu")

        def _show(self) -> None:
            pass

        def _hide(self) -> None:
            pass

        def _notify(self, message: str, title: str | None = None) -> None:
            self.notified.append((message, title))

        def _remove_notification(self) -> None:
            pass

        def _run(self) -> None:
            self._stopped = threading.Event()
            self._mark_ready()
            self._stopped.wait()

        def _stop(self) -> None:
            if self._stopped:
                self._stopped.set()

    return HeadlessIcon
