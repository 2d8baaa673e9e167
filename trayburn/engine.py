"""The engine: settings, the sources, the ledger and prices behind one object, which the CLI, the tray and
the summary window use. Never imports a GUI toolkit and never speaks SQL (the ledger does).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import date, timedelta
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from . import paths, settings
from .figures import history, money, periods
from .figures.burn import WINDOW_MS, Burn, burn, hour_calls, minute_of, runaways
from .figures.costs import Pricer, Totals
from .figures.day import (
    DayReport,
    SessionDetail,
    SessionSummary,
    day_report,
    hourly_costs,
    listed,
    restated,
    session_detail,
    sessions,
    totals_between,
)
from .figures.history import HistoryReport, MachinesReport
from .files import Checkpoint, stat_file
from .ledger import ALL_TIME, Ledger, LedgerUnavailable, RefreshStats
from .pricing import PriceBook
from .sources.base import Source, storable_id
from .sources.cline_cli.source import ClineCliSource

if TYPE_CHECKING:  # (the tray's glance, its budgets and health are loaded where asked: no command's figure needs them)
    from .figures import export, listprice
    from .figures.budgets import BudgetState
    from .figures.glance import Basis, DayFigures, Glance
    from .health import Health, HealthKind
    from .ledger.changes import Changes
    from .pricing.show import SeenModel
    from .sync.share import ShareState, Sharing, SyncHealth

log = logging.getLogger(__name__)


class Engine:
    def __init__(
        self,
        config: str | os.PathLike | None = None,
        state_dir: str | os.PathLike | None = None,
        env: Mapping[str, str] | None = None,
        busy_timeout_s: float = 30,
    ):
        """`busy_timeout_s`: how long a refresh waits for another process's lock on the ledger before it
        raises LedgerBusy (the summary window uses a short one and retries at its next refresh)."""
        self.env = os.environ if env is None else env
        self.config_path = paths.config_file(config, self.env)
        self.state_dir = paths.state_dir(state_dir, self.env)
        self._config_stamp: Checkpoint | None = None
        self.last_refresh: RefreshStats | None = None
        self._last_fault: str | None = None
        self._cline: dict[str, ClineCliSource] = {}  # by sessions folder (`sources`)
        self.integrity_problem: str | None = None  # what the last `check_integrity` found (None: sound or not run)
        self.load_settings()
        self.ledger = Ledger(paths.ledger_file(self.state_dir), self.settings.max_file_mb * 10**6, busy_timeout_s)
        self.last_share: ShareState | None = None

    # ---- settings and folders ------------------------------------------------------------------

    def load_settings(self) -> None:
        self.loaded = settings.load(self.config_path)
        self.settings = self.loaded.settings
        self.levels = paths.resolve_levels(
            self.settings.cline_dir, self.settings.data_dir, self.settings.sessions_dir, self.env
        )
        self.book = PriceBook(
            self.settings.prices,
            self.settings.aliases,
            cache=paths.prices_cache_file(self.state_dir),
            billing=self.settings.billing,
        )
        self._config_stamp = _stamp(self.config_path)
        for warning in self.loaded.warnings:
            log.warning(warning)
        if self.loaded.error:
            log.error(self.loaded.error)

    def reload_if_changed(self) -> bool:
        """Pick up edits to the settings file (by the menu or by hand). True if it changed."""
        if _stamp(self.config_path) == self._config_stamp:
            return False
        self.load_settings()
        self.ledger.max_file_bytes = self.settings.max_file_mb * 10**6
        return True

    # ---- refresh --------------------------------------------------------------------------------

    def refresh(self, since_ms: int | None = None, budget_s: float | None = None, reload: bool = True) -> RefreshStats:
        """Bring the ledger up to date. With neither argument: completely (`sessions --all`, `doctor`).

        `since_ms` (epoch ms): the figures from that moment on are exact when this returns (every session
        whose files changed since is read first; a file not modified since then cannot hold a later call).
        `budget_s`: then read the rest of the history for about that long (None with `since_ms`: none),
        newest first; without `since_ms` today's local midnight is the moment (the tray's poll). What is
        left is continued by the next refresh; `progress` says how far the history is. `reload`: pick up
        edits to the settings file first (False: the caller just did, and acted on what changed)."""
        if hasattr(time, "tzset"):  # the time zone may have changed (not on Windows)
            time.tzset()
        if reload:
            self.reload_if_changed()
        if budget_s is not None and since_ms is None:
            since_ms = periods.local_midnight_ms(periods.now_date())
        stats, local = RefreshStats(), RefreshStats()
        try:
            for source in self.sources():
                one = self.ledger.refresh(source, since_ms, budget_s)
                stats.add(one)
                if source.origin is None:
                    local.add(one)
        except LedgerUnavailable as exc:  # kept in `fault`: what the ledger holds is still served, stale
            if str(exc) != self._last_fault:  # once, not at every poll while it lasts
                log.warning("%s", exc)
            self._last_fault = str(exc)
        else:
            self._last_fault = None
        self.last_refresh = stats
        self.after_refresh(local)
        return stats

    def after_refresh(self, local: RefreshStats) -> None:
        """Share this machine's figures through `sync_dir` when due (`local`: what this machine's own
        sources did). A sharing fault is kept for `doctor`, never raised: the figures stand."""
        s = self.settings
        if not s.sync_dir:  # not sharing: nothing to write (and the sharing code is not even loaded)
            return
        counted = bool(local.calls_upserted or local.removed_sessions)
        try:
            self.last_share = self.sharing.after_refresh(s.sync_dir, s.machine_name, s.sync_titles, counted)
        except OSError as exc:  # the state folder itself refused (the ledger's folder: the refresh still stood)
            log.warning("not shared: %s", exc)

    @property
    def fault(self) -> LedgerUnavailable | None:
        """Set while the ledger cannot be written (disk full, read-only, I/O error): figures are stale."""
        return self.ledger.fault

    def refresh_day(self, day: date | None = None, budget_s: float = 0.0) -> RefreshStats:
        """`refresh` so that the figures of `day` (default today) and after are exact."""
        return self.refresh(periods.local_midnight_ms(day or periods.now_date()), budget_s)

    @property
    def progress(self) -> tuple[int, int] | None:
        """(sessions read, sessions in all) while the history is still being read; None once the last
        refresh left nothing unread (or before any refresh). For "Reading history: 4,120 of 20,000 sessions"."""
        stats = self.last_refresh
        if stats is None or not stats.pending:
            return None
        return max(stats.folders - stats.pending, 0), stats.folders

    def sources(self) -> list[Source]:
        """What a refresh reads, each in its own transaction: the Cline CLI's sessions folder when it is
        one (else the verdict says why; it is not an unreadable file). New sources are added here."""
        sessions = self.levels.sessions.path
        own: list[Source] = [self._cline_source(sessions)] if sessions.is_dir() else []
        own += self.task_sources() + self.kilo_sources()
        if not self.settings.sync_dir:  # other machines' history stays in the ledger; no file to read
            return own
        try:
            return own + list(self.sharing.sources(self.settings.sync_dir))
        except OSError as exc:  # no machine id could be made: this machine's figures still refresh
            log.warning("other machines not read: %s", exc)
            return own

    def task_places(self) -> dict[str, list]:
        """Where each editor app's tasks are looked for (sources/editor_tasks/places.py), for `doctor`: app → places
        (empty when the app is turned off in the settings)."""
        import sys

        from .sources.editor_tasks import places

        s, out = self.settings, {}
        root, data = self.levels.root, self.levels.data
        cli_data = places.cline_data_places(root.path, root.source(), data.path, data.source())
        for app in places.APPS:
            on = getattr(s, app.enabled_key, True)
            dirs = getattr(s, app.dirs_key, [])
            out[app.name] = (
                places.places(app, dirs, self.env, paths.home(self.env), sys.platform, cli_data) if on else []
            )
        return out

    def task_places_json(self) -> list[dict]:
        """`doctor`'s view of the editor apps: each app on or off, every place looked at, where it came from."""
        from .sources.editor_tasks.places import BY_NAME

        out = []
        for name, places in self.task_places().items():
            app = BY_NAME[name]
            rows = []
            for p in places:
                exists = p.exists
                tasks = sum(1 for e in os.scandir(p.tasks) if e.is_dir()) if exists else 0
                rows.append({"path": str(p.tasks), "origin": p.origin, "exists": exists, "tasks": tasks})
            on = bool(getattr(self.settings, app.enabled_key, True))
            row = {"app": name, "label": app.label, "enabled": on, "enabled_key": app.enabled_key, "places": rows}
            if app.cost_unit is not None and any(r["tasks"] for r in rows):
                row["written_cost"] = self._written_costs(app, places)
            out.append(row)
        return out

    def _written_costs(self, app, places: list) -> dict:
        """An app whose files' cost unit is not proven dollars (IBM Bob): what its files wrote, kept aside."""
        from .sources.editor_tasks.source import written_costs

        tasks, total = written_costs(app, places, self.settings.max_file_mb * 10**6)
        return {"tasks": tasks, "total": round(total, 6), "unit": app.cost_unit}

    def task_sources(self) -> list[Source]:
        """One source per editor app that is on (Cline's pre-4.0 tasks, Roo Code, Kilo Code), kept between
        refreshes while its places stay the same."""
        from .sources.editor_tasks.places import BY_NAME

        memo: dict = self.__dict__.setdefault("_task_sources", {})
        out: list[Source] = []
        for name, places in self.task_places().items():
            if not places:
                continue
            key = (name, tuple(places))
            if key not in memo:
                from .sources.editor_tasks.source import TaskSource  # (only where an editor app's folder is)

                memo[key] = TaskSource(BY_NAME[name], places)
            out.append(memo[key])
        return out

    def kilo_databases(self) -> list:
        """Where Kilo Code 7's databases are looked for (sources/kilo/places.py); none when Kilo Code is off."""
        import sys

        from .sources.kilo import places

        if not getattr(self.settings, "kilo_code", True):  # (an editor app's flag: declared from APPS)
            return []
        return places.databases(self.settings.kilo_code_db, self.env, paths.home(self.env), sys.platform)

    def kilo_sources(self) -> list[Source]:
        """Kilo Code 7's source over its databases, kept between refreshes while they stay the same."""
        dbs = self.kilo_databases()
        if not dbs:
            return []
        from .sources.kilo.source import KiloSource  # (only where a database is)

        memo: dict = self.__dict__.setdefault("_kilo_sources", {})
        key = tuple(dbs)
        if key not in memo:
            memo.clear()
            memo[key] = KiloSource(dbs)
        return [memo[key]]

    def kilo_json(self) -> dict:
        """`doctor`'s view of Kilo Code 7: each database looked at, where its path came from, what it holds."""
        from .sources.kilo import read

        rows = [{"path": str(d.path), "origin": d.origin, **read.survey(str(d.path))} for d in self.kilo_databases()]
        on = bool(getattr(self.settings, "kilo_code", True))
        return {"label": "Kilo Code 7", "enabled": on, "enabled_key": "kilo_code", "databases": rows}

    def spend_by_source(self, since: date | None = None, until: date | None = None) -> list[tuple[str, float | None]]:
        """(app, USD; None: unpriced) per source over [since, until] (default: today), biggest first: the menu's
        "Cline CLI $1.20 · Cline for VS Code $3.40" line (`editor_tasks.places.menu_line` writes it from this)."""
        first = since or periods.now_date()
        got = history.report(
            self.ledger, self.book, periods.Period(first, until or first), "source", self.machine_name()
        )
        return by_source(got)

    def _cline_source(self, sessions: Path) -> ClineCliSource:
        """The Cline CLI source of this sessions folder, kept between refreshes (its listings and watches)."""
        key = str(sessions)
        if key not in self._cline:
            self._cline[key] = ClineCliSource(key, time.monotonic, str(paths.listings_file(self.state_dir)))
        return self._cline[key]

    # ---- figures --------------------------------------------------------------------------------

    def day(self, day: date | None = None) -> DayReport:
        return day_report(self.ledger, self.book, day or periods.now_date())

    def hourly(self, day: date | None = None) -> list[float]:
        return hourly_costs(self.ledger, self.book, day or periods.now_date())

    def sessions(self, since: date | None, until: date | None) -> list[SessionSummary]:
        return sessions(self.ledger, self.book, since, until)  # figures.day.sessions

    def sessions_listed(self, since: date | None, until: date | None) -> Iterator[SessionSummary]:
        """`sessions`, made one at a time (a long list printed as it is made: figures.day.listed)."""
        return listed(self.ledger, self.book, since, until)

    def session(self, sid: str) -> SessionDetail | None:
        """One session by its id as listed, or by its folder's own name (a name that is not UTF-8, as a
        shell's tab completion gives it, is stored as its escaped text: `storable_id`)."""
        return session_detail(self.ledger, self.book, storable_id(sid))

    def period(self, month: bool = False) -> Totals:
        """This week (Monday on) or this month, to the end of today."""
        from .figures.glance import period_start

        today = periods.now_date()
        return self.totals(period_start(today, month), today)

    def totals(self, since: date, until: date) -> Totals:
        """[since, until]'s totals, with what a plan covered (`history`'s groups do not carry it yet)."""
        start, end = periods.local_midnight_ms(since), periods.day_bounds(until)[1]
        return totals_between(self.ledger, self.book, start, end)

    def day_figures(self, day: date | None = None, hourly: bool = False) -> DayFigures:
        """One day (default today) as the window's day view and the menu show it; `hourly`: with the cost
        per hour (the window's chart)."""
        from .figures.glance import day_figures

        d = day or periods.now_date()
        report, machines = self.day_and_machines(d)
        figures = day_figures(self.ledger, self.book, d, machines, hourly, report)
        if d != periods.now_date():
            return figures
        return replace(figures, burn=self.pace(figures.report.cost_usd))

    def day_and_machines(self, day: date | None = None) -> tuple[DayReport, MachinesReport]:
        """The day's figure (default today) and its spend by machine, from one grouped read of its calls."""
        d = day or periods.now_date()
        start, end = periods.day_bounds(d)
        pricer = Pricer(self.ledger, self.book)
        groups, sessions = pricer.groups_and_sessions(start, end, by=("origin",))
        machines = history.machines_between(self.ledger, self.book, start, end, self.machine_name(), (pricer, groups))
        return day_report(self.ledger, self.book, d, (pricer, groups), sessions), machines

    def pace(self, spent_today_usd: float, now_ms: int | None = None) -> Burn:
        """Today's burn rate and where the day ends at that pace (`figures.burn`); `spent_today_usd`: today's
        spend so far."""
        now = periods.utc_now_ms() if now_ms is None else now_ms
        return burn(self.ledger, self.book, now, periods.now_date(), spent_today_usd)

    def budgets(self, today: date, day_usd: float, month_usd: float) -> list[BudgetState]:
        """Every budget set, with its spend: the daily and monthly ones, then each project's
        (`project_budgets`; the projects' spend is read only when one has a budget)."""
        from .figures import budgets

        s = self.settings
        spend = budgets.project_spend(self.ledger, self.book, today, s.project_budgets)
        return budgets.overall(s.daily_budget, s.monthly_budget, day_usd, month_usd) + budgets.per_project(
            s.project_budgets, spend
        )

    def changes(self) -> Changes | None:
        """What the ledger's writes changed in its figures' rows since the last call (`ledger.changes.Changes`: the
        sessions, the earliest call time), for `glance`. None: unknown (the first call, another process wrote
        meanwhile), and always while the history is still being read (what a first read writes is never tracked:
        every one of its rows would pay for it)."""
        if self.progress is not None:
            return None
        return self.ledger.changes()

    def glance(self, health: Health, since: Glance | None = None, changes: Changes | None = None) -> Glance:
        """What the tray's menu shows, from the ledger as it is (`figures.glance.Glance`). `health`: as just
        taken (a machine file it names is a sharing problem; a file it holds as settling goes stale). `since`: the
        glance built before; `changes`: what the ledger's writes changed since (`changes()`; None: unknown, all is
        read again; `ledger.changes.NOTHING`: only the clock moved). What no call changed is kept
        (`figures.glance.basis`): only the sessions changed are read again when every call changed is of today,
        and everything after a change before today, at midnight, with other settings. With nothing changed, what
        the clock cannot change is kept as it was, and of today only the last hour is read."""
        from .figures.glance import HOUR_MS, basis, changes_at

        now, today = periods.utc_now_ms(), periods.now_date()
        s = self.settings
        kept = since.basis if since is not None else None
        b = basis(self.ledger, self.book, today, frozenset(s.project_budgets), kept, changes)
        if since is not None and b is kept:  # only the clock moved: running sessions may be stale (same order)
            base = replace(since, day=replace(since.day, sessions=tuple(restated(x, now) for x in since.day.sessions)))
        else:
            base, b = self._until_midnight(b, now)
        hour = self.last_hour(now)
        at = minute_of(now) - WINDOW_MS  # the pace's calls, kept while none changed (its window only moves on)
        calls = b.hour if b.hour is not None and b.hour.since_ms <= at else hour_calls(self.ledger, self.book, at)
        first = next((ts for _, ts, _ in calls.between(now - HOUR_MS, now + 1)), None) if hour.calls else None
        pace = burn(self.ledger, self.book, now, today, base.day.report.cost_usd, calls)
        whole = dict(b.whole)
        found = runaways(
            self.ledger, self.book, base.day.sessions, pace, s.session_alert_usd, s.rate_alert_usd_per_hour, whole
        )
        return replace(
            base,
            day=replace(base.day, burn=pace),
            last_hour=hour,
            hour_first_ms=first,
            progress=self.progress,
            sync_problem=self.sync_problem(health.problems),
            built_ms=now,
            stale_at_ms=changes_at(now, today, first, base.day.sessions, health.settling, found),
            runaways=found,
            basis=replace(b, hour=calls, whole=whole),
        )

    def _until_midnight(self, b: Basis, now_ms: int) -> tuple[Glance, Basis]:
        """The part of today's glance the clock leaves alone until midnight, from its basis (`glance` sets the
        rest), and the basis with yesterday's report when the menu shows it."""
        from .demo import is_demo  # (the demo's module brings shutil, tempfile and signal: only the tray's glance)
        from .figures import budgets
        from .figures.glance import DayFigures, Glance, merged, today_figures

        t = today_figures(b, self.ledger, self.machine_name(), now_ms)
        report = t.report
        if not report.calls and b.yesterday is None:
            b = replace(b, yesterday=self.day(b.day - timedelta(days=1)))
        s = self.settings
        month = merged(b.month_before, t.totals)
        spend = budgets.project_spend_of(t.by_project, b.projects_before) if t.by_project is not None else {}
        states = budgets.overall(s.daily_budget, s.monthly_budget, report.cost_usd, month.cost_usd)
        return Glance(
            day=DayFigures(b.day, report, t.sessions, t.machines),
            week=merged(b.week_before, t.totals),
            month=month,
            last_hour=Totals(),
            hour_first_ms=None,
            yesterday=None if report.calls else b.yesterday,
            by_source=tuple(by_source(t.by_source)),
            money=self.money(),
            progress=None,
            demo=is_demo(self.levels.sessions.path),
            sync_problem=None,
            built_ms=0,
            stale_at_ms=0,
            budgets=tuple(states + budgets.per_project(s.project_budgets, spend)),
        ), b

    def history(self, period, by: str = "day"):
        """A period's figures by day, week, month, project, model, session or source (history.HistoryReport)."""
        return history.report(self.ledger, self.book, period, by, self.machine_name())

    def attribution(self, period: periods.Period | None, by: str, session_id: str | None = None):
        """A period's (or, `period` None, one session's) cost by tool or by agent (attribution.Attribution)."""
        from .figures import attribution  # (as the two below: only the commands that show them load them)

        figure = attribution.by_tool if by == "tool" else attribution.by_agent
        return figure(self.ledger, self.book, period, session_id)

    def cache_saved(self, period: periods.Period) -> listprice.CacheReport:
        """What cache reads saved over the period, per model, at list price."""
        from .figures import listprice

        return listprice.cache_saved(self.ledger, self.book, *period.bounds_ms())

    def reprice(self, period: periods.Period, model: str) -> listprice.WhatIf:
        """The period's calls at `model`'s list price: a what-if, never spend."""
        from .figures import listprice

        return listprice.reprice(self.ledger, self.book, *period.bounds_ms(), model)

    def overview(self, period):
        """A period by day, project, model and source from one read (the window's period view)."""
        return history.overview(self.ledger, self.book, period)

    def money(self):
        """How amounts are shown: the settings' currency and rate, the locale's format (money.Money)."""
        return money.from_settings(self.settings, self.env)

    def machines(self, since: date | None = None, until: date | None = None, all_time: bool = False) -> MachinesReport:
        """Spend by machine over [since, until] (default: today; `all_time`: every call). The menu line
        is `engine.machines().menu_line()` (None while no other machine is held)."""
        first = since or periods.now_date()
        start, end = periods.local_midnight_ms(first), periods.day_bounds(until or first)[1]
        if all_time:
            start, end = ALL_TIME
        name = self.machine_name()
        return history.machines_between(self.ledger, self.book, start, end, name)

    @cached_property
    def sharing(self) -> Sharing:
        """This machine's side of `sync_dir`: its id, its file, the other machines' sources (loaded on use)."""
        from .sync.share import Sharing  # (20 ms of imports, only with a sync_dir)

        return Sharing(self.state_dir, self.ledger)

    def machine_name(self) -> str:
        """This machine's name for people: the setting, else the host name."""
        from .sync import machine_name  # (as Sharing: only where machines are shown)

        return machine_name(self.settings.machine_name)

    def sync_health(self) -> SyncHealth:
        """Sharing as `doctor` shows it: this machine's id and file, each other machine's file."""
        s = self.settings
        from .sync.share import survey  # (doctor only: without a sync_dir the sharing code stays unloaded)

        return survey(self.sharing, s.sync_dir, s.machine_name, s.sync_titles)

    def last_hour(self, now_ms: int | None = None) -> Totals:
        from .figures.glance import HOUR_MS

        now = periods.utc_now_ms() if now_ms is None else now_ms
        return totals_between(self.ledger, self.book, now - HOUR_MS, now + 1)

    def export_rows(self, period: periods.Period) -> Iterator[export.ExportRow]:
        """The period's calls as `trayburn export` writes them, oldest first (streamed: `export.to_file`)."""
        from .figures import export  # (csv and the export's records: only for `export`)

        return export.rows(self.ledger, self.book, period)

    @property
    def ledger_notice(self) -> str | None:
        """What happened to the ledger file that a person should know (moved aside and rebuilt, …)."""
        return self.ledger.notice

    def watch_folders(self) -> list[str]:
        """Where a new session of any source appears (`Source.watch_folders`): what a waker watches."""
        return list(dict.fromkeys(f for s in self.sources() for f in s.watch_folders()))

    def sync_problem(self, problems: Sequence[tuple[str, str]] = ()) -> str | None:
        """What is wrong with sharing through `sync_dir` (None: nothing, or not sharing), by the rule of
        `SyncHealth.problem_line`, from what the refreshes recorded: this machine's last write, each other
        machine's file as the ledger holds it, and `problems` (the health's (path, reason): a file refused
        before it was read, such as a symbolic link). `sync_health` (doctor's) reads every file's header, too
        slow for each rebuild of the menu."""
        sync_dir = self.settings.sync_dir
        if not sync_dir:
            return None
        from .sources.machine import EXT  # (as Sharing: the sharing code stays unloaded without a sync_dir)
        from .sync.share import MachineStatus, SyncHealth

        folder = paths.machines_dir(Path(sync_dir).expanduser())
        held = [MachineStatus(f.origin, f.name, f.path, False, problem=f.error) for f in self.ledger.machine_files()]
        held += [
            MachineStatus(Path(p).name.removesuffix(EXT), None, p, False, problem=why)
            for p, why in problems
            if Path(p).parent == folder
        ]
        return SyncHealth(sync_dir, problem=self.sharing.state().problem, machines=held).problem_line

    def models_seen(self) -> list[SeenModel]:
        """Every model the ledger has seen (all time), the unpriced first: `trayburn prices`, `doctor`."""
        from .pricing.show import seen  # (only `prices` and `doctor` list models)

        return seen(self.book, self.ledger.models_seen())

    def unpriced_models(self) -> list[SeenModel]:
        """The models some of whose calls have no reported cost and no known price (`doctor`); the ledger
        is read in full only when there are some."""
        from .pricing.show import seen

        routes = [r for r in self.ledger.no_cost_routes() if self.book.prices(*r) is None]
        return [m for m in seen(self.book, self.ledger.models_seen(routes)) if m.unpriced_calls]

    # ---- health ---------------------------------------------------------------------------------

    def check_integrity(self) -> str | None:
        """SQLite's full integrity check of the ledger (seconds on a large one): `doctor` runs it, the tray once
        a day. None when sound; else the reason, the damaged file moved aside and the ledger rebuilt from what it
        still yields and a refresh (the health's kind is `ledger_damaged` until the next check passes)."""
        self.integrity_problem = self.ledger.check_integrity()
        if self.integrity_problem is not None:
            self.refresh()
        return self.integrity_problem

    def health(self) -> Health:
        from .health import Health, kind_of

        live, removed = self.ledger.session_counts()
        # A file that failed within the last minute was most likely caught mid-write (normal: Cline
        # rewrites in place); it is retried at every refresh and reported only if it stays broken.
        rows = self.ledger.problems()
        problems = [(p.path, p.reason) for p in rows if not p.settling]
        recent = [(p.path, p.reason) for p in rows if p.settling]
        if self.last_refresh:
            known = {p.path for p in rows}
            problems += [(p, r) for p, r in self.last_refresh.errors.items() if p not in known]
        by_feed = self.ledger.live_by_feed()  # (one read: the kind and the sentence both ask it)
        tasks = {f: n for f, n in by_feed.items() if (f.startswith("tasks:") or f == "kilo") and n}
        kind, level = kind_of(
            self.fault.kind if self.fault is not None else None,  # one of the ledger_* kinds
            self.integrity_problem is not None,
            self.loaded.problem is not None,
            self.levels,
            bool(tasks),  # (editor tasks alone are data: the Cline CLI is optional)
            live,
        )
        if kind == "ok" and problems:
            kind = "file_problems"
        return Health(
            kind,
            self.levels,
            self.config_path,
            self.loaded.error,
            self.loaded.warnings,
            live,
            removed,
            sorted(problems),
            self._verdict(kind, level, live, tasks, by_feed.get(ClineCliSource.feed, 0)),
            kind == "ok",
            self.ledger.path,
            self.ledger.notice,
            settling=recent,
            problem_level=level,
            settings_problem=self.loaded.problem,
            ledger_fault=str(self.fault) if self.fault else None,
        )

    def _verdict(
        self, kind: HealthKind, level: paths.Level | None, sessions: int, tasks: Mapping[str, int], cli: int
    ) -> str:
        """The sentence for a person (the tray and doctor choose by `kind`, not by these words). `tasks`: the
        editor apps' live sessions by feed; `cli`: the Cline CLI's."""
        from .health import verdict
        from .sources.editor_tasks import places

        labels = {f"tasks:{app.name}": app.label for app in places.APPS} | {"kilo": "Kilo Code 7"}
        return verdict(
            kind,
            level,
            sessions,
            self.levels,
            self.config_path,
            fault=str(self.fault) if self.fault is not None else None,
            integrity=self.integrity_problem,
            notice=self.ledger.notice,
            settings_error=self.loaded.error,
            apps=[(labels.get(feed, feed), n) for feed, n in sorted(tasks.items())],
            cli_sessions=cli if tasks else 0,
        )

    def forget_listings(self) -> None:
        """What the refresh kept for the next one (the folders' listings and stats, the ledger's view of the
        files: 40 MB at 20,000 sessions), dropped: a command that refreshes once lists its figures lighter."""
        for source in self._cline.values():
            source.listings.close()
        self._cline.clear()
        self.ledger.forget_files()

    def close(self) -> None:
        self.ledger.close()
        for source in self._cline.values():
            source.listings.close()  # (its folder watches)


def by_source(got: HistoryReport) -> list[tuple[str, float | None]]:
    """(app, USD; None: unpriced) of a report by source, biggest first (the menu's by-app line)."""
    from .sources.editor_tasks.places import source_label

    pairs = [(source_label(r.key), r.cost_usd) for r in got.rows]
    return sorted(pairs, key=lambda pair: -(pair[1] or 0.0))


def _stamp(path: Path) -> Checkpoint | None:
    try:
        return stat_file(str(path))
    except OSError:
        return None
