"""What the tray's menu and the summary window's day view show, as frozen records, when the clock alone
changes them, and what a glance was made of, so that the next one reads only what changed.

- `DayFigures`: one day: its report, its sessions, its spend by machine and (for the window's chart) by hour.
- `Glance`: today's figures and what the menu shows beside them (this week, this month, the last hour and its
  first call, yesterday when today has none, the spend by app, how far the history is read, what is wrong with
  sharing, the demo, the pace of spend, the runaway sessions, the budgets set), with `stale_at_ms`: the next
  moment the clock alone changes one of them. A figure added
  here says in `changes_at` when it turns, or it has none: the tray's rebuild clock reads only the record.
- `Basis`: what a glance's figures were made of: today's calls priced in groups by (session, file, agent) with
  each session's row, and the parts before today of this week's, this month's and the budgeted projects' spend.
  `basis` keeps it while no call changed, reads again only the sessions a refresh changed when every call it
  changed is of today (`ledger.changes.Changes`), and everything otherwise (a call before today, the day or the
  time zone turned, other prices, another process's write); `today_figures` makes the day's figures of it. Today's
  figures are the sums of its sessions' groups, and the week's and month's the part before today plus today's, so
  a kept figure and one read afresh are the same sums (to a float's last places, added in another order).

`Engine.glance` builds a Glance (one call, from the ledger as it is); tray/view.build_view and window/views read
them and nothing else of the engine's figures.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import TYPE_CHECKING

from ..ledger import CostGroup, Ledger, SessionRow
from ..ledger.queries import SessionKeys
from ..pricing import PriceBook
from ..sources.base import RETRY_RECENT_NS
from .budgets import BudgetState
from .burn import Burn, HourCalls, Runaway, projection_from_ms
from .costs import Pricer, Totals
from .day import STALE_AFTER_MS, DayReport, SessionSummary, day_report, hourly_costs, newest_first, restated, summary
from .day import sessions as day_sessions
from .history import HistoryReport, MachinesReport, machines_between, report, report_from
from .money import Money
from .periods import Period, day_bounds, local_midnight_ms

if TYPE_CHECKING:
    from ..ledger.changes import Changes

HOUR_MS = 3600_000
CLOCK_REBUILD_MS = 60_000  # the clock alone changes a glance at most once a minute (the menu's text is timed so)


@dataclass(frozen=True)
class DayFigures:
    """One day as the menu and the window's day view show it."""

    day: date
    report: DayReport
    sessions: tuple[SessionSummary, ...]  # newest first
    machines: MachinesReport  # the day's spend by machine (`menu_line`: None while no other machine is held)
    hourly: tuple[float, ...] = ()  # USD per local hour (24): the window's chart; empty where none is shown
    burn: Burn | None = None  # the pace now (figures/burn.py): today only


@dataclass(frozen=True)
class Glance:
    """Everything the tray's menu shows, as of `built_ms`; stale from `stale_at_ms` on (or when the data,
    the settings or the health change, or the day turns)."""

    day: DayFigures  # today's
    week: Totals  # Monday to the end of today
    month: Totals  # the 1st to the end of today
    last_hour: Totals
    hour_first_ms: int | None  # when the last hour's oldest counted call was made; None: it has none
    yesterday: DayReport | None  # only when today has no calls yet (the menu then says what yesterday cost)
    by_source: tuple[tuple[str, float | None], ...]  # today's (app label, USD; None: unpriced), biggest first
    money: Money  # how amounts are written (the settings' currency and rate)
    progress: tuple[int, int] | None  # (sessions read, sessions in all) while the history is being read
    demo: bool  # the demo's replayed sessions
    sync_problem: str | None  # what is wrong with sharing through sync_dir (None: nothing, or not sharing)
    built_ms: int
    stale_at_ms: int  # the next moment the clock alone changes a figure above (at most the next midnight)
    runaways: tuple[Runaway, ...] = ()  # running sessions past `session_alert_usd` / `rate_alert_usd_per_hour`
    budgets: tuple[BudgetState, ...] = ()  # every budget set: daily, monthly, each project's
    basis: Basis | None = field(default=None, compare=False, repr=False)  # what it was made of (the next glance's)


def day_figures(
    ledger: Ledger, book: PriceBook, day: date, machines: MachinesReport, hourly: bool, report: DayReport | None = None
) -> DayFigures:
    """`machines`: the day's spend by machine (the engine names this machine); `hourly`: with the cost per hour;
    `report`: the day's, when already made."""
    hours = tuple(hourly_costs(ledger, book, day)) if hourly else ()
    sessions = tuple(day_sessions(ledger, book, day, day))
    return DayFigures(day, report or day_report(ledger, book, day), sessions, machines, hours)


