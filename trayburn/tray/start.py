"""The tray's start (the `trayburn` command): can the tray be seen here, the one-tray lock, the backend, then
`TrayApp.run`. Never runs the tray where it could not be seen: no display, a dead one or no session bus is one
line and EXIT_CANNOT_SHOW, before anything could hang; with no tray host it runs and says what to install.
"""

from __future__ import annotations

import logging
import os
from dataclasses import replace
from typing import Any

from .. import paths, system
from ..autostart import autostart_for
from ..engine import Engine
from ..errors import Exit, TrayburnError
from ..system import EXIT_ALREADY_RUNNING, AlreadyRunning, InstanceLock
from . import app, host, icons, probe, watcher
from .host import StartCheck

log = logging.getLogger(__name__)

EXIT_CANNOT_SHOW = int(Exit.CANNOT_SHOW)  # no graphical session or no session bus: the tray could not be seen


NO_MENU_HINT = (
    "this tray icon has no menu and ignores clicks: its GTK backend (PyGObject) is not installed here. "
    "The fix: pip install 'trayburn[gtk]' (pipx: pipx install --force 'trayburn[gtk]'), after "
    "sudo apt-get install libgirepository1.0-dev libcairo2-dev pkg-config gir1.2-gtk-3.0 "
    "gir1.2-ayatanaappindicator3-0.1 (which PyGObject builds against); ./scripts/run does both"
)
DEMO_HINT = "`trayburn demo --json` shows the demo's figures in a terminal"


def main(args: Any) -> int:
    log_path = system.setup()
    forced = bool(os.environ.get("PYSTRAY_BACKEND"))
    check = None if os.environ.get("PYSTRAY_BACKEND") == "dummy" else host.can_start()
    if check is not None and check.fatal:
        message = check.message
        if getattr(args, "demo", False):  # the demo's figures without a display are `trayburn demo --json`
            message = message.replace(
                host.TERMINAL_HINT, "`trayburn demo --json` shows the demo's figures in a terminal"
            )
        log.error("cannot start the tray: %s", message)
        app.say(f"trayburn: {message}")
        return EXIT_CANNOT_SHOW
    promised = None
    if check is not None and not forced:
        check, promised = _await_watcher(check)
    if check is not None and not check.ok:
        log.warning("no tray host yet (told in %g s if still so): %s", app.SHOW_GRACE_S, check.message)
    try:
        engine = Engine(args.config, args.state_dir)
    except TrayburnError as exc:  # the ledger cannot be opened (newer, locked, …), the state folder refused
        log.error("%s", exc)
        app.say(f"trayburn: {exc}")
        return 1
    try:
        lock = InstanceLock(paths.tray_lock(engine.state_dir)).acquire()
    except AlreadyRunning as exc:
        app.say(f"trayburn: {exc}")
        return EXIT_ALREADY_RUNNING
    try:
        if check is None:
            name = host.choose_backend()
        else:
            name = host.choose_backend(sni=check.sni, xembed=check.xembed, promised=promised is not None)
        _set_program_name(name)
        pystray = host.load_pystray(name)
    except host.BackendError as exc:
        log.error("%s", exc)
        app.say(f"trayburn: {exc}")
        return 1
    caps = host.capabilities(host.loaded_backend(pystray))
    if not forced and not caps.has_menu:  # the bare X11 icon: no menu, no clicks (said once, with the fix)
        log.warning("%s", NO_MENU_HINT)
        app.say(f"trayburn: {NO_MENU_HINT}")
    if check is not None and not check.bus:  # an XEmbed icon without a session bus: no notifier to ask
        icons.NOTIFIER = False
        caps = replace(caps, can_notify=False)
        log.warning("%s", host.NO_BUS_NOTICE)
    log.info("trayburn tray starting; log %s; %s; %s", log_path, host.describe(caps.backend), check)
    tray = app.TrayApp(engine, pystray, caps, autostart=_autostart())
    tray.may_switch = not forced and check is not None and check.bus and host.available("appindicator")
    try:
        tray.run(check)
    finally:
        lock.release()
    return 0


def _await_watcher(check: StartCheck) -> tuple[StartCheck, str | None]:
    """On a desktop that will have a StatusNotifierWatcher but has none yet (its panel is loading, as at login),
    wait for it a short while (`watcher.WAIT_S`) before the backend is chosen. Returns the check as it is then,
    and why a watcher is expected (None: not here)."""
    bus = probe.session_bus() if check.bus else None
    if check.sni or bus is None:
        return check, None
    promised = watcher.promised(os.environ, bus)
    if promised is None:
        return check, None
    log.info("waiting up to %g s for the panel's StatusNotifierWatcher (%s has one)", watcher.WAIT_S, promised)
    if watcher.wait(bus):
        log.info("the StatusNotifierWatcher is there")
        return host.can_start(), promised
    log.info("no StatusNotifierWatcher after %g s: the item registers with it when it comes", watcher.WAIT_S)
    return check, promised


def _set_program_name(backend: str) -> None:
    """So the icon's window class is "trayburn" (set before pystray imports Gtk)."""
    if backend in ("gtk", "appindicator"):
        try:
            from gi.repository import GLib

            GLib.set_prgname("trayburn")
        except ImportError:
            pass


def _autostart() -> Any:
    try:
        return autostart_for()
    except Exception:
        log.exception("start at login is unavailable")
        return None
