"""The tray app: wires the engine to a pystray icon. It owns no figures of its own.

One poller thread refreshes the ledger and builds a TrayView; the icon, tooltip and menu are
changed only when the view changed, and only through `_ui()`, which respects each backend's
threading rules. Dialogs and the summary window run as child processes.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
from dataclasses import replace
from datetime import date, datetime

from .. import appearance, launch, paths, report
from .. import settings as st
from ..engine import Engine
from ..opener import open_path
from . import backend as backends
from . import model
from .icon import render_icon

log = logging.getLogger(__name__)
ICON_SIZE = 64


def _panel(setting: str) -> str:
    """The icon's panel: light, dark, or "any" where the desktop does not say."""
    return appearance.panel_shade(setting) or "any"


class TrayApp:
    def __init__(self, engine: Engine, pystray, caps: backends.Capabilities, autostart=None, spawn=None):
        self.engine, self.pystray, self.caps = engine, pystray, caps
        self.autostart = autostart  # an Autostart, or None where unavailable
        self.spawn = spawn if spawn is not None else (lambda argv: subprocess.Popen(argv, close_fds=True))
        self.view: model.TrayView | None = None
        self.theme = _panel(engine.settings.theme)
        self._drawn: tuple | None = None
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()  # one tick at a time (poller, "Refresh now", settings actions)
        self._dirty = False  # something outside the ledger changed (e.g. start at login): rebuild
        self._built_at = ""
        self.icon = backends.icon_class(pystray)(
            "trayburn", render_icon("–", model.IconState.NO_DATA, self.theme, ICON_SIZE), "trayburn", menu=None
        )

    # ---- the loop --------------------------------------------------------------------------------

    def tick(self) -> bool:
        """Refresh and redraw what changed. True if the view changed. Never raises."""
        with self._lock:
            try:
                view = self._build()
            except Exception as exc:  # a refresh failure never takes the app down
                log.exception("refresh failed")
                view = self._error_view(f"Refresh failed: {exc}")
            if view == self.view:
                return False
            try:
                self._ui(lambda: self._apply(view))
            except Exception:  # a drawing or notification failure must not end the poller
                log.exception("could not update the tray")
                return False
            self.view = view
            return True

    def _build(self) -> model.TrayView:
        engine = self.engine
        settings_changed = engine.reload_if_changed()
        if settings_changed:
            self.theme = _panel(engine.settings.theme)
        stats = engine.refresh()
        # Nothing read, nothing set, same minute: the figures cannot have changed (the hot path).
        stamp = datetime.now().strftime("%Y-%m-%d %H:%M")
        if (
            self.view is not None
            and not self._dirty
            and not settings_changed
            and not stats.changed
            and not stats.errors
            and stamp == self._built_at
        ):
            return self.view
        self._dirty, self._built_at = False, stamp
        day = engine.day()
        today = report.now_date()
        sessions = engine.sessions(today, today)
        health = engine.health()
        first_run = health.sessions == 0 and health.removed_sessions == 0 and not day.calls
        return model.build_view(engine, day, sessions, model.problem_line(health), first_run)

    def _error_view(self, message: str) -> model.TrayView:
        """The last good view with the failure on top; a bare one if there was none yet."""
        if self.view is not None:
            return replace(self.view, problem=message, state=model.IconState.PROBLEM)
        return model.TrayView(
            label="!",
            state=model.IconState.PROBLEM,
            tooltip="trayburn · needs attention",
            today="Today: unknown",
            top_model=None,
            week="",
            month="",
            rate="",
            sessions=(),
            problem=message,
            first_run=False,
            roots=(),
            refresh_seconds=30,
            budget=None,
            theme="auto",
            budget_level=0,
        )

    def poll_forever(self) -> None:
        while not self._stop.is_set():
            self.tick()
            self._sleep()

    def _poll_after_first(self) -> None:
        self._sleep()
        self.poll_forever()

    def _sleep(self) -> None:
        self._wake.wait(self.engine.settings.refresh_seconds)
        self._wake.clear()

    # ---- drawing (only through _ui) ---------------------------------------------------------------

    def _ui(self, fn) -> None:
        if self.caps.needs_main_thread and threading.current_thread() is not threading.main_thread():
            from PyObjCTools import AppHelper  # macOS: AppKit must be touched on the main thread

            AppHelper.callAfter(fn)
        else:
            fn()

    def _apply(self, view: model.TrayView) -> None:
        drawn = (view.label, view.state, self.theme)
        if drawn != self._drawn:
            self.icon.icon = render_icon(view.label, view.state, self.theme, ICON_SIZE)
            self._drawn = drawn
        if self.icon.title != view.tooltip:
            self.icon.title = view.tooltip
        if self.caps.has_menu or self.caps.has_default_action:
            self.icon.menu = self._menu(view)
        self._notify_budget(view)

    def _menu(self, view: model.TrayView):
        enabled = self.autostart.status().enabled if self.autostart else None
        return self.pystray.Menu(*[self._item(e) for e in model.menu(view, self.caps.has_default_action, enabled)])

    def _item(self, e: model.Entry):
        p = self.pystray
        if e.separator:
            return p.Menu.SEPARATOR
        if e.submenu is not None:
            return p.MenuItem(e.text, p.Menu(*[self._item(s) for s in e.submenu]))
        checked = _constant(e.checked) if e.checked is not None else None
        return p.MenuItem(
            e.text,
            self._handler(e) if e.action else None,
            checked=checked,
            radio=e.radio,
            enabled=e.enabled,
            default=e.default,
        )

    def _handler(self, e: model.Entry):
        def run(icon, item):  # pystray checks the arity: exactly (icon, item)
            self.invoke(e.action, e.arg)

        return run

    # ---- budget notifications ---------------------------------------------------------------------

    def _notify_budget(self, view: model.TrayView) -> None:
        if not view.budget_level:
            return
        path = self.engine.state_dir / "notified.json"
        today = date.today().isoformat()
        try:
            seen = json.loads(path.read_text())
        except (OSError, ValueError):
            seen = {}
        done = seen.get(today, [])
        if view.budget_level in done:
            return
        message = (
            "Today's spend has passed your daily budget"
            if view.budget_level == 100
            else "Today's spend has reached 80% of your daily budget"
        )
        try:
            if self.caps.can_notify:
                self.icon.notify(f"{message}: {view.today.removeprefix('Today: ')}", "trayburn")
            path.write_text(json.dumps({today: done + [view.budget_level]}))
        except Exception:
            log.exception("budget notification failed")
        log.info("budget: %s", message)

    # ---- actions (menu handlers; each is safe to fail) ---------------------------------------------

    def invoke(self, action: str, arg=None) -> None:
        try:
            getattr(self, "do_" + action)(arg)
        except Exception:
            log.exception("menu action %s failed", action)

    def _child(self, *args: str) -> list[str]:
        e = self.engine
        return launch.command(*args, "--config", str(e.config_path), "--state-dir", str(e.state_dir))

    def do_summary(self, _=None) -> None:
        self.spawn(self._child("summary"))

    def do_open_session(self, sid: str) -> None:
        self.spawn(self._child("summary", sid))

    def do_demo(self, _=None) -> None:
        self.spawn(launch.command("demo", "--window"))

    def do_refresh(self, _=None) -> None:
        self._wake.set()

    def do_quit(self, _=None) -> None:
        self._stop.set()
        self._wake.set()
        self.icon.stop()

    def _set(self, key: str, value: str | None) -> None:
        """Write the settings file only; the poller's next tick reloads it (the engine is the
        poller's alone, so a menu click never waits for a refresh)."""
        st.update(self.engine.config_path, key, value)
        self._wake.set()

    def do_set_refresh(self, seconds: int) -> None:
        self._set("refresh_seconds", str(seconds))

    def do_set_theme(self, theme: str) -> None:
        self._set("theme", theme)

    def do_reset_roots(self, _=None) -> None:
        for key in ("cline_dir", "data_dir", "sessions_dir"):
            self._set(key, None)

    def do_choose_root(self, level: str) -> None:
        threading.Thread(target=self._ask, args=(level,), daemon=True).start()

    def do_set_budget(self, _=None) -> None:
        threading.Thread(target=self._ask_budget, daemon=True).start()

    def _ask(self, level: str) -> None:
        current = {lv.name: lv for lv in self.engine.levels}[level]
        start = current.path if current.path.is_dir() else paths.home(os.environ)
        chosen = _dialog("folder", f"trayburn: choose the {current.label.lower()}", str(start))
        if chosen:
            self._set_safely(level, chosen)

    def _ask_budget(self) -> None:
        value = _dialog("budget", str(self.engine.settings.daily_budget or 0))
        if value:
            self._set_safely("daily_budget", value)

    def _set_safely(self, key: str, value: str) -> None:
        """From a dialog's thread: a failure is logged, never raised."""
        try:
            self._set(key, value)
        except Exception:
            log.exception("could not set %s", key)

    def do_toggle_autostart(self, _=None) -> None:
        if self.autostart.status().enabled:
            self.autostart.disable()
        else:
            self.autostart.enable()
        self._dirty = True  # redraw the menu's check mark
        self._wake.set()

    def do_open_settings(self, _=None) -> None:
        path = self.engine.config_path
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(SETTINGS_TEMPLATE)
        open_path(path)

    # ---- running ------------------------------------------------------------------------------------

    def run(self) -> None:
        log.info(backends.describe(self.caps.backend))
        self.tick()  # the icon shows real figures and a working menu from its first appearance
        poller = threading.Thread(target=self._poll_after_first, name="trayburn-poller", daemon=True)

        def setup(icon):
            icon.visible = True
            poller.start()

        try:
            self.icon.run(setup=setup)
        except Exception as exc:
            # gtk/appindicator: with a session bus but no notification daemon, run() raises
            # "Notifications service unknown" after the icon has already stopped.
            if not self._stop.is_set():
                raise
            log.info("tray stopped (%s)", exc)
        self._stop.set()
        self._wake.set()