@dataclass(frozen=True)
class Basis:
    """What a glance's figures were made of (see the module's docstring). Never changed once made: `basis`
    makes a new one from it."""

    day: date
    bounds_ms: tuple[int, int]  # the day's [start, end) as local time then said (a time zone changed: read again)
    book: PriceBook  # the prices it was priced by (settings read again, a new book: read again)
    projects: frozenset[str]  # the projects with a budget, whose month before today is in `projects_before`
    rows: Mapping[str, SessionRow]  # today's sessions (`Ledger.sessions_between`), in the ledger's order
    groups: Mapping[str, tuple[CostGroup, ...]]  # today's counted calls by session, in groups by (session, file, agent)
    priced: Mapping[str, tuple[Totals, ...]]  # each of those groups priced (`Totals.add`), once
    summaries: Mapping[str, SessionSummary]  # today's figures of each session of `rows`, as of `at_ms`
    week_before: Totals  # this week's calls before today (none on a Monday)
    month_before: Totals
    projects_before: Mapping[str, Totals]  # this month's before today, of each project of `projects` with some
    yesterday: DayReport | None = None  # read when today has no calls (the menu then says what yesterday cost)
    hour: HourCalls | None = None  # the pace's calls, kept while no call changed
    whole: Mapping[str, SessionSummary] = field(default_factory=dict)  # running sessions, all their calls (runaways)


def basis(
    ledger: Ledger,
    book: PriceBook,
    day: date,
    projects: frozenset[str],
    kept: Basis | None = None,
    changes: Changes | None = None,
) -> Basis:
    """Today's basis: `kept` as it is when nothing changed since it was made (`changes` empty), with the sessions
    `changes` names read again when every call it changed is of `day`; read whole otherwise (`changes` None:
    unknown)."""
    bounds = day_bounds(day)
    if (
        kept is None
        or changes is None
        or (kept.day, kept.bounds_ms, kept.projects) != (day, bounds, projects)
        or kept.book is not book
        or (changes.earliest_ms is not None and changes.earliest_ms < bounds[0])
    ):
        return _read(ledger, book, day, bounds, projects)
    if changes.none:
        return kept
    return _reread(kept, ledger, changes.sessions)


def _read(ledger: Ledger, book: PriceBook, day: date, bounds: tuple[int, int], projects: frozenset[str]) -> Basis:
    start, end = bounds
    pricer = Pricer(ledger, book)
    found: dict[str, list[CostGroup]] = {}
    for g in pricer.groups(start, end, by=("session", "file", "agent")):
        found.setdefault(g.by[0], []).append(g)
    rows = {m.id: m for m in ledger.sessions_between(start, end)}
    week, month = (local_midnight_ms(period_start(day, m)) for m in (False, True))
    before = {}
    if projects and month < start:  # (a budgeted project's month: `report --by project`'s rule)
        got = report(ledger, book, Period(period_start(day, True), day - timedelta(days=1), "month"), by="project")
        before = {g.key: g.totals for g in got.rows if g.key in projects}
    return Basis(
        day,
        bounds,
        book,
        projects,
        rows,
        {sid: tuple(gs) for sid, gs in sorted(found.items())},
        {sid: _priced(gs, pricer) for sid, gs in sorted(found.items())},
        {sid: summary(m, found.get(sid, ()), pricer, start) for sid, m in rows.items()},
        pricer.totals(week, start) if week < start else Totals(),
        pricer.totals(month, start) if month < start else Totals(),
        before,
    )


def _reread(kept: Basis, ledger: Ledger, sessions: Iterable[str]) -> Basis:
    """`kept` with these sessions of today read again, each by itself (its calls by the ledger's session index);
    one that no longer has a call of today (nor started today, here) leaves it."""
    start, end = kept.bounds_ms
    pricer = Pricer(ledger, kept.book)
    rows, groups, summaries = dict(kept.rows), dict(kept.groups), dict(kept.summaries)
    priced = dict(kept.priced)
    whole = {sid: s for sid, s in kept.whole.items() if sid not in sessions}
    for sid in sessions:
        found = tuple(pricer.groups(start, end, by=("session", "file", "agent"), session_id=sid))
        row = ledger.session(sid)
        if found:
            groups[sid], priced[sid] = found, _priced(found, pricer)
        else:
            groups.pop(sid, None)
            priced.pop(sid, None)
        if row is not None and (found or _started_here(row, start, end)):  # `Ledger.sessions_between`'s rule
            rows[sid] = row  # (one already there keeps its place, a new one comes last, as the ledger lists them)
            summaries[sid] = summary(row, found, pricer, start)
        else:
            rows.pop(sid, None)
            summaries.pop(sid, None)
    return Basis(
        kept.day,
        kept.bounds_ms,
        kept.book,
        kept.projects,
        rows,
        dict(sorted(groups.items())),
        dict(sorted(priced.items())),
        summaries,
        kept.week_before,
        kept.month_before,
        kept.projects_before,
        kept.yesterday,
        None,
        whole,
    )


