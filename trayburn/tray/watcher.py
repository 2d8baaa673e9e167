"""The panel's StatusNotifierWatcher, which may come after the tray: at login *Start at login* runs trayburn while
the panel (or GNOME's AppIndicator extension) is still loading.

- `promised`: whether this desktop will have a watcher (a desktop whose panel hosts StatusNotifierItems, or a
  watcher the session bus can start on demand);
- `wait`: wait for it a short while before the backend is chosen (and start it where the bus can);
- `on_arrival`: hear it come later, in the GLib main loop the gtk and appindicator icons run, so a gtk icon
  chosen meanwhile gives way to a StatusNotifierItem without a restart.

Gio is imported inside the functions (PyGObject is optional); every bus call has a timeout.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

log = logging.getLogger(__name__)

SNI_WATCHER = "org.kde.StatusNotifierWatcher"
WAIT_S = 8.0  # how long the start waits for a promised watcher before it chooses a backend
POLL_S = 0.2
CALL_TIMEOUT_MS = 2000
# Desktops (XDG_CURRENT_DESKTOP, ":"-separated, compared in upper case) whose panel hosts StatusNotifierItems:
# GNOME through the AppIndicator extension (Ubuntu's, Debian's default tray path), KDE Plasma, xfce4-panel 4.16+,
# LXQt, Cinnamon, MATE's indicator applet, Budgie, Unity, Pantheon's wingpanel, Deepin.
SNI_DESKTOPS = frozenset(
    (
        "GNOME",
        "UBUNTU",
        "KDE",
        "XFCE",
        "LXQT",
        "X-CINNAMON",
        "CINNAMON",
        "MATE",
        "BUDGIE",
        "UNITY",
        "PANTHEON",
        "DEEPIN",
    )
)


def promised(env: Mapping[str, str], bus: str | None) -> str | None:
    """Why a watcher is to be expected here ("the XFCE desktop", "a watcher the session bus can start"), or None."""
    names = [n.strip().upper() for n in env.get("XDG_CURRENT_DESKTOP", "").split(":") if n.strip()]
    desktop = next((n for n in names if n in SNI_DESKTOPS), None)
    if desktop:
        return f"the {desktop} desktop"
    if bus and activatable(bus):
        return "a watcher the session bus can start"
    return None


def activatable(address: str) -> bool:
    """Whether the session bus can start a StatusNotifierWatcher on demand (a D-Bus service file names it)."""
    reply = _ask(address, "ListActivatableNames", None, "(as)")
    return bool(reply) and SNI_WATCHER in reply[0]


def wait(address: str, timeout: float = WAIT_S, *, clock: Callable[[], float] = time.monotonic) -> bool:
    """Whether a StatusNotifierWatcher is on the bus within `timeout` seconds (it is started where the bus can
    start it). Asks the bus every POLL_S; never raises."""
    bus = _connect(address)
    if bus is None:
        return False
    try:
        from gi.repository import GLib

        if SNI_WATCHER in (_call(bus, "ListActivatableNames", None, "(as)", _as_list) or []):
            _call(bus, "StartServiceByName", GLib.Variant("(su)", (SNI_WATCHER, 0)), "(u)", lambda r: r, timeout)
        deadline = clock() + timeout
        while True:
            if _call(bus, "NameHasOwner", GLib.Variant("(s)", (SNI_WATCHER,)), "(b)", lambda r: bool(r[0])):
                return True
            if clock() >= deadline:
                return False
            time.sleep(POLL_S)
    finally:
        bus.close_sync(None)


def on_arrival(callback: Callable[[], None]) -> Callable[[], None] | None:
    """Call `callback` (in the GLib main loop) when a StatusNotifierWatcher gets on the session bus, at once if one
    is there. Returns the way to stop listening, or None where Gio is unavailable."""
    try:
        from gi.repository import Gio
    except ImportError:
        return None

    def appeared(_connection: Any, _name: str, _owner: str) -> None:
        try:
            callback()
        except Exception:  # never out of a GLib callback
            log.exception("could not follow the StatusNotifierWatcher's arrival")

    watch = Gio.bus_watch_name(Gio.BusType.SESSION, SNI_WATCHER, Gio.BusNameWatcherFlags.NONE, appeared, None)
    return lambda: Gio.bus_unwatch_name(watch)


# ---- the bus ------------------------------------------------------------------------------------------------------


def _connect(address: str) -> Any:
    try:
        import gi

        gi.require_version("Gio", "2.0")
        from gi.repository import Gio

        flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
        return Gio.DBusConnection.new_for_address_sync(address, flags, None, None)
    except Exception:  # no PyGObject, or the bus refused us
        log.debug("cannot connect to the session bus at %s", address, exc_info=True)
        return None


def _as_list(reply: Any) -> list[str]:
    return list(reply[0])


def _call(bus: Any, method: str, args: Any, reply_type: str, unpack: Callable[[Any], Any], timeout: float = 0) -> Any:
    """A call to the bus itself (org.freedesktop.DBus); its unpacked reply, or None on an error."""
    from gi.repository import Gio, GLib

    ms = int(timeout * 1000) if timeout else CALL_TIMEOUT_MS
    try:
        reply = bus.call_sync(
            "org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus",
            method,
            args,
            GLib.VariantType(reply_type),
            Gio.DBusCallFlags.NONE,
            ms,
            None,
        )
        return unpack(reply.unpack())
    except Exception:  # GLib.Error: no such service, a timeout, the bus went away
        log.debug("the session bus did not answer %s", method, exc_info=True)
        return None


def _ask(address: str, method: str, args: Any, reply_type: str) -> Any:
    bus = _connect(address)
    if bus is None:
        return None
    try:
        return _call(bus, method, args, reply_type, lambda r: r)
    finally:
        bus.close_sync(None)
