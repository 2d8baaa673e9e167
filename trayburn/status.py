"""`trayburn status`: today's spend and pace in one line for a status bar or a prompt (plain, JSON, Waybar,
polybar, i3blocks), once or (`--watch`) again whenever it changes; and `trayburn budget check`'s verdict.
Never imports a GUI toolkit and never speaks SQL: it reads the engine's figures.

`--watch` wakes as the tray does: the inotify `watch.Waker` on the sessions folders and today's sessions, else
at `refresh_seconds`, and when the clock alone changes the line (the rate fading, a minute on; midnight). It
prints only a line that differs from the last one, and reads the ledger as a warm `today` does.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import TYPE_CHECKING, TextIO

from . import watch
from .figures import budgets, periods
from .figures.budgets import OVER, WARN, BudgetState
from .figures.burn import Burn, Runaway, runaways
from .figures.glance import CLOCK_REBUILD_MS
from .figures.money import Money
from .words import pace_text, runaway_text

if TYPE_CHECKING:
    from .engine import Engine

FORMATS = ("plain", "json", "waybar", "polybar", "i3blocks")
COLOURS = {WARN: "#FFB300", OVER: "#D62828"}  # the tray icon's amber and red (tray/draw.py)
CLASSES = {0: "ok", WARN: "warn", OVER: "over"}


@dataclass(frozen=True)
class Status:
    """What a bar shows: today's spend, the pace, the budget nearest its end, the runaway sessions."""

    day: date
    spent_usd: float
    unpriced: bool  # every call of today is unpriced: the spend is unknown, never $0
    pace: Burn
    budget: BudgetState | None  # the highest level, then the largest share (None: no budget set)
    runaways: tuple[Runaway, ...]
    money: Money

    @property
    def level(self) -> int:
        return self.budget.level if self.budget else 0

    def text(self) -> str:
        """ "$3.35 · $0.80/h"; a "!" after it while a session runs away."""
        spent = "unpriced" if self.unpriced else self.money.cents(self.spent_usd)
        line = f"{spent} · {self.money.cents(self.pace.usd_per_hour)}/h"
        return line + (" !" if self.runaways else "")

    def tooltip(self) -> str:
        budget = f" · {budget_words(self.budget, self.money)}" if self.budget else ""
        lines = [f"Today {self.money.cents(self.spent_usd)}{budget}", pace_text(self.pace, self.money) or ""]
        cents = self.money.cents
        lines += [f"Runaway: {runaway_text(r, self.money)} · {cents(r.usd_per_hour)}/h" for r in self.runaways]
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {
            "date": self.day.isoformat(),
            "text": self.text(),
            "cost_usd": None if self.unpriced else round(self.spent_usd, 6),
            **self.pace.to_json(),
            "budget": self.budget.to_json() if self.budget else None,
            "state": CLASSES[self.level],
            "runaways": [r.to_json() for r in self.runaways],
        }


def budget_words(b: BudgetState, money: Money) -> str:
    """ "of $5.00 daily budget (82 %)"; "of project web's $5.00 daily budget (108 %)"."""
    whose = f"project {b.project}'s " if b.project else ""
    pct = "over 10×" if b.share > 10 else f"{b.share * 100:.0f} %"
    return f"{money.cents(b.spent_usd)} of {whose}{money.cents(b.budget_usd)} {b.which} budget ({pct})"


def build(engine: Engine, project: str | None = None, now_ms: int | None = None) -> Status:
    """The status as of now (or `now_ms`): today's totals, the pace, the budgets (`project`: that project's
    only), the runaways (today's sessions are read only while an alert is set)."""
    now = periods.utc_now_ms() if now_ms is None else now_ms
    today = periods.now_date()
    totals = engine.totals(today, today)
    pace = engine.pace(totals.cost_usd, now)
    return Status(
        today,
        totals.cost_usd,
        bool(totals.calls) and totals.unpriced_calls >= totals.calls,
        pace,
        budgets.worst(states(engine, today, totals.cost_usd, project)),
        _runaways(engine, today, pace),
        engine.money(),
    )


def states(engine: Engine, today: date, day_usd: float, project: str | None) -> list[BudgetState]:
    """Every budget set (the month read only with a monthly budget); with `project`, that project's only."""
    s = engine.settings
    if project is not None:
        spend = budgets.project_spend(engine.ledger, engine.book, today, [project])
        return budgets.per_project({project: s.project_budgets.get(project, {})}, spend)
    month = engine.period(month=True).cost_usd if s.monthly_budget else 0.0
    return engine.budgets(today, day_usd, month)


