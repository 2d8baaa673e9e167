"""What the tray shows, as plain data: the view of the engine's glance, the menu's entries, the icon's label and state.

No Pillow and no pystray here, so the view and the menu can be built and read in any test; `app` turns the
entries into pystray's menu and `draw` the label into an icon.

- `build_view` makes a `TrayView` from a `Glance` (`Engine.glance`: the figures, and when the clock alone changes
  them), the settings and the health; `menu` lists its `Entry`s (an action names a TrayApp
  handler); `tooltip` and `freshness` are added by the app, which knows the time.
- The lines under today's (the spend across machines and across apps, the models with no price, what is wrong
  with sharing) are None when there is nothing to say, so the menu shows only what applies. What a plan covered
  is `words.plan_text`, shared with the CLI and the window.
- `problem_line`: the one line at the top of the menu when something is wrong, chosen by the health's kind
  (`Health.kind`: ok, settings_broken, override_missing, not_installed, no_sessions_folder,
  sessions_not_a_folder, no_sessions, the ledger's faults); the words are the tray's own.
- The icon's label: today's cost in at most 4 characters (`format_cost`, `format_money`), and the `IconState`
  that colours it.
"""

from __future__ import annotations

import enum
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..figures.budgets import level as budget_level_of
from ..figures.costs import Totals
from ..figures.day import DayReport, SessionSummary
from ..figures.glance import Glance
from ..figures.money import Money
from ..settings import Settings, menu_choices
from ..sources.editor_tasks.places import menu_line
from ..words import NOT_PAID, USD, pace_text, plan_text, plural, progress_text, shorten
from .alerts import nearest, project_line, runaway_line

if TYPE_CHECKING:
    from ..health import Health
# ---- the view and its menu ---------------------------------------------------------------------------------------

MAX_SESSIONS = 10
TOOLTIP_MAX = 120  # Windows refuses titles over 128 characters
DEMO_LINE = "Demo: recorded sessions replayed as today"
SILENCE = "    Silence alerts for this session"


@dataclass(frozen=True)
class Root:
    """One of the folders the sessions are found through, as the menu shows it."""

    name: str  # cline_dir | data_dir | sessions_dir
    label: str
    path: str
    source: str  # settings (...) | CLINE_DIR | default
    exists: bool


@dataclass(frozen=True)
class TrayView:
    """Everything the tray shows, as text and an icon state, built from typed figures."""

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
    yesterday: str | None = None  # "Yesterday: $X", when today has no calls yet
    more_sessions: int = 0  # today's sessions not in the menu
    demo: bool = False
    hour_live: bool = False  # calls in the last hour: the "Last hour" line changes as they leave it
    updated: str = ""  # "Updated just now", "Updated 5 min ago — refresh failing"
    stale: bool = False  # the figures are old: refreshes fail or stopped
    budget_text: str | None = None  # "$0.33 of $0.40 budget (82 %)"
    cost_text: str = ""  # today's cost as the menu says it: "$0.33", "unpriced"
    budget_pct: int | None = None  # today's share of the daily budget
    money: Money = USD  # how the amounts above are written (the settings' currency and rate)
    plan: str | None = None  # "ClinePass: 4 calls, $1.23 of API value included" (never in the spend)
    machines: str | None = None  # "Today $4.20 on 3 machines (this one $1.10)"
    sources: str | None = None  # "CLI $1.20 · VS Code $3.40": today by app, when more than one has spend
    unpriced: str | None = None  # "2 calls unpriced: acme-1 — add a price in settings"
    sharing: str | None = None  # sync_dir, when set: the settings name it and offer "Stop sharing"
    progress: str | None = None  # "Reading history: 4,120 of 20,000 sessions" (today's figures are complete)
    pace: str | None = None  # "$0.80/h now · at this pace about $12.40 by midnight"
    runaways: tuple[tuple[str, str], ...] = ()  # (session id, "Runaway: $4.12 in 20 min on … — title")
    projects: tuple[str, ...] = ()  # "⚠ Project web: $4.10 of $5.00 daily budget (82 %)", nearest its end first


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


