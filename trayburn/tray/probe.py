"""What the display and the session bus answer, each asked with a timeout: does an X server answer at DISPLAY,
does an XEmbed tray own the system tray selection, where is the session bus and does something listen there, is
a StatusNotifierWatcher on it. Never starts anything and never hangs; `host.can_start` puts the answers together.

Standard library only at import time: python-xlib and Gio are imported inside the functions that use them.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import sys
from collections.abc import Mapping
from urllib.parse import unquote

from .watcher import SNI_WATCHER

log = logging.getLogger(__name__)

TIMEOUT_S = 2.0


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
