"""`trayburn` (the tray): check it can be seen here, take the one-tray lock, pick a backend, run.

Where the tray cannot run (no display, a dead one, no session bus) it says so in one line and
exits with EXIT_CANNOT_SHOW, before anything could hang; with no tray host it runs and says
what to install.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

from .. import paths
from ..engine import Engine
from ..errors import Exit
from . import backend as backends
from . import host

log = logging.getLogger(__name__)
EXIT_CANNOT_SHOW = int(Exit.CANNOT_SHOW)  # no graphical session or no session bus: the tray could not be seen


def main(args: Any) -> int:
    from .. import platform as logs
    from ..ledger import LedgerError
    from ..platform import EXIT_ALREADY_RUNNING, AlreadyRunning, InstanceLock
    from .app import TrayApp

    log_path = logs.setup()
    check = None if os.environ.get("PYSTRAY_BACKEND") == "dummy" else host.can_start()
    if check is not None and check.fatal:
        log.error("cannot start the tray: %s", check.message)
        _say(f"trayburn: {check.message}")
        return EXIT_CANNOT_SHOW
    if check is not None and not check.ok:
        log.warning("%s", check.message)
        _say(f"trayburn: {check.message}")
    try:
        engine = Engine(args.config, args.state_dir)
    except LedgerError as exc:
        log.error("%s", exc)
        _say(f"trayburn: {exc}")
        return 1
    try:
        lock = InstanceLock(paths.tray_lock(engine.state_dir)).acquire()
    except AlreadyRunning as exc:
        _say(f"trayburn: {exc}")
        return EXIT_ALREADY_RUNNING
    try:
        name = backends.choose_backend(sni=check.sni if check is not None else None)
        _set_program_name(name)
        pystray = backends.load_pystray(name)
    except backends.BackendError as exc:
        log.error("%s", exc)
        _say(f"trayburn: {exc}")
        return 1
    caps = backends.capabilities(backends.loaded_backend(pystray))
    if check is not None and not check.bus:  # an XEmbed icon without a session bus: no notifier to ask
        from dataclasses import replace

        from . import icons

        icons.NOTIFIER = False
        caps = replace(caps, can_notify=False)
        log.warning("%s", host.NO_BUS_NOTICE)
    log.info("trayburn tray starting; log %s; %s; %s", log_path, backends.describe(caps.backend), check)
    app = TrayApp(engine, pystray, caps, autostart=_autostart())
    try:
        app.run(check)
    finally:
        lock.release()
    return 0


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
        from ..platform import autostart_for

        return autostart_for()
    except Exception:
        log.exception("start at login is unavailable")
        return None


def _say(text: str) -> None:
    if sys.stderr is not None:  # None under pythonw / gui-scripts
        print(text, file=sys.stderr)