def session_text(s: SessionSummary, money: Money = USD) -> str:
    mark = "● " if s.running else ""
    cost = _cost(money, s.cost_usd, s.estimated_cost_usd, s.unpriced_calls, s.calls)
    return f"{mark}{shorten(s.title, 40)} — {cost}"


def budget_level(cost: float, budget: float | None) -> int:
    return budget_level_of(cost, budget)  # (figures/budgets.py: the one rule)


def icon_state(first_run: bool, problem: str | None, level: int) -> IconState:
    if problem:
        return IconState.PROBLEM
    if first_run:
        return IconState.NO_DATA
    return {100: IconState.OVER, 80: IconState.WARN}.get(level, IconState.OK)


def day_cost(day: DayReport, money: Money = USD) -> str:
    """A plain amount for the menu and tooltip (no marks to explain); "unpriced", never $0."""
    return totals_cost(day, money)


def totals_cost(t: Totals | DayReport, money: Money = USD) -> str:
    return "unpriced" if t.calls and t.unpriced_calls >= t.calls else amount(money, t.cost_usd)


def icon_label(day: DayReport, first_run: bool, money: Money = USD) -> str:
    if first_run:
        return format_cost(None)
    if day.calls and day.unpriced_calls >= day.calls:
        return "?"  # tokens but no price known: never "$0"
    if money.converts:
        return format_money(money.amount(day.cost_usd), money.symbol)
    return format_cost(day.cost_usd)


def tooltip(view: TrayView) -> str:
    """Today's cost, the top model and the last refresh, for every backend that shows one."""
    if view.first_run:
        text = "trayburn · no Cline CLI data yet"
    else:
        text = f"trayburn · {view.cost_text} today"
        if view.top_model:
            text += f" · {view.top_model.removeprefix('Top model: ').split(' — ')[0]}"
    if view.problem:
        text += " · needs attention"
    if view.updated:
        text += f" · {view.updated[0].lower()}{view.updated[1:]}"
    return shorten(text, TOOLTIP_MAX)


def budget_text(cost: float, budget: float | None, money: Money = USD) -> str | None:
    """ "$0.33 of $0.40 budget (82 %)": the budget in sight, with how much of it is spent."""
    if not budget:
        return None
    return f"{amount(money, cost)} of {amount(money, budget)} budget ({percent(cost, budget)})"


def share(cost: float, budget: float) -> int:
    return round(100 * cost / budget)


def percent(cost: float, budget: float) -> str:
    """ "82 %"; "over 10×" past ten times the budget (never "103281 %")."""
    pct = share(cost, budget)
    return "over 10×" if pct > 1000 else f"{pct} %"


