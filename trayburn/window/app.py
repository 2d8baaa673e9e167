"""The summary window: a day, a period or one session, kept up to date while it is open; which view shows what.
Never computes a figure (models.py shapes the engine's figures into rows) and never draws one itself (views.py).

It shows what is in the ledger at once, then refreshes the ledger on a timer (the tray's interval), and at once on
Linux when a session is written, and updates the rows in place, keeping the selection and the scroll position.
Nothing it shows is interpreted, and nothing is sent anywhere. Its keys are in keys.py, Export… in exporting.py.
"""

from __future__ import annotations

import logging
import os
import subprocess
import tkinter as tk
from collections.abc import Callable, Mapping
from datetime import date, datetime, timedelta
from pathlib import Path
from tkinter import ttk

from .. import watch
from ..demo import is_demo
from ..engine import Engine
from ..errors import TrayburnError
from ..figures import periods
from ..figures.listprice import WhatIf
from ..system import open_path
from ..words import progress_text
from . import exporting, keys, models, period_rows, theme
from .views import DayView, PeriodView, SessionView, Where
from .widgets import FitLabel, Notice
from .xname import LegacyName

log = logging.getLogger(__name__)
HISTORY_SLICE_S = 0.3  # after what is shown, this long of the rest of a history being read (a first run)

ICON = Path(__file__).resolve().parent.parent / "assets" / "trayburn.png"
APP_TITLE = "trayburn"
STATUS_CLEAR_MS = 5000
FIRST_REFRESH_MS = 100  # let the first frame (from the ledger as it is) paint before refreshing
SHOWN_BY_MS = 1500  # the first refresh comes by then even if the window is never drawn (shown minimised)