def _runaways(engine: Engine, today: date, pace: Burn) -> tuple[Runaway, ...]:
    s = engine.settings
    if not s.session_alert_usd and not s.rate_alert_usd_per_hour:
        return ()
    todays = engine.sessions(today, today)
    return runaways(engine.ledger, engine.book, todays, pace, s.session_alert_usd, s.rate_alert_usd_per_hour)


# ---- the formats ------------------------------------------------------------------------------------------------


def render(status: Status, fmt: str, watching: bool = False) -> str:
    """One line (i3blocks once: its three lines) in `fmt`, one of FORMATS."""
    if fmt == "plain":
        return status.text()
    if fmt == "json":
        return json.dumps(status.to_json(), ensure_ascii=False)
    if fmt == "waybar":
        return json.dumps(waybar(status), ensure_ascii=False)
    colour = COLOURS.get(status.level)
    if fmt == "polybar":  # %{F#rrggbb}…%{F-}: polybar's foreground tag; a "%" in the text is doubled
        text = status.text().replace("%", "%%")
        return f"%{{F{colour}}}{text}%{{F-}}" if colour else text
    short = "unpriced" if status.unpriced else status.money.cents(status.spent_usd)
    if watching:  # i3blocks' persist mode reads a JSON object a line (`format=json`)
        block = {"full_text": status.text(), "short_text": short} | ({"color": colour} if colour else {})
        return json.dumps(block, ensure_ascii=False)
    return "\n".join([status.text(), short] + ([colour] if colour else []))  # full text, short text, colour


def waybar(status: Status) -> dict:
    """Waybar's custom module with `"return-type": "json"`: `text`, `alt`, `tooltip`, `class` (a string or a
    list of them), `percentage` (a number; the budget's share spent, 0 to 100). Waybar reads text and tooltip
    as Pango markup: & < > are escaped."""
    classes = [CLASSES[status.level]] + (["runaway"] if status.runaways else [])
    share = status.budget.share if status.budget else 0.0
    return {
        "text": markup(status.text()),
        "alt": CLASSES[status.level],
        "tooltip": markup(status.tooltip()),
        "class": classes,
        "percentage": min(100, round(share * 100)) if math.isfinite(share) else 100,
    }


def markup(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# ---- --watch ----------------------------------------------------------------------------------------------------


def watch_lines(
    engine: Engine,
    fmt: str,
    project: str | None,
    out: TextIO = sys.stdout,
    stop: Callable[[], bool] = lambda: False,
) -> None:
    """Print the line, then a new one whenever it changes, until `stop()` or the output closes: woken by a
    session written (Linux inotify), by the clock when it alone changes the line, else at `refresh_seconds`."""
    waker = watch.waker()
    last, followed = None, None
    try:
        while not stop():
            changed = engine.refresh_day(periods.now_date(), 0.0).changed
            status = build(engine, project)
            line = render(status, fmt, watching=True)
            if line != last:
                out.write(line + "\n")
                out.flush()
                last = line
            timeout = _next_wake(engine, status)
            if waker is None:
                time.sleep(timeout)
                continue
            if changed or followed != status.day:  # (a new session, or the day turned: what to watch)
                waker.follow(engine.watch_folders(), _folders(engine, status.day))
                followed = status.day
            waker.wait(timeout)
    finally:
        if waker is not None:
            waker.close()


def _next_wake(engine: Engine, status: Status) -> float:
    """Seconds until the next look: the poll interval, a minute while the rate fades, midnight at the latest."""
    now = periods.utc_now_ms()
    midnight = periods.local_midnight_ms(status.day + timedelta(days=1))
    wait = engine.settings.refresh_seconds * 1000
    if status.pace.usd_per_hour > 0:
        wait = min(wait, CLOCK_REBUILD_MS)
    return max(0.5, min(wait, midnight - now + 500) / 1000)


def _folders(engine: Engine, today: date) -> list[str]:
    """Today's sessions' folders, the latest first: a write in one wakes the watch."""
    todays = engine.sessions(today, today)
    latest = sorted(todays, key=lambda s: s.last_activity_ms or 0, reverse=True)
    return [s.folder for s in latest if s.folder]
