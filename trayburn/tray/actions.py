"""The tray's menu: pystray's items from the view's entries, and what each does (`MenuActions`, mixed into
`TrayApp`). Never raises into pystray (`invoke` logs a failed action) and never waits for a refresh: a setting is
written and the poller's next tick reloads it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

from .. import settings, system, watch
from ..engine import Engine
from ..system import open_path
from ..window import tk_missing
from . import host
from .alerts import Alerts
from .dialogs import Children
from .view import Entry, TrayView, menu

log = logging.getLogger(__name__)


class MenuActions:
    """The menu and its handlers; `TrayApp` gives them the engine, the icon and the poller's events."""

    engine: Engine
    pystray: ModuleType
    caps: host.Capabilities
    autostart: Any
    children: Children
    alerts: Alerts
    icon: Any
    waker: watch.Waker | None
    _dirty: bool
    _wake: threading.Event
    _stop: threading.Event

    def tell(self, message: str) -> None:
        raise NotImplementedError

    def _menu(self, view: TrayView) -> Any:
        enabled = self.autostart.status().enabled if self.autostart else None
        return self.pystray.Menu(*[self._item(e) for e in menu(view, self.caps.has_default_action, enabled)])

    def _item(self, e: Entry) -> Any:
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

    def _handler(self, e: Entry) -> Callable[[Any, Any], None]:
        def run(icon: Any, item: Any) -> None:  # pystray checks the arity: exactly (icon, item)
            self.invoke(e.action or "", e.arg)

        return run

    # ---- actions (menu handlers; each is safe to fail) ---------------------------------------------

    def invoke(self, action: str, arg: Any = None) -> None:
        try:
            getattr(self, "do_" + action)(arg)
        except Exception:
            log.exception("menu action %s failed", action)

    def _child(self, *args: str) -> list[str]:
        e = self.engine
        config = ["--config", str(e.config_path)] if e.config_path.exists() else []  # (none yet: the default)
        return system.command(*args, *config, "--state-dir", str(e.state_dir))

    def _window(self, argv: list[str], request: str) -> None:
        """The summary window (a child), or, with no Tk here, one line saying which package it needs."""
        missing = tk_missing()
        if missing:
            self.tell(missing[0].upper() + missing[1:])
            return
        self.children.open_window("summary", argv, request)

    def do_summary(self, _: Any = None) -> None:
        self._window(self._child("summary"), "day")

    def do_summary_period(self, kind: str) -> None:
        """The week's or month's view (`trayburn summary --period week|month`), today's."""
        self._window(self._child("summary", "--period", kind), f"period {kind}")

    def do_open_session(self, sid: str) -> None:
        self._window(self._child("summary", sid), f"session {sid}")

    def do_demo(self, _: Any = None) -> None:
        self.children.open_window("demo", system.command("demo", "--window"))

    def do_silence_runaway(self, sid: str) -> None:
        """No more alerts for that session, and its line leaves the top of the menu."""
        self.alerts.silence(sid)
        self._dirty = True
        self._wake.set()

    def do_refresh(self, _: Any = None) -> None:
        self._wake.set()

    def do_quit(self, _: Any = None) -> None:
        self._stop.set()
        self._wake.set()
        if self.waker is not None:
            self.waker.close()
        self.children.close_all()  # the windows it opened go with it
        self.icon.stop()

    def _set(self, key: str, value: str | None) -> None:
        """Write the settings file only; the poller's next tick reloads it (the engine is the
        poller's alone, so a menu click never waits for a refresh)."""
        settings.update(self.engine.config_path, key, value)
        self._wake.set()

    def do_set_refresh(self, seconds: int) -> None:
        self._set("refresh_seconds", str(seconds))

    def do_set_theme(self, theme: str) -> None:
        self._set("theme", theme)

    def do_reset_roots(self, _: Any = None) -> None:
        for key in ("cline_dir", "data_dir", "sessions_dir"):
            self._set(key, None)

    def do_toggle_autostart(self, _: Any = None) -> None:
        if self.autostart.status().enabled:
            self.autostart.disable()
        else:
            self.autostart.enable()
        self._dirty = True  # redraw the menu's check mark
        self._wake.set()

    def do_open_settings(self, _: Any = None) -> None:
        path = self.engine.config_path
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(SETTINGS_TEMPLATE)
        open_path(path)


SETTINGS_TEMPLATE = """\
# trayburn settings. Remove a key to use its default. See README for every key.
# cline_dir = "~/.cline"          # overrides CLINE_DIR
# data_dir = "~/.cline/data"      # overrides CLINE_DATA_DIR
# sessions_dir = "~/.cline/data/sessions"  # overrides CLINE_SESSION_DATA_DIR
# refresh_seconds = 30
# daily_budget = 20.0
# theme = "auto"                  # the panel: auto | light | dark
# sync_dir = "~/Sync"             # share the figures across machines (a folder you already sync)
# [prices."acme-1"]               # a model with no known price: USD per million tokens (at the end)
# input = 1.0
# output = 4.0                    # also cache_read, cache_write
"""


def _constant(value: bool) -> Callable[[Any], bool]:
    def checked(item: Any) -> bool:
        return value

    return checked
