"""Can the tray be seen here? A display, a session bus, and something that hosts tray icons.

`can_start()` answers without starting anything and never hangs (every connection has a
timeout); `trayburn doctor` and the tray's start both call it. Its kinds:

- ``ok``: a tray host is there (``xembed``: an XEmbed tray owns _NET_SYSTEM_TRAY_S0;
  ``sni``: a StatusNotifierWatcher is on the session bus);
- ``no_display``, ``display_unreachable``, ``no_session_bus``: the tray cannot run; one line
  says why, and the tray exits non-zero (without a session bus it runs where an XEmbed tray is: ``ok``
  with ``bus`` False, notifications off);
- ``no_tray_host``: it can run, but nothing would show its icon; the person is told what to
  install, and the tray keeps running in case a panel comes up later.

Only the standard library at import time; python-xlib and Gio are imported inside the checks.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import unquote

log = logging.getLogger(__name__)

SNI_WATCHER = "org.kde.StatusNotifierWatcher"
TIMEOUT_S = 2.0
FATAL = ("no_display", "display_unreachable", "no_session_bus")
TERMINAL_HINT = "`trayburn today` works in a terminal"
NO_BUS_NOTICE = "no D-Bus session bus, so desktop notifications are off"
NO_HOST_HINT = (
    "nothing on this desktop shows tray icons (no XEmbed tray, no StatusNotifierWatcher): on GNOME install "
    "the AppIndicator extension (gnome-shell-extension-appindicator), elsewhere add a system tray or "
    "status notifier area to the panel; meanwhile "
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
    bus = env.get("DBUS_SESSION_BUS_ADDRESS") or _default_bus(env)
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