class SummaryWindow:
    """Wires the engine to the views: what to show, when to refresh, which keys do what."""

    def __init__(
        self,
        root: tk.Tk,
        engine: Engine | None,
        *,
        day: object = None,
        kind: str = "day",
        session_id: str | None = None,
        problem: str | None = None,
        today: Callable[[], date] = periods.now_date,
        opener: Callable[[str], None] = open_path,
        env: Mapping[str, str] | None = None,
    ):
        self.root, self.engine, self.today, self.opener = root, engine, today, opener
        self.env = os.environ if env is None else env
        self.problem = problem
        self.updated_at: datetime | None = None  # the last refresh of the ledger
        self.unreadable = 0  # paths the last refresh could not read
        self.session_id = session_id
        self._day_from_session = bool(session_id) and day is None  # back goes to the session's day
        self.day = today()
        self._after: str | None = None
        self._exposed = ""  # the first Expose's binding, until the first frame is drawn (`start`)
        self._status_after: str | None = None
        self.waker: watch.Waker | None = None  # Linux: a session written refreshes at once (`start`)
        self.reprice_model = ""  # the period view's what-if: the model its calls are priced on ("" none)
        try:
            self.day = models.parse_day(day) if day is not None else today()
        except models.BadDay as exc:
            self.problem = self.problem or str(exc)
        self.period = periods.of_kind(kind if kind in ("day", "week", "month") else "day", self.day)
        self.demo = engine is not None and is_demo(engine.levels.sessions.path)
        self._build()
        keys.bind_keys(self)

    # ---- building -------------------------------------------------------------------------------

    def _build(self) -> None:
        setting = self.engine.settings.theme if self.engine else "auto"
        self.palette = theme.resolve(setting, self.env)
        self.metrics = m = theme.apply(self.root, self.palette, self.env)
        self.legacy_name = LegacyName(self.root)
        self._title(APP_TITLE)
        self._size_window(m)
        self._set_icon()
        self.root.columnconfigure(0, weight=1)
        self.root.rowconfigure(0, weight=1)
        nav: dict[str, Callable[..., object]] = {
            "on_kind": self.show_kind,
            "on_step": self.step,
            "on_typed": self.typed,
            "on_now": self.show_now,
            "on_export": self.export_period,
        }
        self.day_view = DayView(self.root, m, self.palette, nav=nav, on_open=self.show_session)
        self.period_view = PeriodView(
            self.root, m, self.palette, nav=nav, on_day=self.show_day, on_open=self.show_session
        )
        self.period_view.on_reprice = self.reprice
        self.session_view = SessionView(
            self.root, m, self.palette, on_back=self.back, on_copy=self.copy_id, on_folder=self.open_session_folder
        )
        self.notice = Notice(self.root, m)
        self.views = (self.day_view, self.period_view, self.session_view, self.notice)
        # the footer: one line, ending in "…" where the window is too narrow for all of it
        self.status = FitLabel(self.root, style="Status.TLabel", padding=(m.px(16), m.px(3), m.px(16), m.px(6)))
        self.status.grid(row=1, column=0, sticky="ew")
        self.root.protocol("WM_DELETE_WINDOW", self.close)

    def _title(self, text: str) -> None:
        if text != self.root.title():
            self.root.title(text)
            self.legacy_name.set()

    def _size_window(self, m: theme.Metrics) -> None:
        width = min(m.px(1000), int(self.root.winfo_screenwidth() * 0.95))
        height = min(m.px(640), int(self.root.winfo_screenheight() * 0.9))
        self.root.geometry(f"{width}x{height}")
        self.root.minsize(min(m.px(720), width), min(m.px(460), height))

    def _set_icon(self) -> None:
        if not ICON.is_file():
            return
        try:
            self._icon = tk.PhotoImage(master=self.root, file=str(ICON))
            self.root.iconphoto(True, self._icon)
        except tk.TclError as exc:
            log.warning("cannot use the window icon %s: %s", ICON, exc)

    # ---- what is shown --------------------------------------------------------------------------

    @property
    def current(self) -> ttk.Frame:
        return next((v for v in self.views if v.winfo_manager()), self.notice)

    def _raise(self, view: ttk.Frame) -> None:
        for v in self.views:
            if v is not view:
                v.grid_remove()
        view.grid(row=0, column=0, sticky="nsew")

    def render(self) -> None:
        """Show the current day or session from the ledger as it is now (no refresh)."""
        try:
            e = self.engine
            if self.problem or e is None:
                self._show_problem()
            elif self.session_id:
                self._render_session(e, self.session_id)
            elif self.period.kind == "day":
                self._render_day(e)
            else:
                self._render_period(e)
        except Exception as exc:  # a bad ledger row must not take the window down
            log.exception("cannot show the summary")
            self._notice("Cannot show this", str(exc), "Show today", lambda: self.show_day(None))
        if self._status_after is None:
            self._idle_status()

    def _render_day(self, e: Engine) -> None:
        day, today = self.day, self.today()
        now_hour = datetime.now().hour if day == today else None
        figures = e.day_figures(day, hourly=True)
        self.day_view.show(figures, today, now_hour, e.money(), e.settings.daily_budget)
        self._show_view(self.day_view, models.day_heading(day))

    def _render_period(self, e: Engine) -> None:
        p, s = self.period, e.settings
        views = e.overview(p)
        sessions = e.sessions(p.since, p.until)
        by_machine, plan = e.machines(p.since, p.until), e.totals(p.since, p.until)
        view, money = self.period_view, e.money()
        where = Where(e.attribution(p, "tool"), e.attribution(p, "agent"), e.cache_saved(p), self._what_if(e, p))
        view.show(p, views, sessions, self.today(), money, s.daily_budget, s.monthly_budget, by_machine, plan, where)
        self._show_view(self.period_view, p.label())

    def _what_if(self, e: Engine, p: periods.Period) -> WhatIf | None:
        return e.reprice(p, self.reprice_model) if self.reprice_model else None

    def reprice(self, model: str) -> None:
        """Show the period's calls at `model`'s list price beside its spend (a what-if; "" ends it)."""
        self.reprice_model = model
        if self.engine is not None and self.period.kind != "day":
            self.period_view.show_what_if(self._what_if(self.engine, self.period), self.engine.money())

    def _show_view(self, view, heading: str) -> None:
        was_hidden = not view.winfo_manager()
        self._raise(view)
        if was_hidden:
            view.sessions.focus_rows()
        self._title(f"{APP_TITLE} — {heading}" + (" — demo" if self.demo else ""))

    def _render_session(self, e: Engine, session_id: str) -> None:
        detail = e.session(session_id)
        if detail is None:
            if self.updated_at is None:
                self._notice("Reading Cline's sessions…", f"Looking for session {models.clean(session_id, 80)}.")
                return
            self._notice(
                "Unknown session",
                f"There is no session “{models.clean(session_id, 80)}” in the ledger.\n"
                "“trayburn sessions --all” lists the sessions; “trayburn doctor” shows where trayburn looks.",
                "Show today's sessions",
                lambda: self.show_day(None),
            )
            self._title(f"{APP_TITLE} — unknown session")
            return
        started = detail.summary.started_at
        if started and self._day_from_session:
            self.day, self._day_from_session = datetime.fromisoformat(started).date(), False
            self.period = periods.day_of(self.day)
        back = f"{self.day.day} {self.day:%b}" if self.period.kind == "day" else self.period.label()
        where = Where(e.attribution(None, "tool", session_id), e.attribution(None, "agent", session_id))
        self.session_view.show(detail, back, e.money(), where)
        was_hidden = not self.session_view.winfo_manager()
        self._raise(self.session_view)
        if was_hidden:
            self.session_view.calls.focus_rows()
        self._title(f"{APP_TITLE} — {models.clean(detail.summary.title, 60)}")

    def _show_problem(self) -> None:
        if self.engine is None:
            self._notice("Cannot open the ledger", self.problem or "unknown error")
        else:
            self._notice(
                "Cannot show this day", self.problem or "unknown error", "Show today", lambda: self.show_day(None)
            )

    def _notice(self, headline: str, detail: str, action: str | None = None, command=None) -> None:
        self.notice.show(headline, detail, action, command)
        self._raise(self.notice)
        self._title(f"{APP_TITLE} — {headline.rstrip('…').lower()}")

    # ---- navigation -----------------------------------------------------------------------------

    def show_day(self, day: date | None) -> None:
        self.show_period(periods.day_of(day or self.today()))

    def show_period(self, p: periods.Period) -> None:
        self.problem = None if self.engine else self.problem
        self.period, self.session_id = p, None
        if p.kind == "day":
            self.day = p.since
        self.render()

    def show_session(self, sid: str) -> None:
        self.session_id = sid
        self.render()

    def back(self) -> None:
        self.show_period(self.period)

    def show_kind(self, kind: str) -> None:
        """Day, Week, Month or Range, around the day in view (today when the period holds it)."""
        p, today = self.period, self.today()
        anchor = today if p.contains(today) else (self.day if p.contains(self.day) else p.since)
        if kind == "range":
            since = p.since if p.kind != "day" else anchor - timedelta(days=29)
            self.show_period(periods.Period(since, p.until, "range"))
            self.current_nav().entry.focus_set()
            self.current_nav().entry.select_range(0, "end")
        else:
            self.show_period(periods.of_kind(kind, anchor))

    def show_now(self) -> None:
        today = self.today()
        kind = self.period.kind
        if kind == "range":
            self.show_period(periods.Period(today - timedelta(days=29), today, "range"))
        else:
            self.show_period(periods.of_kind(kind, today))

    def step(self, n: int) -> None:
        """The previous or next day, week, month or range; never one that starts after today."""
        target = self.period.step(n)
        if n < 0 or target.since <= self.today():
            self.show_period(target)

    def typed(self, text: str) -> None:
        try:
            self.show_period(period_rows.parse_entry(text, self.period.kind, self.today()))
        except periods.BadPeriod as exc:
            self.current_view().say(str(exc))

    def current_view(self):
        return self.period_view if self.period.kind != "day" else self.day_view

    def current_nav(self):
        return self.current_view().nav

    # ---- actions --------------------------------------------------------------------------------

    def export_period(self) -> None:
        """Ask where to write the calls of the period in view, then write them there (`exporting`)."""
        if self.engine is not None:
            exporting.ask_and_export(self.root, self.period, self.say, self.export_to)

    def export_to(self, path: str) -> str:
        """Write the period's calls to `path`; what happened, in words."""
        if self.engine is None:
            return "Nothing to export: the ledger is not open"
        return exporting.write_period(self.engine, self.period, path)

    def copy_id(self) -> None:
        detail = self.session_view.detail
        if detail:
            self.root.clipboard_clear()
            self.root.clipboard_append(detail.summary.id)
            self.say(f"Copied the session id {detail.summary.id}")

    def open_session_folder(self) -> None:
        detail = self.session_view.detail
        folder = detail.summary.folder if detail else None
        if not folder or not Path(folder).is_dir():
            self.say("The session folder is no longer on disk")
            return
        try:
            self.opener(folder)
            self.say(f"Opened {models.clean(folder, models.PATH_CHARS)}")
        except (OSError, subprocess.SubprocessError) as exc:
            self.say(f"Cannot open the folder: {exc}")

    def say(self, text: str) -> None:
        """A passing message in the status line."""
        self.status.set(text)
        if self._status_after:
            self.root.after_cancel(self._status_after)
        self._status_after = self.root.after(STATUS_CLEAR_MS, self._idle_status)

    def _idle_status(self) -> None:
        self._status_after = None
        if self.engine:
            every = self.engine.settings.refresh_seconds
            stamp = self.updated_at.strftime("%H:%M:%S") if self.updated_at else "not yet"
            hint = {
                self.session_view: "Esc goes back · Ctrl+C copies the id",
                self.day_view: "Enter opens a session · ←/→ change the day",
                self.period_view: "Enter opens a session · click a bar for its day · ←/→ move",
            }.get(self.current, "Ctrl+W closes")
            trouble = f" · {self.unreadable} unreadable (see trayburn doctor)" if self.unreadable else ""
            demo = "Demo: recorded sessions replayed as today · " if self.demo else ""
            reading = progress_text(self.engine.progress)
            history = f" · {reading} (what is shown is complete)" if reading else ""
            text = f"{demo}Updated {stamp}{history}{trouble} · every {every} s (F5 now) · {hint}"
            self.status.set(text)

    # ---- refreshing -----------------------------------------------------------------------------

    def start(self) -> None:
        """First frame from the ledger as it is, laid out before the window is shown (`main` creates it withdrawn),
        then a refresh once that frame is on the screen, then one every refresh_seconds."""
        self.render()
        if self.engine is not None and self.engine.ledger_notice:
            self.say(self.engine.ledger_notice)
        self.root.update_idletasks()  # every size settled: the window is mapped once, whole, at its size
        self.root.deiconify()
        if self.engine is not None:
            # The first refresh reads files and blocks Tk: it waits until the first frame is drawn (the window's
            # first Expose, then Tk's pending redraws), or SHOWN_BY_MS where the window is not shown (minimised).
            self._after = self.root.after(SHOWN_BY_MS, self._tick)
            self._exposed = self.root.bind("<Expose>", self._first_expose, add="+")
            self._listen()

    def _first_expose(self, event: tk.Event) -> None:
        if event.widget is not self.root or not self._exposed:
            return
        self.root.unbind("<Expose>", self._exposed)
        self._exposed = ""
        if self._after:
            self.root.after_cancel(self._after)
        self._after = self.root.after_idle(lambda: self._later(FIRST_REFRESH_MS))

    def _later(self, ms: int) -> None:
        if self.engine is not None:
            self._after = self.root.after(ms, self._tick)

    def _listen(self) -> None:
        """Where the platform has inotify and Tk file handlers (Linux): a session written refreshes the window
        after the waker's debounce; the timer still refreshes at the tray's interval either way."""
        createfilehandler = getattr(self.root.tk, "createfilehandler", None)
        self.waker = watch.waker() if createfilehandler is not None else None
        if self.waker is not None and createfilehandler is not None:
            createfilehandler(self.waker.fileno(), tk.READABLE, self._on_files)

    def _on_files(self, *_: object) -> None:
        if self.waker is None or not self.waker.pending() or self.engine is None:
            return
        if self._after:
            self.root.after_cancel(self._after)
        self._after = self.root.after(int(watch.DEBOUNCE_S * 1000), self._tick)

    def _follow(self) -> None:
        if self.waker is None or self.engine is None:
            return
        roots = self.engine.watch_folders()
        today = self.today()
        latest = sorted(self.engine.sessions(today, today), key=lambda s: s.last_activity_ms or 0, reverse=True)
        ids = [self.session_id] if self.session_id else []
        self.waker.follow_sessions(roots, ids + [s.id for s in latest])

    def refresh(self) -> None:
        """Bring the ledger up to date and update what is shown in place."""
        if self.engine is None:
            return
        try:
            # what is shown first and exact (a session: all of it), then a slice of the rest of the history
            since = None if self.session_id else self.period.bounds_ms()[0]
            stats = self.engine.refresh(since, HISTORY_SLICE_S) if since is not None else self.engine.refresh()
            self.unreadable = len(stats.errors)
            self.updated_at = datetime.now()
        except Exception as exc:  # keep showing the last figures
            if isinstance(exc, TrayburnError) and exc.kind == "ledger_busy":  # the tray is writing: try again later
                log.info("ledger busy; refresh skipped")
                return
            log.exception("refresh failed")
            self.say(f"Could not refresh: {exc}")
            return
        if self._theme_changed(self.engine):
            self._restyle(self.engine)
        self.render()
        self._follow()

    def _tick(self) -> None:
        self.refresh()
        if self.engine is not None and self.root.winfo_exists():
            self._after = self.root.after(self.engine.settings.refresh_seconds * 1000, self._tick)

    def _theme_changed(self, e: Engine) -> bool:
        return theme.resolve(e.settings.theme, self.env) is not self.palette

    def _restyle(self, e: Engine) -> None:
        self.palette = theme.resolve(e.settings.theme, self.env)
        self.metrics = theme.apply(self.root, self.palette, self.env)
        self.day_view.recolor(self.palette)
        self.period_view.recolor(self.palette)
        self.session_view.recolor(self.palette)

    def close(self) -> None:
        for job in (self._after, self._status_after):
            if job:
                self.root.after_cancel(job)
        self._after = self._status_after = None
        if self.waker is not None:
            self.root.tk.deletefilehandler(self.waker.fileno())
            self.waker.close()
            self.waker = None
        if self.engine is not None:
            self.engine.close()
            self.engine = None
        self.legacy_name.close()
        self.root.destroy()