def freshness(age_s: float | None, refresh_s: int, failing: bool) -> tuple[str, bool]:
    """("Updated …", stale) from the age of the last good refresh. Stale: older than three
    intervals (at least 90 s), i.e. refreshes fail or stopped. Changes at most once a minute."""
    if age_s is None:
        return ("Not updated yet" + (" — refresh failing" if failing else ""), failing)
    stale = age_s > max(90, 3 * refresh_s)
    minutes = int(age_s // 60)
    when = "just now" if minutes < 1 or not stale else f"{minutes} min ago"
    text = f"Updated {when}"
    if stale or failing:
        text += " — refresh failing" if failing else " — refresh stopped"
    return text, stale


def budget_message(view: TrayView) -> str:
    """The notification: the spend, the budget it passed and the share spent, never only the spend."""
    what = "passed" if view.budget_level == 100 else "reached 80 % of"
    budget = amount(view.money, view.budget)
    pct = "over 10×" if (view.budget_pct or 0) > 1000 else f"{view.budget_pct} %"
    # the figures first: GNOME's message list shows one line of it ("$0.33 today: passed your $0.30 daily…")
    return f"{view.cost_text} today: {what} your {budget} daily budget ({pct})"


def menu(view: TrayView, has_default_action: bool, autostart: bool | None) -> list[Entry]:
    """The whole menu for a view. `autostart` None: start at login is not available here."""
    entries: list[Entry] = []
    if view.problem:
        entries += [Entry(f"⚠ {view.problem}", enabled=False)]
    for sid, text in view.runaways:  # a session running away: named first, until it ends or is silenced
        entries += [Entry(f"⚠ {text}", "open_session", sid), Entry(SILENCE, "silence_runaway", sid)]
    if view.demo:
        entries.append(Entry(DEMO_LINE, enabled=False))
    if not has_default_action:  # no primary click (appindicator without "activate"): the first item
        entries.append(Entry("Open summary", "summary", default=True))
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
        *[Entry(line, "summary") for line in (view.sources, view.machines, view.plan) if line],
        *([Entry(view.unpriced, "open_settings")] if view.unpriced else []),
        *([Entry(view.yesterday, "summary")] if view.yesterday else []),
        *([Entry(view.top_model, "summary")] if view.top_model else []),
        Entry(so_far(view.week, view.progress), "summary_period", "week"),
        Entry(so_far(view.month, view.progress), "summary_period", "month"),
        Entry(view.rate, "summary"),  # a figure like the others (greyed, it looked disabled)
        *([Entry(view.pace, "summary")] if view.pace else []),
        *[Entry(line, "summary_period", "month") for line in view.projects],
        *([Entry(view.progress, enabled=False)] if view.progress else []),
        Entry(("⚠ " if view.stale else "") + view.updated, "refresh") if view.updated else SEPARATOR,
        SEPARATOR,
        Entry("Today's sessions", submenu=_sessions(view)),
        *([Entry("Open summary", "summary")] if has_default_action else []),  # else it is the first item
        SEPARATOR,
        Entry("Settings", submenu=settings_menu(view, autostart)),
        Entry("Refresh now", "refresh"),
        Entry("Quit trayburn", "quit"),
    ]
    return entries


def _sessions(view: TrayView) -> list[Entry]:
    if not view.sessions:
        return [Entry("No sessions today", enabled=False)]
    entries = [Entry(text, "open_session", sid) for sid, text in view.sessions]
    if view.more_sessions:
        entries.append(Entry(f"+{view.more_sessions} more… (opens the summary)", "summary"))
    return entries


def settings_menu(view: TrayView, autostart: bool | None) -> list[Entry]:
    roots = [entry for r in view.roots for entry in _root(r)]
    overridden = any(r.source.startswith("settings") for r in view.roots)
    refresh = [
        Entry(_interval(s), "set_refresh", s, checked=view.refresh_seconds == s, radio=True)
        for s in menu_choices("refresh_seconds")
    ]
    themes = [Entry(t, "set_theme", t, checked=view.theme == t, radio=True) for t in menu_choices("theme")]
    budget = f"Daily budget: {amount(USD, view.budget)}…" if view.budget else "Daily budget: none…"  # set in USD
    out = roots + [
        Entry("Use environment and defaults", "reset_roots", enabled=overridden),
        SEPARATOR,
        Entry("Refresh every", submenu=refresh),
        Entry(budget, "set_budget"),
        Entry(f"Panel: {view.theme}", submenu=themes),
        Entry(
            f"Share across machines: {tilde(view.sharing)}…" if view.sharing else "Share across machines…",
            "choose_sync",
        ),
        *([Entry("Stop sharing", "stop_sharing")] if view.sharing else []),
    ]
    if autostart is not None:
        out.append(Entry("Start at login", "toggle_autostart", checked=autostart))
    out.append(Entry("Open settings file", "open_settings"))
    return out


MENU_LINE = 45  # characters: a menu line longer than this makes the whole submenu that wide


