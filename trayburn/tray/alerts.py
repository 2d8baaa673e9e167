"""What the tray tells once and remembers: a runaway session passing each of its alerts, a project's budget
reaching 80 % and 100 %; and the runaway sessions silenced from the menu. No pystray, no Pillow.

Remembered in the state folder (`paths.alerts_file`, written atomically, private), so a tray started again
never tells twice: a runaway once per alert (`spend`, `rate`) per session, a project budget once per level per
day (daily) or month (monthly). A notice is recorded as told only once it was really sent (as the daily budget's
is, `TrayApp._notify_budget`). The lines and messages are here too, beside what decides them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import date
from pathlib import Path

from .. import files
from ..figures.budgets import BudgetState
from ..figures.burn import SPEND, Runaway
from ..figures.glance import Glance
from ..figures.money import Money
from ..settings import Settings
from ..words import USD, minutes, runaway_text, shorten

log = logging.getLogger(__name__)
MAX_PROJECTS = 5  # project budget lines in the menu (the nearest their end)
KEPT = 500  # sessions remembered (told, silenced): the oldest forgotten past this
MAX_BYTES = 1 << 20


# ---- the words ----------------------------------------------------------------------------------------------


def runaway_line(r: Runaway, money: Money = USD) -> str:
    """ "Runaway: $4.12 in 20 min — fix-login-bug": the menu's top line (the notification says more)."""
    return f"Runaway: {money.cents(r.spend_usd)} in {minutes(r.minutes)} — {shorten(r.title, 32)}"


def runaway_message(r: Runaway, kind: str, alert: float, money: Money = USD) -> str:
    """ "$4.12 in 20 min on Claude Sonnet 4.5 — fix-login-bug (web), $12.36/h now: past your $4.00 session
    alert": the figures first (GNOME's message list shows one line of it)."""
    passed = f"{money.cents(alert)} session alert" if kind == SPEND else f"{money.cents(alert)}/h rate alert"
    return f"{runaway_text(r, money)}, {money.cents(r.usd_per_hour)}/h now: past your {passed}"


def project_line(b: BudgetState, money: Money = USD) -> str:
    """ "⚠ Project web: $4.10 of $5.00 daily budget (82 %)": marked from 80 %, as the icon is."""
    mark = "⚠ " if b.level else ""
    spent, budget = money.cents(b.spent_usd), money.cents(b.budget_usd)
    return f"{mark}Project {shorten(b.project or '', 24)}: {spent} of {budget} {b.which} budget ({b.percent})"


def project_message(b: BudgetState, money: Money = USD) -> str:
    """A project budget's notice, as the daily budget's: the spend, the budget passed and the share spent."""
    what = "passed" if b.level == 100 else "reached 80 % of"
    when = "today" if b.which == "daily" else "this month"
    spent, budget = money.cents(b.spent_usd), money.cents(b.budget_usd)
    return f"{spent} {when} on {b.project}: {what} its {budget} {b.which} budget ({b.percent})"


def nearest(budgets: tuple[BudgetState, ...]) -> list[BudgetState]:
    """The projects' budgets the menu lists: those nearest their end (or furthest past it) first."""
    return sorted((b for b in budgets if b.project), key=lambda b: -b.share)[:MAX_PROJECTS]


# ---- what was told ---------------------------------------------------------------------------------------------


class Alerts:
    """The runaways told and silenced, the project budgets told, as the state file holds them."""

    def __init__(self, path: Path):
        self.path = path
        self.logged: set[str] = set()  # notices logged already (shown or not): logged once a tray
        state = self._load()
        self.runaways: dict[str, list[str]] = _table(state.get("runaways"))
        self.silenced: list[str] = [s for s in state.get("silenced", []) if isinstance(s, str)]
        self.budgets: dict[str, list[int]] = _table(state.get("budgets"))

    def _load(self) -> dict:
        try:  # private state: never through a link, never unbounded (files.py)
            state = json.loads(files.read_file(self.path, MAX_BYTES, follow=False))
        except (OSError, ValueError):
            return {}
        return state if isinstance(state, dict) else {}

    def shown(self, figures: Glance) -> Glance:
        """The glance without the runaways silenced from the menu (what `build_view` is given)."""
        kept = tuple(r for r in figures.runaways if r.id not in self.silenced)
        return figures if kept == figures.runaways else replace(figures, runaways=kept)

    def silence(self, sid: str) -> None:
        if sid not in self.silenced:
            self.silenced = [*self.silenced, sid][-KEPT:]
            self._save()

    def due(self, figures: Glance, settings: Settings, today: date) -> list[tuple[str, str]]:
        """(key, message) of each notice not told yet: a runaway's alerts, then the projects' budgets."""
        out = []
        alerts = {SPEND: settings.session_alert_usd, "rate": settings.rate_alert_usd_per_hour}
        for r in self.shown(figures).runaways:
            for kind in r.crossed:
                alert = alerts.get(kind)
                if alert and kind not in self.runaways.get(r.id, []):
                    out.append((f"run|{r.id}|{kind}", runaway_message(r, kind, alert, figures.money)))
        for b in figures.budgets:
            if b.project and b.level and b.level not in self.budgets.get(_period_key(b, today), []):
                out.append((f"bud|{_period_key(b, today)}|{b.level}", project_message(b, figures.money)))
        return out

    def tell(self, figures: Glance, settings: Settings, today: date, send: Callable[[str], bool], up: bool) -> None:
        """Send what is due through `send` (True: shown), recording each as told once shown; `up`: a notifier
        is there (while it is not, a notice is logged once and kept for when it is)."""
        for key, message in self.due(figures, settings, today):
            if key in self.logged and not up:
                continue
            self.logged.add(key)
            if send(message):
                self._told(key)

    def _told(self, key: str) -> None:
        what, rest = key.split("|", 1)
        if what == "run":
            sid, kind = rest.rsplit("|", 1)
            self.runaways[sid] = [*self.runaways.get(sid, []), kind]
            self.runaways = dict(list(self.runaways.items())[-KEPT:])
        else:
            period, level = rest.rsplit("|", 1)
            month = period[:7]  # this month's keys kept, days and month alike: older ones are done with
            self.budgets = {k: v for k, v in self.budgets.items() if k.startswith(month)}
            self.budgets[period] = [*self.budgets.get(period, []), int(level)]
        self._save()

    def _save(self) -> None:
        state = {"runaways": self.runaways, "silenced": self.silenced, "budgets": self.budgets}
        try:
            files.atomic_write(self.path, json.dumps(state).encode())
        except OSError:
            log.exception("cannot record the alerts told in %s", self.path)


def _period_key(b: BudgetState, today: date) -> str:
    """ "2026-11-16|web|daily", "2026-11|web|monthly": a level told once in its day or month."""
    period = today.isoformat() if b.which == "daily" else f"{today:%Y-%m}"
    return f"{period}|{b.project}|{b.which}"


def _table(value: object) -> dict:
    return {k: list(v) for k, v in value.items() if isinstance(v, list)} if isinstance(value, dict) else {}
