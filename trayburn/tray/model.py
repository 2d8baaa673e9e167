"""What the tray shows, as plain data: built from the engine, turned into a menu by app.py.

No pystray here, so the view and the menu's entries can be built and read in any test.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..render import cost_cell, plural, shorten, usd
from ..report import DayReport, SessionSummary
from ..settings import REFRESH_CHOICES
from .label import IconState, format_cost

MAX_SESSIONS = 10
TOOLTIP_MAX = 120  # Windows refuses titles over 128 characters


@dataclass(frozen=True)
class Root:
    name: str  # cline_dir | data_dir | sessions_dir
    label: str
    path: str
    source: str  # settings (...) | CLINE_DIR | default
    exists: bool


@dataclass(frozen=True)
class TrayView:
    label: str
    state: IconState
    tooltip: str
    today: str
    top_model: str | None
    week: str
    month: str
    rate: str
    sessions: tuple[tuple[str, str], ...]  # (session id, menu text)
    problem: str | None
    first_run: bool
    roots: tuple[Root, ...]
    refresh_seconds: int
    budget: float | None
    theme: str
    budget_level: int  # 0, 80 or 100: the highest threshold crossed today


@dataclass
class Entry:
    """One menu entry: `action` names a TrayApp handler, `arg` its argument."""

    text: str
    action: str | None = None
    arg: object = None
    checked: bool | None = None
    radio: bool = False
    enabled: bool = True
    default: bool = False
    submenu: list[Entry] | None = None
    separator: bool = False


SEPARATOR = Entry("", separator=True)


def tilde(text: str | Path) -> str:
    """A path, or a sentence with paths in it, with the home folder written as ~."""
    home, text = os.path.expanduser("~"), str(text)
    if home in ("/", ""):
        return text
    return "~" if text == home else text.replace(home + os.sep, "~" + os.sep)


def session_text(s: SessionSummary) -> str:
    mark = "● " if s.running else ""
    cost = cost_cell(s.cost_usd, s.estimated_cost_usd, s.unpriced_calls, s.calls, compact=True)
    return f"{mark}{shorten(s.title, 48)} — {cost}"


def budget_level(cost: float, budget: float | None) -> int:
    if not budget:
        return 0
    return 100 if cost >= budget else 80 if cost >= 0.8 * budget else 0


def icon_state(first_run: bool, problem: str | None, level: int) -> IconState:
    if problem:
        return IconState.PROBLEM
    if first_run:
        return IconState.NO_DATA
    return {100: IconState.OVER, 80: IconState.WARN}.get(level, IconState.OK)


def day_cost(day: DayReport) -> str:
    """Plain dollars for the menu and tooltip (no marks to explain); "unpriced", never $0."""
    return "unpriced" if day.calls and day.unpriced_calls >= day.calls else usd(day.cost_usd)


def totals_cost(t) -> str:
    return "unpriced" if t.calls and t.unpriced_calls >= t.calls else usd(t.cost_usd)


def icon_label(day: DayReport, first_run: bool) -> str:
    if first_run:
        return format_cost(None)
    if day.calls and day.unpriced_calls >= day.calls:
        return "?"  # tokens but no price known: never "$0"
    return format_cost(day.cost_usd)


def tooltip(day: DayReport, first_run: bool, problem: str | None) -> str:
    if first_run:
        text = "trayburn · no Cline CLI data yet"
    else:
        text = f"trayburn · {day_cost(day)} today"
        if day.top_model:
            text += f" · {day.top_model.name}"
    if problem:
        text += " · needs attention"
    return shorten(text, TOOLTIP_MAX)


def menu(view: TrayView, has_default_action: bool, autostart: bool | None) -> list[Entry]:
    """The whole menu for a view. `autostart` None: start at login is not available here."""
    entries: list[Entry] = []
    if view.problem:
        entries += [Entry(f"⚠ {view.problem}", enabled=False)]
    if view.first_run:
        entries += [
            Entry("No Cline CLI data found yet", enabled=False),
            Entry("Choose Cline folder…", "choose_root", "cline_dir"),
            Entry("Open the demo", "demo"),
            SEPARATOR,
        ]
    elif view.problem:
        entries.append(SEPARATOR)
    entries += [
        Entry(view.today, "summary", default=has_default_action),
        *([Entry(view.top_model, "summary")] if view.top_model else []),
        Entry(view.week, enabled=False),
        Entry(view.month, enabled=False),
        Entry(view.rate, enabled=False),
        SEPARATOR,
        Entry("Today's sessions", submenu=_sessions(view)),
        Entry("Summary…", "summary"),
        SEPARATOR,
        Entry("Settings", submenu=settings_menu(view, autostart)),
        Entry("Refresh now", "refresh"),
        Entry("Quit trayburn", "quit"),
    ]
    return entries


def _sessions(view: TrayView) -> list[Entry]:
    if not view.sessions:
        return [Entry("No sessions today", enabled=False)]
    return [Entry(text, "open_session", sid) for sid, text in view.sessions]


def settings_menu(view: TrayView, autostart: bool | None) -> list[Entry]:
    roots = [
        Entry(f"{r.label}: {tilde(r.path)} ({r.source}){'' if r.exists else ' — missing'}", "choose_root", r.name)
        for r in view.roots
    ]
    overridden = any(r.source.startswith("settings") for r in view.roots)
    refresh = [
        Entry(_interval(s), "set_refresh", s, checked=view.refresh_seconds == s, radio=True) for s in REFRESH_CHOICES
    ]
    themes = [
        Entry(t.capitalize(), "set_theme", t, checked=view.theme == t, radio=True) for t in ("auto", "light", "dark")
    ]
    budget = f"Daily budget: {usd(view.budget)}…" if view.budget else "Daily budget: none…"
    out = roots + [
        Entry("Use environment and defaults", "reset_roots", enabled=overridden),
        SEPARATOR,
        Entry("Refresh every", submenu=refresh),
        Entry(budget, "set_budget"),
        Entry("Icon", submenu=themes),
    ]
    if autostart is not None:
        out.append(Entry("Start at login", "toggle_autostart", checked=autostart))
    out.append(Entry("Open settings file", "open_settings"))
    return out


def _interval(seconds: int) -> str:
    return f"{seconds} s" if seconds < 60 else f"{seconds // 60} min"


def build_view(
    engine, day: DayReport, sessions: list[SessionSummary], problem: str | None, first_run: bool
) -> TrayView:
    settings = engine.settings
    level = budget_level(day.cost_usd, settings.daily_budget)
    week, month, hour = engine.period(), engine.period(month=True), engine.last_hour()
    roots = tuple(Root(lv.name, lv.label, str(lv.path), lv.source(), lv.exists) for lv in engine.levels)
    return TrayView(
        label=icon_label(day, first_run),
        state=icon_state(first_run, problem, level),
        tooltip=tooltip(day, first_run, problem),
        today=f"Today: {day_cost(day)} · {plural(day.calls, 'call')}"
        + (f" · {day.unpriced_calls} unpriced" if day.unpriced_calls else ""),
        top_model=(
            f"Top model: {day.top_model.name} — "
            + cost_cell(
                day.top_model.cost_usd,
                day.top_model.estimated_cost_usd,
                day.top_model.unpriced_calls,
                day.top_model.calls,
                compact=True,
            )
        )
        if day.top_model
        else None,
        week=f"This week: {totals_cost(week)}",
        month=f"This month: {totals_cost(month)}",
        rate=f"Last hour: {totals_cost(hour)}/h",
        sessions=tuple((s.id, session_text(s)) for s in sessions[:MAX_SESSIONS]),
        problem=problem,
        first_run=first_run,
        roots=roots,
        refresh_seconds=settings.refresh_seconds,
        budget=settings.daily_budget,
        theme=settings.theme,
        budget_level=level,
    )


def problem_line(health) -> str | None:
    """The one plain sentence shown at the top of the menu, from the same checks as `doctor`."""
    if health.config_error:
        line = re.search(r"line (\d+)", health.config_error)
        where = f" at line {line.group(1)}" if line else ""
        return f"Settings file is broken{where}: {tilde(health.config_path)} (using defaults)"
    if not health.ok and health.sessions == 0 and "not installed" in health.verdict:
        return None  # first run: said by the first-run entries instead
    if not health.ok and "points to" in health.verdict:
        return tilde(health.verdict)
    if health.problems:
        n = len(health.problems)
        return f"{n} file{'s' if n > 1 else ''} could not be read (see trayburn doctor)"
    return None
