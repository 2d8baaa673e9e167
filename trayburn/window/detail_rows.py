"""One session of the summary window as plain rows and strings: no tkinter. Its facts, its figure cards, its
calls in order and its helpers (subagents, teammates) named as a person reads them. Never computes a figure.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..figures.day import CallRow, SessionDetail, SessionSummary, Subagent
from ..figures.money import Money
from ..words import NOT_PAID, tokens
from .models import (
    ESTIMATE_MARK,
    PATH_CHARS,
    USD,
    Column,
    Row,
    amount,
    clean,
    clock,
    duration,
    estimate_note,
    short_path,
    when,
    with_plan,
)

HEADING_CHARS = 240  # a session's title above its figures

CALL_COLUMNS = (
    Column("n", "#", 4, numeric=True),
    Column("time", "Time", 8, whole=True),
    Column("agent", "Agent", 9),
    Column("model", "Model", 17),
    Column("input", "In", 8, numeric=True),
    Column("output", "Out", 7, numeric=True),
    Column("cache_read", "Cache read", 10, numeric=True),
    Column("cache_write", "Cache write", 10, numeric=True),
    Column("cost", "Cost", 9, numeric=True),
    Column("tools", "Tools used", 18, stretch=True),
)
SUBAGENT_COLUMNS = (
    Column("name", "Agent", 24, stretch=True),
    Column("kind", "Kind", 10),
    Column("calls", "Calls", 6, numeric=True),
    Column("cost", "Cost", 9, numeric=True),
)


def call_rows(d: SessionDetail, money: Money = USD) -> list[Row]:
    """A session's calls in order. Their cost column is the one place the window writes fractions of a cent: a
    call costs less than a cent more often than not, a call's cost is shown nowhere else, and which call cost
    what is what the list is read for; so the column has one precision (`Money.decimals`: four decimals when a
    call is under a cent), with "≈" before an estimated call's cost."""
    decimals = money.decimals(c.cost_usd for c in d.calls)
    return [_call_row(n, c, money, decimals) for n, c in enumerate(d.calls, 1)]


def _call_row(n: int, c: CallRow, money: Money, decimals: int) -> Row:
    t = c.tokens
    cost = NOT_PAID.get(c.billing) or money.text(c.cost_usd, False, decimals)
    if c.estimated and c.cost_usd is not None:
        cost = ESTIMATE_MARK + cost
    tools = ", ".join(c.tools) or "–"
    values = (
        str(n),
        clock(c.time, seconds=True),
        c.agent,
        clean(c.model, 60),
        f"{t.input:,}",
        f"{t.output:,}",
        f"{t.cache_read:,}",
        f"{t.cache_write:,}",
        cost,
        clean(tools, 80),
    )
    keys = (
        n,
        c.ts_ms,
        c.agent,
        c.model.casefold(),
        t.input,
        t.output,
        t.cache_read,
        t.cache_write,
        -1.0 if c.cost_usd is None else c.cost_usd,
        tools,
    )
    return Row(f"call:{n}", values, keys, (c.agent,) if c.agent != "lead" else ())


def subagent_rows(s: SessionSummary, money: Money = USD) -> list[Row]:
    names = helper_names(s.subagents)
    return [_subagent_row(a, name, money) for a, name in zip(s.subagents, names, strict=True)]


def helper_names(helpers: Sequence[Subagent]) -> list[str]:
    """How helpers are named to a person: "Subagent 1", "Subagent 2" (their ids are random), a teammate by
    the name it was given (`<name>__<task>`), numbered when the name repeats."""
    names, counts = [], {"subagent": 0}
    for a in helpers:
        if a.kind == "subagents":  # an editor task's subagents, summed by the task
            names.append("Subagents (together)")
        elif a.kind == "teammate":
            base = a.name.split("__", 1)[0] or "teammate"
            counts[base] = counts.get(base, 0) + 1
            names.append(base if counts[base] == 1 else f"{base} {counts[base]}")
        else:
            counts["subagent"] += 1
            names.append(f"Subagent {counts['subagent']}")
    return names


def _subagent_row(a: Subagent, name: str, money: Money) -> Row:
    values = (clean(name, 60), a.kind, f"{a.calls:,}", amount(money, a.cost_usd))
    return Row(f"agent:{a.name}", values, (name.casefold(), a.kind, a.calls, a.cost_usd))


FACT_LABELS = ("Status", "Project", "Folder", "Models", "Started", "Ended", "Duration", "Session id")


def session_facts(d: SessionDetail) -> list[tuple[str, str]]:
    """(label, value) pairs in FACT_LABELS order (the view reads them down, then across)."""
    s = d.summary
    status = s.state + ("  (removed from disk; still counted)" if s.removed else "")
    return [
        ("Status", status),
        ("Project", clean(s.project or "–", 60)),
        ("Folder", short_path(s.cwd or "–")),
        ("Models", clean(", ".join(s.models) or "–", PATH_CHARS)),
        ("Started", when(s.started_at)),
        ("Ended", when(s.ended_at) if s.ended_at else ("still running" if s.running else "–")),
        ("Duration", duration(d.duration_s)),
        ("Session id", s.id),
    ]


def session_cards(d: SessionDetail, money: Money = USD) -> list[tuple[str, str, str]]:
    s, t = d.summary, d.summary.tokens
    reported = s.cost_usd - s.estimated_cost_usd
    note = estimate_note(money, s.cost_usd, s.estimated_cost_usd)
    if 0 < s.estimated_cost_usd < s.cost_usd:
        note = f"reported {amount(money, reported)} · {note}"
    if s.unpriced_calls:
        note += f" · {s.unpriced_calls} unpriced"
    note = with_plan(note, s, money)
    return [
        ("Cost", amount(money, s.cost_usd), note),
        ("Calls", f"{s.calls:,}", _agents_note(s)),
        ("Tokens in", tokens(t.input), f"{t.input:,}"),
        ("Tokens out", tokens(t.output), f"{t.output:,}"),
        ("Cache read", tokens(t.cache_read), f"{t.cache_read:,}"),
        ("Cache write", tokens(t.cache_write), f"{t.cache_write:,}"),
    ]


def _agents_note(s: SessionSummary) -> str:
    if not s.subagents:
        return "lead agent only"
    kinds = {a.kind for a in s.subagents}
    word = "helpers" if len(kinds) > 1 else f"{kinds.pop()}s"
    return f"with {len(s.subagents)} {word}" if len(s.subagents) > 1 else f"with 1 {word[:-1]}"