def _root(r: Root) -> list[Entry]:
    """ "Sessions folder: ~/.cline/data/sessions…" (the path shortened in its middle to fit a line), then where
    it came from, in words, as a line of its own: "set in settings", "from CLINE_DIR", "the default"."""
    head = f"{r.label}: "
    path = middle(tilde(r.path), MENU_LINE - len(head) - 1)
    origin = origin_words(r.source) + ("" if r.exists else " — missing")
    return [Entry(f"{head}{path}…", "choose_root", r.name), Entry(f"    {origin}", enabled=False)]


def origin_words(source: str) -> str:
    """`Level.source()` ("settings (cline_dir)", "CLINE_DIR", "default") as a person says it."""
    if source.startswith("settings"):
        return "set in settings"
    if source == "default":
        return "the default"
    return f"from {source}"


def middle(text: str, width: int) -> str:
    """At most `width` characters, the middle cut to "…" (a path keeps its start and its last folder)."""
    if len(text) <= width:
        return text
    tail = max(1, (width - 1) * 3 // 5)
    return text[: width - 1 - tail] + "…" + text[-tail:]


amount = Money.cents  # one precision for every amount shown (figures/money.py)


def with_estimate(money: Money, cost: float, estimated: float) -> str:
    """ "$0.42 (incl. $0.07 estimated)": the part priced from tokens, named in words, not as "*"."""
    text = amount(money, cost)
    if not estimated:
        return text
    return f"{text} estimated" if estimated >= cost else f"{text} (incl. {amount(money, estimated)} estimated)"


def _cost(money: Money, cost: float, estimated: float, unpriced: int, calls: int) -> str:
    """A menu cost: "unpriced" when no call has a price, the estimate in words, "+2 unpriced" in words."""
    if calls and unpriced >= calls:
        return "unpriced"
    text = with_estimate(money, cost, estimated)
    return f"{text} (+{unpriced} unpriced)" if unpriced else text


def so_far(line: str, progress: str | None) -> str:
    """ "This week: at least $122.53" while the history is still read (`progress`): a sum of what was read so
    far, not yet the week's (today's figures are read first and are whole)."""
    head, sep, rest = line.partition(": ")
    return f"{head}: at least {rest}" if progress and sep else line


def _interval(seconds: int) -> str:
    return f"{seconds} s" if seconds < 60 else f"{seconds // 60} min"


def build_view(figures: Glance, settings: Settings, health: Health) -> TrayView:
    """The view of a glance, with the settings it is shown under and the health whose problem it names at the top
    (freshness is added by the app, which knows the time)."""
    money, day, hour = figures.money, figures.day.report, figures.last_hour
    first_run = health.sessions == 0 and health.removed_sessions == 0 and not day.calls
    problem = problem_line(health, figures.sync_problem)
    level = max([budget_level(day.cost_usd, settings.daily_budget)] + [b.level for b in figures.budgets if b.project])
    roots = tuple(Root(lv.name, lv.label, str(lv.path), lv.source(), lv.exists) for lv in health.levels)
    spent = budget_text(day.cost_usd, settings.daily_budget, money)
    estimate = f" · incl. {amount(money, day.estimated_cost_usd)} estimated" if day.estimated_cost_usd else ""
    today = f"Today: {spent or day_cost(day, money)} · {plural(day.calls, 'call')}{estimate}"
    ranked = sorted(figures.day.sessions, key=lambda s: s.cost_usd, reverse=True)
    yesterday = figures.yesterday if not day.calls and not first_run else None
    return TrayView(
        label=icon_label(day, first_run, money),
        state=icon_state(first_run, problem, level),
        tooltip="",
        today=today,
        top_model=_top_model(day, money),
        week=f"This week: {totals_cost(figures.week, money)}",
        month=f"This month: {_month(figures.month, settings.monthly_budget, money)}",
        rate=f"Last hour: {totals_cost(hour, money)}/h",
        sessions=tuple((s.id, session_text(s, money)) for s in ranked[:MAX_SESSIONS]),
        problem=problem,
        first_run=first_run,
        roots=roots,
        refresh_seconds=settings.refresh_seconds,
        budget=settings.daily_budget,
        theme=settings.theme,
        budget_level=level,
        yesterday=f"Yesterday: {day_cost(yesterday, money)}" if yesterday is not None else None,
        more_sessions=max(0, len(ranked) - MAX_SESSIONS),
        demo=figures.demo,
        hour_live=hour.calls > 0,
        budget_text=spent,
        cost_text=day_cost(day, money),
        budget_pct=share(day.cost_usd, settings.daily_budget) if settings.daily_budget else None,
        money=money,
        plan=plan_text(day, money.text),
        machines=None if first_run else figures.day.machines.menu_line(money.text),
        sources=None if first_run else menu_line(figures.by_source, lambda usd: amount(money, usd)),
        unpriced=unpriced_line(day.unpriced_calls, day.unpriced_models),
        sharing=settings.sync_dir or None,
        progress=progress_text(figures.progress),
        pace=None if first_run else pace_text(figures.day.burn, money),
        runaways=tuple((r.id, runaway_line(r, money)) for r in figures.runaways),
        projects=tuple(project_line(b, money) for b in nearest(figures.budgets)),
    )


def _top_model(day: DayReport, money: Money = USD) -> str | None:
    m = day.top_model
    if m is None:
        return None
    cost = NOT_PAID.get(m.billing or "") or _cost(money, m.cost_usd, m.estimated_cost_usd, m.unpriced_calls, m.calls)
    return f"Top model: {m.name} — {cost}"


def _month(month: Totals, budget: float | None, money: Money = USD) -> str:
    return budget_text(month.cost_usd, budget, money) or totals_cost(month, money)


def error_view(message: str) -> TrayView:
    """What the tray shows when its very first refresh failed."""
    return TrayView(
        label="!",
        state=IconState.PROBLEM,
        tooltip="trayburn · needs attention",
        today="Today: unknown",
        top_model=None,
        week="",
        month="",
        rate="",
        sessions=(),
        problem=message,
        first_run=False,
        roots=(),
        refresh_seconds=30,
        budget=None,
        theme="auto",
        budget_level=0,
        cost_text="unknown",
    )


# ---- the lines under today's -------------------------------------------------------------------------------------

MODELS_SHOWN = 3  # unpriced models named in the line; the rest are counted


def unpriced_line(calls: int, models: list[str]) -> str | None:
    """ "2 calls unpriced: acme-1 — add a price in settings": which models, and what to do."""
    if calls <= 0:
        return None
    names = ", ".join(models[:MODELS_SHOWN])
    if len(models) > MODELS_SHOWN:
        names += f" +{len(models) - MODELS_SHOWN} more"
    return f"{plural(calls, 'call')} unpriced: {shorten(names or 'unknown model', 48)} — add a price in settings"


# ---- the problem line at the top ---------------------------------------------------------------------------------


def tilde(text: str | Path) -> str:
    """A path, or a sentence with paths in it, with the home folder written as ~."""
    home, text = os.path.expanduser("~"), str(text)
    if home in ("/", ""):
        return text
    return "~" if text == home else text.replace(home + os.sep, "~" + os.sep)


# The ledger cannot be written: what the menu says (the figures shown are what it held; they are stale).
LEDGER_FAULTS = {
    "ledger_disk_full": "The disk is full, trayburn cannot record new calls",
    "ledger_read_only": "trayburn's ledger is read-only",
    "ledger_io": "trayburn's ledger failed to read or write (an I/O error)",
}


def problem_line(health: Health, sharing: str | None = None) -> str | None:
    """The one plain sentence shown at the top of the menu, from the same checks as `doctor`;
    `sharing`: what is wrong with sharing through sync_dir, named before a bare count of unreadable
    files (a bad machine file is one of those)."""
    kind = health.kind
    if kind == "settings_broken":
        line = health.settings_problem.line if health.settings_problem else None
        where = f" at line {line}" if line else ""
        return f"Settings file is broken{where}: {tilde(health.config_path)} (using defaults)"
    if kind == "not_installed" and health.sessions == 0:
        return None  # first run: said by the first-run entries instead
    if kind == "override_missing":
        level = health.problem_level
        if level is not None:
            who = f"The setting {level.name} in {health.config_path}" if level.origin == "settings" else level.variable
            return tilde(f"{who} points to {level.path}, which does not exist")
    if kind == "sessions_not_a_folder":
        return tilde(f"The sessions folder {health.levels.sessions.path} is not a folder")
    if kind in LEDGER_FAULTS:
        return f"{LEDGER_FAULTS[kind]}: figures as of the last good refresh (see trayburn doctor)"
    if sharing:
        return sharing
    if health.problems:
        n = len(health.problems)
        return f"{n} file{'s' if n > 1 else ''} could not be read (see trayburn doctor)"
    return None


# ---- the icon's label and state ----------------------------------------------------------------------------------

NO_DATA_LABEL = "\u2013"  # en dash; drawn as a bar (Pillow's font has no glyph)


class IconState(enum.Enum):
    NO_DATA = "no_data"  # nothing recorded yet: greyed mark, "–"
    OK = "ok"  # below 80% of the budget, or no budget
    WARN = "warn"  # >= 80% of the budget: label on amber
    OVER = "over"  # >= 100% of the budget: label on red
    PROBLEM = "problem"  # Cline's folders missing or unreadable: "!" badge


def format_cost(usd: float | None) -> str:
    """Today's cost as a label of at most 4 characters, for a 16-24 px icon.

    None (or NaN/inf) -> "–" (no data); below half a cent -> "$0";
    below $9.995 -> two decimals ("4.21", "0.07");
    below $999.5 -> whole dollars ("12", "123");
    then thousands ("1.2k", "12k", "999k"), millions ("1.0M") and so on.
    There is no "$" except on "$0": every character costs legibility.
    """
    if usd is None or not math.isfinite(usd):
        return NO_DATA_LABEL
    if usd < 0.005:
        return "$0"
    if usd < 9.995:
        return f"{usd:.2f}"
    if usd < 999.5:
        return f"{usd:.0f}"
    return _with_suffix(usd)


def format_money(amount: float | None, symbol: str) -> str:
    """Today's cost in another currency than USD: its symbol and a figure of at most 4 characters
    ("€4.2", "€12", "¥632", "¥12k", "¥150k"); no symbol when it has more than one character ("CHF").

    None (or NaN/inf) -> "–"; below 0.05 -> symbol and "0"; below 9.95 -> one decimal;
    below 999.5 -> whole units; then "1k" to "999k", "1M" to "999M" and so on.
    """
    if amount is None or not math.isfinite(amount):
        return NO_DATA_LABEL
    mark = symbol if len(symbol) == 1 else ""
    if amount < 0.05:
        return mark + "0"
    if amount < 9.95:
        return f"{mark}{amount:.1f}"
    if amount < 999.5:
        return f"{mark}{amount:.0f}"
    for divisor, suffix in ((1e3, "k"), (1e6, "M"), (1e9, "G")):
        if amount / divisor < 999.5:
            return f"{mark}{amount / divisor:.0f}{suffix}"
    return mark + "1T+"


def _with_suffix(usd: float) -> str:
    for divisor, suffix in ((1e3, "k"), (1e6, "M"), (1e9, "G")):
        scaled = usd / divisor
        if scaled < 9.95:
            return f"{scaled:.1f}{suffix}"
        if scaled < 999.5:
            return f"{scaled:.0f}{suffix}"
    return "1T+"
