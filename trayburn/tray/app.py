"""The tray app: a pystray icon that keeps showing the engine's figures (`TrayApp`: its poll loop, drawing, notices,
and its run). Never speaks SQL and never reads the apps' files: the engine does. Its start is `start.main`; its
menu and what each entry does, `actions`.

`TrayApp` owns no figures of its own. One poller thread refreshes the ledger, takes the engine's `Glance` (its
figures) and builds a TrayView of it; the icon, tooltip and menu are changed only when the view changed, and only
through `_ui()`, which respects each backend's threading rules. When idle, a tick reads nothing and rebuilds
nothing: the view is rebuilt when a refresh changed something, a setting, the health or the ledger's fault
changed, the day turned, or the clock reached the moment the glance says it goes stale (`Glance.stale_at_ms`: a
call leaving the last hour, a running session falling silent, midnight). A rebuild reads only what changed: the
ledger says which sessions a refresh changed and how far back (`Engine.changes`), so a call written today reads
that session again and nothing before today, and a rebuild only the clock asked for reads only the last hour. The
freshness line ("Updated 4 min ago") is worked out at each tick without a rebuild; it changes by the minute only
while the figures are stale. Dialogs and the summary window run as child processes (`dialogs`).
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import date
from types import ModuleType
from typing import Any

from .. import files, paths, shade, watch
from ..engine import Engine
from ..errors import TrayburnError
from ..figures import periods
from ..figures.day import SessionSummary
from ..figures.glance import Glance
from ..health import Health
from . import host, icons, watcher
from .actions import MenuActions
from .alerts import Alerts
from .dialogs import Children, DialogActions, Popen
from .draw import render_icon, render_mark
from .host import StartCheck
from .view import (
    IconState,
    TrayView,
    budget_message,
    build_view,
    error_view,
    freshness,
    tooltip,
)

log = logging.getLogger(__name__)

PAUSED = "Paused: the ledger is busy (another trayburn process)"  # the menu's line while another holds the ledger
HISTORY_SLICE_S = 1.0  # a poll reads today's files, then this long of the rest of the history (a first run)
HISTORY_PAUSE_S = 0.5  # between those slices, while history is left: the menu stays responsive


def panel_of(setting: str) -> str:
    """The icon's panel: light, dark, or "any" where the desktop does not say."""
    return shade.panel_shade(setting) or "any"