def _priced(groups: Iterable[CostGroup], pricer: Pricer) -> tuple[Totals, ...]:
    """Each group's Totals (priced once: today's figures add them up in several ways)."""
    out = []
    for g in groups:
        one = Totals()
        one.add(g, pricer)
        out.append(one)
    return tuple(out)


def _started_here(row: SessionRow, start_ms: int, end_ms: int) -> bool:
    """This machine's session started in [start, end) (listed on its day even before it has a call)."""
    return row.origin is None and row.started_ms is not None and start_ms <= row.started_ms < end_ms


@dataclass(frozen=True)
class Today:
    """The figures of today a `Basis` gives (`today`)."""

    report: DayReport
    sessions: tuple[SessionSummary, ...]  # newest first
    machines: MachinesReport
    totals: Totals  # today's, as the week's and the month's part of today
    by_source: HistoryReport
    by_project: HistoryReport | None  # only with a budgeted project


def sessions_at(b: Basis, now_ms: int) -> tuple[SessionSummary, ...]:
    """Today's sessions of a basis as the clock shows them at `now_ms`, newest first."""
    return tuple(newest_first([restated(s, now_ms) for s in b.summaries.values()]))


def today_figures(b: Basis, ledger: Ledger, machine_name: str, now_ms: int) -> Today:
    """Today's figures from its basis: the day's report, its sessions as the clock shows them at `now_ms`, the
    spend by machine, by app and (with a project's budget) by project, all from the same priced groups."""
    pricer = Pricer(ledger, b.book)
    priced = [(sid, g, one) for sid, gs in b.groups.items() for g, one in zip(gs, b.priced[sid], strict=True)]
    groups = [g for _, g, _ in priced]
    origins = {sid: m.origin for sid, m in b.rows.items()}
    by_origin = [rekeyed(g, (origins.get(sid),)) for sid, g, _ in priced]
    machines = machines_between(ledger, b.book, *b.bounds_ms, machine_name, (pricer, by_origin))
    totals = merged(*(one for _, _, one in priced))
    keys = {
        sid: SessionKeys(sid, m.workspace_root, m.cwd, m.source, m.title, m.prompt, m.origin)
        for sid, m in b.rows.items()
    }
    period = Period(b.day, b.day, "day")
    return Today(
        day_report(ledger, b.book, b.day, (pricer, groups), len(b.groups)),
        sessions_at(b, now_ms),
        machines,
        totals,
        report_from(priced, keys, period, "source", pricer),
        report_from(priced, keys, period, "project", pricer) if b.projects else None,
    )


def rekeyed(g: CostGroup, by: tuple) -> CostGroup:
    """The same group under other `by` values (`_replace`'s, a tenth of its cost: a busy day has thousands)."""
    return tuple.__new__(CostGroup, (g.route, g.band, by, g.at_ms, g.sums, g.floored_input, g.last_ms))


def merged(*parts: Totals) -> Totals:
    """A new Totals of these added up (the week: its days before today, then today)."""
    out = Totals()
    for t in parts:
        out.merge(t)
    return out


def period_start(today: date, month: bool) -> date:
    """The first day of this week (Monday) or of this month."""
    return today.replace(day=1) if month else today - timedelta(days=today.weekday())


def changes_at(
    now_ms: int,
    today: date,
    hour_first_ms: int | None,
    sessions: Iterable[SessionSummary],
    settling: Sequence[object] = (),
    runaways: Sequence[Runaway] = (),
) -> int:
    """When the clock alone next changes something a glance built at `now_ms` shows (epoch ms):

    - the day, the week and the month, at the next local midnight (never later);
    - the "Last hour" line, when its oldest call (`hour_first_ms`) leaves the hour, and the burn rate, which
      fades while the hour holds a call (a minute on, the floor below); today's projection, when it is first made;
    - a runaway session that stops calling, when it no longer counts as running;
    - a running session's "●", when it has been silent for `STALE_AFTER_MS` (it is shown as stale then);
    - a file that failed while being written (`settling`: the health's), once it is no longer retried as one
      caught mid-write: a problem named at the top from then on.

    Apart from midnight, never sooner than a minute after `now_ms`: a busy hour costs at most one rebuild a minute."""
    midnight = local_midnight_ms(today + timedelta(days=1))
    times = [now_ms] if hour_first_ms is not None else []  # the rate fades: at the floor
    times += [at for at in [projection_from_ms(today)] if at > now_ms]
    times += [r.until_ms for r in runaways if r.until_ms is not None]
    times += [s.last_activity_ms + STALE_AFTER_MS for s in sessions if s.running and s.last_activity_ms]
    if settling:
        times.append(now_ms + RETRY_RECENT_NS // 10**6)
    return min(midnight, max(min(times), now_ms + CLOCK_REBUILD_MS)) if times else midnight
