"""What the tray's menu and the summary window's day view show, as frozen records, and when the clock alone
changes them.

- `DayFigures`: one day: its report, its sessions, its spend by machine and (for the window's chart) by hour.
- `Glance`: today's figures and what the menu shows beside them (this week, this month, the last hour and its
  first call, yesterday when today has none, the spend by app, how far the history is read, what is wrong with
  sharing, the demo, the pace of spend, the runaway sessions, the budgets set), with `stale_at_ms`: the next
  moment the clock alone changes one of them. A figure added
  here says in `changes_at` when it turns, or it has none: the tray's rebuild clock reads only the record.

`Engine.glance` builds a Glance (one call, from the ledger as it is); tray/view.build_view and window/views read
them and nothing else of the engine's figures.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from ..ledger import Ledger
from ..pricing import PriceBook
from ..sources.base import RETRY_RECENT_NS
from .budgets import BudgetState
from .burn import Burn, Runaway, projection_from_ms
from .costs import Totals
from .day import STALE_AFTER_MS, DayReport, SessionSummary, day_report, hourly_costs
from .day import sessions as day_sessions
from .history import MachinesReport
from .money import Money
from .periods import local_midnight_ms

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


def day_figures(
    ledger: Ledger, book: PriceBook, day: date, machines: MachinesReport, hourly: bool, report: DayReport | None = None
) -> DayFigures:
    """`machines`: the day's spend by machine (the engine names this machine); `hourly`: with the cost per hour;
    `report`: the day's, when already made."""
    hours = tuple(hourly_costs(ledger, book, day)) if hourly else ()
    sessions = tuple(day_sessions(ledger, book, day, day))
    return DayFigures(day, report or day_report(ledger, book, day), sessions, machines, hours)


def with_sessions(figures: DayFigures, ledger: Ledger, book: PriceBook) -> DayFigures:
    """The same day with its sessions read again (their states move with the clock; nothing else did)."""
    sessions = tuple(day_sessions(ledger, book, figures.day, figures.day))
    return DayFigures(figures.day, figures.report, sessions, figures.machines, figures.hourly, figures.burn)


def period_start(today: date, month: bool) -> date:
    """The first day of this week (Monday) or of this month."""
    return today.replace(day=1) if month else today - timedelta(days=today.weekday())


def first_call_ms(ledger: Ledger, start_ms: int, end_ms: int) -> int | None:
    """When the oldest counted call in [start, end) was made (epoch ms); None: there is none."""
    calls = ledger.export_calls(start_ms, end_ms)  # oldest first, a generator holding the ledger's lock
    try:
        first = next(calls, None)
    finally:
        getattr(calls, "close", lambda: None)()  # (the lock released now, not when the generator is collected)
    return first.ts_ms if first is not None else None


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
