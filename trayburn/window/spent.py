"""Where the money went, as the window shows it (plain rows and strings, no tkinter): a period's or a session's
cost by tool and by agent, what the cache saved and a what-if on another model, from figures/attribution.py and
figures/listprice.py. The rows are `models.Row`s, in the columns below.
"""

from __future__ import annotations

from ..figures.attribution import Attribution, Share
from ..figures.day import Subagent
from ..figures.listprice import CacheReport, WhatIf
from ..figures.money import Money
from ..words import plural, tokens
from .detail_rows import helper_names
from .models import NBSP, USD, Column, Row, amount, clean, cost_text

TOOL_COLUMNS = (
    Column("tool", "Tool", 16),
    Column("calls", "Calls", 5, numeric=True),
    Column("cost", "Cost", 8, numeric=True),
    Column("programs", "Programs run", 14, stretch=True),
)
AGENT_COLUMNS = (
    Column("name", "Agent", 14, stretch=True),
    Column("role", "Role", 9),
    Column("models", "Models", 16, stretch=True),
    Column("calls", "Calls", 5, numeric=True),
    Column("cost", "Cost", 9, numeric=True),
)
TOOL_NOTE = "Attributed, not measured: a call split evenly among its tools"


def tool_rows(a: Attribution, money: Money = USD) -> list[Row]:
    """A row per tool ("reply": calls that called none); a shell tool's programs, with their shares, in its last
    cell."""
    return [_tool_row(s, money) for s in a.rows]


def _tool_row(s: Share, money: Money) -> Row:
    cost = s.nano / 1e9
    programs = " · ".join(f"{clean(c.label, 30)} {amount(money, c.nano / 1e9)}" for c in s.under) or "–"
    values = (clean(s.label, 40), f"{s.calls:,}", cost_text(cost, s.estimated_usd, s.unpriced_calls, s.calls, money),
              programs)  # fmt: skip
    return Row(f"tool:{s.key}", values, (s.label.casefold(), s.calls, cost, programs))


def agent_rows(a: Attribution, money: Money = USD) -> list[Row]:
    """The lead, then each subagent ("Subagent 1", "Subagent 2": their ids are random, numbered in the order they
    started) and each teammate (by the name it was given), with the models each used and its spend."""
    helpers = sorted((s for s in a.rows if s.role != "lead"), key=lambda s: s.key)
    names = dict(zip((s.key for s in helpers), helper_names([Subagent(s.label, s.role, 0, 0.0) for s in helpers]),
                     strict=True))  # fmt: skip
    return [_agent_row(s, "Lead" if s.role == "lead" else names[s.key], money) for s in a.rows]


def _agent_row(s: Share, name: str, money: Money) -> Row:
    cost = s.nano / 1e9
    used = ", ".join(s.models) or "–"
    values = (clean(name, 60), s.role, clean(used, 60), f"{s.calls:,}",
              cost_text(cost, s.estimated_usd, s.unpriced_calls, s.calls, money))  # fmt: skip
    return Row(f"agent:{s.key}", values, (name.casefold(), s.role, used.casefold(), s.calls, cost))


def cache_text(c: CacheReport, money: Money = USD) -> str:
    """ "Cache: 89 % of input read from cache (4.5M tokens), saving $1.33 at list price"; "" without input."""
    t = c.total
    if t.hit_share is None:
        return ""
    saved = "an unknown amount" if t.saved_usd is None else amount(money, t.saved_usd)
    share = f"{t.hit_share * 100:.0f}{NBSP}%"
    return (
        f"Cache: {share} of input read from cache ({tokens(t.cache_read_tokens)} tokens), saving {saved} at list price"
    )


def what_if_text(w: WhatIf, money: Money = USD) -> str:
    """ "What if (not spend): these 94 calls on Claude Sonnet 4.5 would cost $3.06 at list price (spent $0.33)"."""
    head = f"What if (not spend): these {plural(w.calls, 'call')} on {clean(w.name, 40)}"
    if w.cost_usd is None:
        return f"{head}: no price known for it"
    left = f", {w.unpriced_calls} left out (no price on {', '.join(w.unpriced_routes)})" if w.unpriced_calls else ""
    return f"{head} would cost {amount(money, w.cost_usd)} at list price (spent {amount(money, w.spend_usd)}){left}"
