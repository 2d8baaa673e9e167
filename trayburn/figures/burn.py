"""Spend per hour now, where today ends at this pace, and the running sessions that spend past an alert.
Never speaks SQL (the ledger's `export_calls` does) and never says a projection as a forecast.

- The burn rate (`rate`): the last hour's calls, each weighted by how recent it is, e^(−age / 30 min), and the
  weighted sum divided by the weight's own integral over the hour (0.43 h). A steady spend of $X/h reads as $X/h;
  a call leaves the figure gradually instead of falling off an hour's edge; one call of $c moves it by at most
  2.3 × $c/h, against 60 × $c/h for the spend of the last minute. Each call is priced as the export prices it
  (`Pricer.call`): a call without a price and a plan's call add nothing.
- The projection (`projected`): today's spend plus the rate over the hours left to local midnight, "at this
  pace". None before `PROJECT_FROM_H` hours of the day have passed: earlier, more than three quarters of the day
  is still ahead and a few minutes' pace multiplied by 18 hours or more says nothing.
- Runaways (`runaways`): a session still running (its manifest says so and it spoke in the last 30 minutes, or
  it made a call in the last `ACTIVE_MS`) whose whole spend passes `session_alert_usd` or whose own rate passes
  `rate_alert_usd_per_hour`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime, timedelta
from typing import NamedTuple

from ..ledger import ALL_TIME, Ledger
from ..pricing import PriceBook
from .costs import Pricer
from .day import SessionSummary, restated, summaries
from .periods import local_midnight_ms

HOUR_MS = 3600_000
TAU_MS = 30 * 60_000  # how fast a call's weight fades: e^(−age / TAU)
WINDOW_MS = HOUR_MS  # calls older than this weigh nothing
NORM_H = TAU_MS * (1 - math.exp(-WINDOW_MS / TAU_MS)) / HOUR_MS  # ∫ weight over the window, in hours (0.432)
PROJECT_FROM_H = 6  # hours of the local day gone before a projection is made
ACTIVE_MS = 5 * 60_000  # a session with a call this recent is running, whatever its manifest says
SPEND, RATE = "spend", "rate"  # the two alerts a runaway can pass


def weight(age_ms: float) -> float:
    """A call's weight in the rate by its age: 1 now (or younger: made during the minute `burn` rounds to),
    e^-1 at 30 minutes, 0 past the hour."""
    return math.exp(-max(0.0, age_ms) / TAU_MS) if age_ms <= WINDOW_MS else 0.0


def rate(calls: Iterable[tuple[int, float]], now_ms: int) -> float:
    """USD per hour now from (epoch ms, USD) calls (those outside the last hour weigh nothing)."""
    return sum(usd * weight(now_ms - ts) for ts, usd in calls) / NORM_H


def projected(spent_usd: float, rate_usd_per_hour: float, now_ms: int, today: date) -> float | None:
    """Today's spend plus the rate until local midnight; None before PROJECT_FROM_H hours of the day passed."""
    start, midnight = local_midnight_ms(today), local_midnight_ms(today + timedelta(days=1))
    if now_ms - start < PROJECT_FROM_H * HOUR_MS:
        return None
    return spent_usd + rate_usd_per_hour * max(0, midnight - now_ms) / HOUR_MS


def projection_from_ms(today: date) -> int:
    """When today's projection is first made (epoch ms): PROJECT_FROM_H hours after local midnight."""
    return local_midnight_ms(today) + PROJECT_FROM_H * HOUR_MS


class Burn(NamedTuple):
    """Today's pace as of `at_ms`."""

    usd_per_hour: float
    projected_day_usd: float | None  # None: too early in the day (PROJECT_FROM_H)
    by_session: tuple[tuple[str, float], ...]  # each session's own rate (USD/h), those with calls in the hour
    at_ms: int

    def session_rate(self, sid: str) -> float:
        return next((r for s, r in self.by_session if s == sid), 0.0)

    def to_json(self) -> dict:
        proj = self.projected_day_usd
        return {
            "burn_usd_per_hour": round(self.usd_per_hour, 6),
            "projected_day_usd": None if proj is None else round(proj, 6),
        }


class HourCalls(NamedTuple):
    """The counted calls from `since_ms` on (those stamped later than now included), oldest first, each as
    (session id, epoch ms, USD) priced as the export prices it: what the pace is worked out from. Kept while no
    call changes: a minute later the pace reads the same calls over a window moved on (`Engine.glance`)."""

    since_ms: int
    calls: tuple[tuple[str, int, float], ...]

    def between(self, start_ms: int, end_ms: int) -> list[tuple[str, int, float]]:
        """Those made in [start, end), oldest first."""
        return [c for c in self.calls if start_ms <= c[1] < end_ms]


def hour_calls(ledger: Ledger, book: PriceBook, since_ms: int) -> HourCalls:
    """The counted calls from `since_ms` on, priced one by one: each call weighs by its own age in the rate, so
    they are never summed before (a call of no price adds nothing)."""
    pricer = Pricer(ledger, book)
    out = []
    for c in ledger.export_calls(since_ms, ALL_TIME[1]):  # (a generator: the lock held while read)
        cost = pricer.call(c, c.session_provider).cost_usd
        out.append((c.session_id, c.ts_ms, cost or 0.0))
    return HourCalls(since_ms, tuple(out))