class TrayApp(MenuActions, DialogActions):
    def __init__(
        self,
        engine: Engine,
        pystray: ModuleType,
        caps: host.Capabilities,
        autostart: Any = None,
        spawn: Popen | None = None,
        clock: Callable[[], float] = time.monotonic,
        history_slice_s: float = HISTORY_SLICE_S,
        wall: Callable[[], float] = time.time,
    ):
        """`history_slice_s`: how long a poll reads history after today's files (a first run's ingest). `clock`
        (monotonic) times the figures' freshness; `wall` (epoch seconds) is compared with the moment the clock
        alone changes what the view shows (`Glance.stale_at_ms`)."""
        self.engine, self.pystray, self.caps = engine, pystray, caps
        self.history_slice_s = history_slice_s
        self.autostart = autostart  # an Autostart, or None where unavailable
        self.children = Children(spawn, on_failure=self.tell)
        self.clock, self.wall = clock, wall
        self.view: TrayView | None = None
        self.theme = panel_of(engine.settings.theme)
        self.size = icons.start_size(caps.backend)
        self._drawn: tuple[object, ...] | None = None
        self._labelled: str | None = None
        self._logged_budget: set[tuple[str, int]] = set()  # budget notices logged (day, level), shown or not
        self.alerts = Alerts(paths.alerts_file(engine.state_dir))  # runaways and project budgets told, silenced
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()  # one tick at a time (poller, "Refresh now", settings actions)
        self._dirty = False  # something outside the ledger changed (e.g. start at login): rebuild
        self.glance: Glance | None = None  # the figures the view shows; None: build them again at the next tick
        self.builds = 0  # views built (each a round of ledger reads): an idle tick builds none
        self._last_ok: float | None = None
        self._failing = False
        self._fault: tuple[str | None, ...] = (None, None, None)  # the faults as of the last tick (`_faults`)
        self._errors: dict[str, str] = {}  # the files the last tick could not read
        self._health: Health | None = None  # as last taken; kept while only the clock moves and no file is settling
        self._places: tuple[tuple[bool, bool], ...] = ()  # whether each level's folder was there when it was taken
        self.waker: watch.Waker | None = None  # Linux: wakes the poller when a session is written (`run`)
        self._followed: tuple[tuple[str, ...], tuple[str, ...]] | None = None  # (roots, folders) it follows
        self.may_switch = False  # a gtk icon gives way to a StatusNotifierItem when a watcher comes (`main`)
        self._next_backend: str | None = None  # the backend the icon is becoming (`_watcher_came`)
        self._make_icon(icons.icon_class(pystray))

    def _make_icon(self, cls: type) -> None:
        first = render_icon("–", IconState.NO_DATA, self.theme, self.size)
        self.icon = cls("trayburn", first, "trayburn", menu=None)
        self.icon.on_size = self.resize
        self.labels = getattr(self.icon, "has_label", False)  # the item carries today's cost as text
        draws = getattr(self.icon, "draws_label", False) or host.host_draws_labels()
        self.mark_only = self.labels and draws  # that host draws it: the icon is the mark
        if not getattr(self.icon, "activates", self.caps.has_default_action):
            self.caps = replace(self.caps, has_default_action=False)

    # ---- the loop --------------------------------------------------------------------------------

    def tick(self) -> bool:
        """Refresh and redraw what changed. True if the view changed. Never raises."""
        with self._lock:
            try:
                view = self._build()
                if self.engine.fault is None:  # a ledger it cannot write: the figures are what it held
                    self._last_ok, self._failing = self.clock(), False
                else:
                    self._failing = True
            except TrayburnError as exc:
                if getattr(exc, "kind", "") != "ledger_busy":
                    raise
                log.warning("%s", exc)  # the detail (its path, SQLite's words) in the log; a few words in the menu
                self._failing = True
                view = self._paused_view()
            except Exception as exc:  # a refresh failure never takes the app down
                log.exception("refresh failed")
                self._failing = True
                self.glance = None  # the next good tick builds the view again (never keeps this one)
                view = self._error_view(f"Refresh failed: {exc}")
            view = self._fresh(view)
            if view == self.view:
                return False
            try:
                self._ui(lambda: self._apply(view))
            except Exception:  # a drawing or notification failure must not end the poller
                log.exception("could not update the tray")
                return False
            self.view = view
            return True

    def _build(self) -> TrayView:
        engine = self.engine
        dirty, self._dirty = self._dirty, False  # taken at once: a menu click meanwhile marks the next tick
        settings_changed = engine.reload_if_changed()
        if settings_changed:
            self.theme = panel_of(engine.settings.theme)
        # today's figures first and exact, then some history (the settings were just reloaded, above)
        stats = engine.refresh(budget_s=self.history_slice_s, reload=False)
        news = engine.changes()  # what the ledger's rows did since the last tick (None: unknown, read it all)
        fault = self._faults()  # a ledger, integrity or sharing fault that came or went is news
        errors = dict(stats.errors)  # a file that stays unreadable is no news at every tick
        data = news is None or not news.none
        changed = data or stats.changed or errors != self._errors or fault != self._fault
        self._fault, self._errors = fault, errors
        kept = None if dirty or settings_changed else self.glance
        if not changed and kept is not None and self.view is not None and not self._stale(kept):
            return self.view  # nothing read, nothing set, nothing the clock changes: the hot path
        health = self._health if not changed and kept is not None else None
        places = tuple((lv.path.exists(), lv.exists) for lv in engine.levels)  # (a folder made or removed: news)
        if health is None or health.settling or places != self._places:  # (a file settling: the clock changes it)
            self._health, self._places = health, places = engine.health(), places
        # what no call changed is kept; only the sessions changed are read again (`Engine.glance`)
        self.glance = figures = engine.glance(health, since=kept, changes=news)
        self.builds += 1
        if kept is None or data:  # (the clock alone moves no session: the folders followed stay as they are)
            self._follow(figures.day.sessions)
        return build_view(self.alerts.shown(figures), engine.settings, health)

    def _faults(self) -> tuple[str | None, ...]:
        """What is wrong beside the files: the ledger cannot be written, it failed its integrity check, sharing
        failed (each shown at the top of the menu, and none of them a change of the ledger's data)."""
        e = self.engine
        share = e.last_share.problem if e.last_share else None
        return (str(e.fault) if e.fault else None, e.integrity_problem, share)

    def _stale(self, figures: Glance) -> bool:
        """Whether the clock alone has changed what these figures show (the day turned, or `stale_at_ms`)."""
        return periods.now_date() != figures.day.day or self.wall() * 1000 >= figures.stale_at_ms

    def _follow(self, todays: Sequence[SessionSummary]) -> None:
        """Point the waker at the folders new sessions appear in (each source's `watch_folders`: the Cline CLI's
        sessions folder, the editor apps' `tasks/` folders, the machines folder) and at the folders of today's
        sessions and tasks, the latest first."""
        if self.waker is None:
            return
        roots = self.engine.watch_folders()
        latest = sorted(todays, key=lambda s: s.last_activity_ms or 0, reverse=True)
        folders = [s.folder for s in latest if s.folder]  # (another machine's session has none: its file is synced)
        followed = (tuple(roots), tuple(folders))
        if followed == self._followed:  # a rebuild the clock asked for: nothing new to watch
            return
        self._followed = followed
        self.waker.follow(roots, folders)

    def _listen(self, waker: watch.Waker) -> None:
        """The waker's thread: a session written wakes the poller (after the waker's short debounce)."""
        while not self._stop.is_set():
            if waker.wait():
                self._wake.set()

    def _fresh(self, view: TrayView) -> TrayView:
        age = None if self._last_ok is None else self.clock() - self._last_ok
        updated, stale = freshness(age, self.engine.settings.refresh_seconds, self._failing)
        view = replace(view, updated=updated, stale=stale)
        return replace(view, tooltip=tooltip(view))

    def _paused_view(self) -> TrayView:
        """Another process holds the ledger (a long refresh of a CLI command): the last figure stays, marked
        paused (not a problem: the next tick retries)."""
        if self.view is not None:
            return replace(self.view, problem=PAUSED)
        return error_view(PAUSED)

    def _error_view(self, message: str) -> TrayView:
        """The last good view with the failure on top; a bare one if there was none yet."""
        if self.view is not None:
            return replace(self.view, problem=message, state=IconState.PROBLEM)
        return error_view(message)

    def poll_forever(self) -> None:
        while not self._stop.is_set():
            self.tick()
            self._sleep()

    def _poll_after_first(self) -> None:
        self._sleep()
        self.poll_forever()

    def _sleep(self) -> None:
        reading = self.engine.progress is not None  # history still being read: the next slice soon
        self._wake.wait(HISTORY_PAUSE_S if reading else self.engine.settings.refresh_seconds)
        self._wake.clear()

    # ---- drawing (only through _ui) ---------------------------------------------------------------

    def _ui(self, fn: Callable[[], None]) -> None:
        if self.caps.needs_main_thread and threading.current_thread() is not threading.main_thread():
            from PyObjCTools import AppHelper  # macOS: AppKit must be touched on the main thread

            AppHelper.callAfter(fn)
        else:
            fn()

    def _apply(self, view: TrayView) -> None:
        self._draw(view)
        if self.icon.title != view.tooltip:
            self.icon.title = view.tooltip
        if self.caps.has_menu or self.caps.has_default_action:
            self.icon.menu = self._menu(view)
        self._notify_budget(view)
        self._notify_alerts()

    def _draw(self, view: TrayView) -> None:
        if self.labels:
            text = panel_label(view)
            if text != self._labelled:
                self.icon.set_label(text, LABEL_GUIDE)
                self._labelled = text
        mark = self.mark_only and view.state is not IconState.PROBLEM
        # The bare mark does not change with the figure: sent again, pystray writes it to a new file and GNOME's
        # AppIndicator extension shows its "•••" placeholder while it loads that file, at every change.
        drawn = (
            ("mark", view.state, view.stale) if mark else (view.label, view.state, self.theme, self.size, view.stale)
        )
        if drawn != self._drawn:
            if mark:
                self.icon.icon = render_mark(MARK_PX, view.state, stale=view.stale)
            else:
                self.icon.icon = render_icon(view.label, view.state, self.theme, self.size, stale=view.stale)
            self._drawn = drawn

    def resize(self, size: int) -> None:
        """The tray gave the icon `size` pixels: draw it at that size (from the backend's thread)."""
        if size == self.size:
            return
        log.info("the tray's icon size is %d px", size)
        self.size = size
        if self.view is not None:
            self._ui(lambda: self._draw(self.view) if self.view else None)

    # ---- telling the person -------------------------------------------------------------------------

    def tell(self, message: str) -> None:
        """A notification where they work; the log always."""
        self._tell(message)

    def _tell(self, message: str) -> bool:
        """`tell`; True if the notification was sent."""
        log.warning("%s", message)
        try:
            if self.caps.can_notify and getattr(self.icon, "notifications", True):
                self.icon.notify(message, "trayburn")
                return True
        except Exception:
            log.exception("notification failed")
        return False

    def _notify_budget(self, view: TrayView | None) -> None:
        """Tell a budget level crossed today, once: recorded as told only after the notice was really sent
        (a first tick runs before the notifier is up: `run` tells it again once it is)."""
        if view is None or not view.budget_level:
            return
        path = paths.notified_file(self.engine.state_dir)
        today = date.today().isoformat()
        try:  # private state: never through a link, never unbounded (files.py)
            seen = json.loads(files.read_file(path, 65536, follow=False))
        except (OSError, ValueError):
            seen = {}
        done = seen.get(today, []) if isinstance(seen, dict) else []
        if view.budget_level in done:
            return
        message = budget_message(view)
        if (today, view.budget_level) in self._logged_budget and not self._notifier_up():
            return  # logged already, still nowhere to show it
        self._logged_budget.add((today, view.budget_level))
        if not self._tell(message):
            return  # not shown: not done (told when the notifier is up)
        try:
            files.atomic_write(path, json.dumps({today: done + [view.budget_level]}).encode())
        except OSError:
            log.exception("cannot record the budget notification in %s", path)

    def _notify_alerts(self) -> None:
        """Tell each runaway alert and project budget level passed, once (tray/alerts.py)."""
        if self.glance is not None:
            self.alerts.tell(self.glance, self.engine.settings, date.today(), self._tell, self._notifier_up())

    def _notifier_up(self) -> bool:
        return self.caps.can_notify and bool(getattr(self.icon, "notifications", True))

    # ---- running ------------------------------------------------------------------------------------

    def run(self, check: StartCheck | None = None) -> None:
        log.info(host.describe(self.caps.backend))
        self.waker = watch.waker()
        log.info("live: %s", "a written session wakes the poller (inotify)" if self.waker else "polling only")
        self.tick()  # the icon shows real figures and a working menu from its first appearance
        poller = threading.Thread(target=self._poll_after_first, name="trayburn-poller", daemon=True)
        if self.waker is not None:
            threading.Thread(target=self._listen, args=(self.waker,), name="trayburn-waker", daemon=True).start()
        if check is not None and check.kind == "no_tray_host":  # told only if still so after a grace period
            threading.Thread(target=self._seen_after_grace, name="trayburn-seen", daemon=True).start()
        unwatch = watcher.on_arrival(self._watcher_came) if self.may_switch and self.caps.backend == "gtk" else None

        def setup(icon: Any) -> None:
            icon.visible = True
            with self._lock:  # the notifier is up now: a budget passed before the start is told
                self._ui(lambda: self._notify_budget(self.view))
                self._ui(self._notify_alerts)
            log.info("the icon is up (notifications %s)", "on" if self._notifier_up() else "off")
            if not poller.is_alive():
                poller.start()

        while True:
            try:
                self.icon.run(setup=setup)
            except Exception as exc:
                if not self._stop.is_set():
                    raise
                log.info("tray stopped (%s)", exc)
            if self._stop.is_set() or self._next_backend is None:
                break
            if unwatch is not None:
                unwatch()
                unwatch = None
            self.become(self._next_backend)
        self._stop.set()
        self._wake.set()
        if self.waker is not None:
            self.waker.close()

    def _watcher_came(self) -> None:
        """A StatusNotifierWatcher got on the bus while the icon is a gtk (XEmbed) one (in the GLib main loop): the
        icon leaves the XEmbed tray and `run` starts it again as a StatusNotifierItem."""
        if self._stop.is_set() or self._next_backend is not None:
            return
        log.info("a StatusNotifierWatcher came: the icon becomes a StatusNotifierItem (appindicator backend)")
        self._next_backend = "appindicator"
        self.icon.visible = False
        self.icon.stop()

    def become(self, backend: str) -> None:
        """Make the icon anew with `backend` (pystray loads it beside the one it started with), showing the view it
        had; the poller keeps running and draws on the new icon."""
        with self._lock:  # no tick draws meanwhile
            cls = icons.icon_class(self.pystray, backend)
            self.caps = replace(host.capabilities(backend), can_notify=self.caps.can_notify)
            self.size = icons.start_size(backend)
            self._drawn = self._labelled = None
            self._next_backend = None
            self._make_icon(cls)
            if self.view is not None:
                self._ui(lambda: self._apply(self.view) if self.view else None)
        log.info("now: %s", host.describe(backend))

    def _seen_after_grace(self) -> None:
        """Nothing showed tray icons at the start: tell the person, once, if that is still so after SHOW_GRACE_S (a
        panel that comes meanwhile, as at login, shows the icon; it is never said while a tray shows it)."""
        if self._stop.wait(SHOW_GRACE_S):
            return
        now = host.can_start()
        if now.ok:
            log.info("the icon can be seen now: %s", now.message)
            return
        say(f"trayburn: {now.message}")
        self.tell(f"trayburn is running but cannot be seen: {now.message}")


MARK_PX = 64  # a host that draws the label scales the mark to its slot (GNOME: 16 px × the desktop's scale):
# drawn at 64 it stays crisp at 100 % and at 200 % (a 22 px mark blurs when GNOME at 200 % scales it up to 32)
LABEL_GUIDE = "$00.00"  # the label's usual widest text: the panel keeps that width as the figure changes


def panel_label(view: TrayView) -> str:
    """Today's cost as the panel's label: "$0.33"; "!" with a problem; "–" before any data."""
    if view.state is IconState.PROBLEM:
        return "!"
    if view.state is IconState.NO_DATA:
        return view.label
    return view.cost_text or view.label


SHOW_GRACE_S = 20.0  # with no tray host at the start, how long before the person is told (a panel may be loading)


def say(text: str) -> None:
    """One line for the person who started the tray from a terminal."""
    if sys.stderr is not None:  # None under pythonw / gui-scripts
        print(text, file=sys.stderr)