SETTINGS_TEMPLATE = """\
# trayburn settings. Remove a key to use its default. See README for every key.
# cline_dir = "~/.cline"          # overrides CLINE_DIR
# data_dir = "~/.cline/data"      # overrides CLINE_DATA_DIR
# sessions_dir = "~/.cline/data/sessions"  # overrides CLINE_SESSION_DATA_DIR
# refresh_seconds = 30
# daily_budget = 20.0
# theme = "auto"                  # auto | light | dark
"""


def _constant(value: bool):
    def checked(item):
        return value

    return checked


def _dialog(*args: str) -> str:
    argv = launch.command("_dialog", *args)
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=3600, **launch.child_options())
    except (OSError, subprocess.SubprocessError):
        log.exception("dialog failed")
        return ""
    return done.stdout.strip()


def main(args) -> int:
    from .. import logs
    from ..ledger import LedgerError
    from ..singleton import EXIT_ALREADY_RUNNING, AlreadyRunning, InstanceLock

    log_path = logs.setup()
    try:
        engine = Engine(args.config, args.state_dir)
    except LedgerError as exc:
        log.error("%s", exc)
        _say(f"trayburn: {exc}")
        return 1
    try:
        lock = InstanceLock(engine.state_dir / "tray.lock").acquire()
    except AlreadyRunning as exc:
        _say(f"trayburn: {exc}")
        return EXIT_ALREADY_RUNNING
    try:
        name = backends.choose_backend()
        _set_program_name(name)
        pystray = backends.load_pystray(name)
    except backends.BackendError as exc:
        log.error("%s", exc)
        _say(f"trayburn: {exc}")
        return 1
    caps = backends.capabilities(backends.loaded_backend(pystray))
    log.info("trayburn tray starting; log %s; %s", log_path, backends.describe(caps.backend))
    app = TrayApp(engine, pystray, caps, autostart=_autostart())
    try:
        app.run()
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


def _autostart():
    try:
        from ..autostart import autostart_for

        return autostart_for()
    except Exception:
        log.exception("start at login is unavailable")
        return None


def _say(text: str) -> None:
    if sys.stderr is not None:  # None under pythonw / gui-scripts
        print(text, file=sys.stderr)