def minute_of(now_ms: int) -> int:
    """The start of `now_ms`'s minute: the moment the pace is worked out as of."""
    return now_ms - now_ms % 60_000


def burn(
    ledger: Ledger, book: PriceBook, now_ms: int, today: date, spent_usd: float, calls: HourCalls | None = None
) -> Burn:
    """Today's pace from the last hour's calls; `spent_usd`: today's spend so far. Worked out as of the start
    of `now_ms`'s minute (every call made until `now_ms` counted, those of this minute at full weight), so the
    clock alone changes it once a minute, as the menu's other lines. `calls`: the calls read before, when none
    changed since and they reach back an hour before that minute (else they are read now)."""
    at = minute_of(now_ms)
    if calls is None or calls.since_ms > at - WINDOW_MS:
        calls = hour_calls(ledger, book, at - WINDOW_MS)
    window = calls.between(at - WINDOW_MS, now_ms + 1)
    overall = rate(((ts, usd) for _, ts, usd in window), at)
    mine: dict[str, list[tuple[int, float]]] = {}
    for sid, ts, usd in window:
        mine.setdefault(sid, []).append((ts, usd))
    by_session = tuple(sorted((sid, rate(c, at)) for sid, c in mine.items()))
    return Burn(overall, projected(spent_usd, overall, at, today), by_session, at)


# ---- runaways -------------------------------------------------------------------------------------------------


class Runaway(NamedTuple):
    """A running session past an alert: what the notification and the menu's top line say of it."""

    id: str
    title: str
    project: str | None
    model: str | None  # its model as people name it (the first of its models)
    spend_usd: float  # the whole session's, across days
    minutes: int  # since it started
    usd_per_hour: float  # its own rate now
    crossed: tuple[str, ...]  # SPEND and/or RATE
    until_ms: int | None  # when it stops running if it makes no other call (None: its manifest says running)

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "title": self.title,
            "project": self.project,
            "model": self.model,
            "spend_usd": round(self.spend_usd, 6),
            "minutes": self.minutes,
            "usd_per_hour": round(self.usd_per_hour, 6),
            "crossed": list(self.crossed),
        }


def live(s: SessionSummary, now_ms: int) -> bool:
    """Still running: its manifest says so (and it spoke in the last 30 minutes), or it called just now."""
    return s.running or bool(s.last_activity_ms and now_ms - s.last_activity_ms < ACTIVE_MS)


def runaways(
    ledger: Ledger,
    book: PriceBook,
    todays: Sequence[SessionSummary],
    pace: Burn,
    spend_alert: float | None,
    rate_alert: float | None,
    whole: dict[str, SessionSummary] | None = None,
) -> tuple[Runaway, ...]:
    """Today's running sessions past `spend_alert` (USD, the whole session) or `rate_alert` (USD/h); none
    while neither is set. A session's whole spend is read only for those running (a few), each by itself;
    `whole`: by session id, those read before for sessions none of whose calls changed since (`Engine.glance`
    keeps it), and those read now are added to it."""
    if not spend_alert and not rate_alert:
        return ()
    now = pace.at_ms
    running = [s for s in todays if live(s, now) and not s.removed]
    if not running:
        return ()
    spent = whole_spend(ledger, book, running, now, whole)
    if whole is not None:
        whole.update(spent)
    out = []
    for s in running:
        full = spent.get(s.id, s)
        own = pace.session_rate(s.id)
        crossed = tuple(
            kind
            for kind, value, alert in ((SPEND, full.cost_usd, spend_alert), (RATE, own, rate_alert))
            if alert and value >= alert
        )
        if crossed:
            out.append(_runaway(full, own, crossed, now))
    return tuple(sorted(out, key=lambda r: -r.spend_usd))


def whole_spend(
    ledger: Ledger,
    book: PriceBook,
    sessions: Iterable[SessionSummary],
    now_ms: int,
    kept: Mapping[str, SessionSummary] | None = None,
) -> dict[str, SessionSummary]:
    """These sessions' figures over all their calls (across days), as of `now_ms`: each read by itself (its own
    calls, by the ledger's session index), or taken from `kept`."""
    pricer, out = Pricer(ledger, book), {}
    for s in sessions:
        if kept is not None and s.id in kept:
            out[s.id] = restated(kept[s.id], now_ms)
            continue
        meta = ledger.session(s.id)
        if meta is not None:
            out[s.id] = summaries(pricer, [meta], *ALL_TIME, now_ms, session_id=s.id)[0]
    return out


def _runaway(s: SessionSummary, own: float, crossed: tuple[str, ...], now_ms: int) -> Runaway:
    started = int(datetime.fromisoformat(s.started_at).timestamp() * 1000) if s.started_at else None
    minutes = max(0, (now_ms - started) // 60_000) if started else 0
    until = None if s.running else (s.last_activity_ms or now_ms) + ACTIVE_MS
    model = s.models[0] if s.models else None
    return Runaway(s.id, s.title, s.project, model, s.cost_usd, minutes, own, crossed, until)
