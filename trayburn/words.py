"""The words the CLI, the tray and the window share: plurals, token counts, text cut to a width, the plan and
progress lines, the unpriced mark and the default currency, so each figure is said the same way wherever it
shows. Never knows a terminal's table, a menu or a window (render.py, tray/ and window/ do).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Protocol

from .figures.money import Money

if TYPE_CHECKING:
    from .figures.burn import Burn, Runaway

USD = Money()  # the default: dollars
UNPRICED_MARK = "?"  # after a cost some of whose calls have no known price


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def shorten(text: str, width: int) -> str:
    """At most `width` terminal columns, "…" ending what was cut."""
    if columns(text) <= width:
        return text
    kept, used = [], 0
    for ch in text:
        used += _char_columns(ch)
        if used > width - 1:
            break
        kept.append(ch)
    return "".join(kept) + "…"


def columns(text: str) -> int:
    """The terminal columns `text` takes: East Asian wide and full-width characters (CJK, most emoji) two,
    combining marks and zero-width characters none, the rest one."""
    if text.isascii():
        return len(text)
    return sum(_char_columns(ch) for ch in text)


def _char_columns(ch: str) -> int:
    import unicodedata  # (only for text that is not ASCII)

    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in "WF" else 1


def tokens(n: int) -> str:
    for unit, size in (("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)


def progress_text(progress: tuple[int, int] | None) -> str | None:
    """While the history is still being read (today's figures first, exact): how far it is."""
    if progress is None:
        return None
    done, total = progress
    return f"Reading history: {done:,} of {total:,} sessions"


# A call's cost cell when it cost nothing by its route or model (`billing`): what covered it, never "$0.00"
NOT_PAID = {"plan": "plan", "free": "free"}


class Covered(Protocol):
    """What a plan and the free models covered in some figures (a day, a session, a period's `Totals`)."""

    @property
    def plan_calls(self) -> int: ...
    @property
    def plan_api_value_usd(self) -> float: ...
    @property
    def plans(self) -> Collection[str]: ...
    @property
    def free_calls(self) -> int: ...


def plan_text(covered: Covered, amount: Callable[[float], str] = USD.text) -> str | None:
    """ "ClinePass: 4 calls, $1.23 of API value included · free models: 2 calls": beside the spend, never in it
    (CLI, menu, window); None when neither a plan nor a free model was used. `amount`: the display currency's
    formatter (the window's and the menu's precision)."""
    parts = []
    if covered.plan_calls > 0:
        names = ", ".join(sorted(covered.plans)) or "Plan"
        value = amount(covered.plan_api_value_usd)
        parts.append(f"{names}: {plural(covered.plan_calls, 'call')}, {value} of API value included")
    if covered.free_calls > 0:
        parts.append(f"{'free' if parts else 'Free'} models: {plural(covered.free_calls, 'call')}")
    return " · ".join(parts) or None


def pace_text(pace: Burn | None, money: Money = USD) -> str | None:
    """ "$0.80/h now · at this pace about $12.40 by midnight": the burn rate, and the day's end at that pace
    once it is made (`figures.burn.projected`); a projection, never said as a forecast. None: not today."""
    if pace is None:
        return None
    text = f"{money.cents(pace.usd_per_hour)}/h now"
    if pace.projected_day_usd is not None and pace.usd_per_hour > 0:
        text += f" · at this pace about {money.cents(pace.projected_day_usd)} by midnight"
    return text


def minutes(n: int) -> str:
    """ "20 min"; "3 h 05 min" from two hours on."""
    return f"{n} min" if n < 120 else f"{n // 60} h {n % 60:02d} min"


def runaway_text(r: Runaway, money: Money = USD) -> str:
    """ "$4.12 in 20 min on Claude Sonnet 4.5 — fix-login-bug (web)": a runaway session, its spend first."""
    where = f" ({r.project})" if r.project else ""
    model = f" on {r.model}" if r.model else ""
    return f"{money.cents(r.spend_usd)} in {minutes(r.minutes)}{model} — {shorten(r.title, 60)}{where}"
