"""Where a period's (or one session's) money went: its cost by the tools the calls used and by the agent that made
them, as plain data (`Attribution`). Never speaks SQL and never reads a file: the ledger's `cost_groups` by tool
names and shell words (`Call.tools`, `Call.commands`), or by agent and file.

By tool is an attribution, not a measurement (`TOOL_RULE`): a call is one model request, paid whole, and its reply
may call several tools. Its cost is split evenly among the tool calls of its reply ("reply" when it called none);
a shell tool's share is split again among the programs its command lines ran (`git`, `npm`, `pytest`…), shown under
it. A call whose tools are not known (a session's rollup, a call shared from another machine) goes to "not
recorded"; a shell call stored before the ledger kept command words (schema 6) has its share under "not recorded"
beneath its tool.

By agent is a partition: every call is the lead's, one subagent's (`agent_<id>.messages.json`) or one teammate's
(`<agent>__<task>.messages.json`), with the models each used.

The rows add up to the total exactly: the shares are summed as floats, then each row is given whole nano-dollars
(the unit of the JSON) by largest remainder (`apportion`), so that they add up to the total's own nano-dollars; a
shell tool's words add up to their tool's the same way.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePath

from ..ledger import ALL_TIME, CostGroup, Ledger
from ..pricing import PriceBook
from .costs import Pricer, Totals, priced_cost
from .periods import Period, timezone_name

TOOL_RULE = (
    "By tool is an attribution, not a measurement: each call's cost is split evenly among the tools its reply "
    'called (none: "reply"), and a shell tool\'s share among the programs its commands ran.'
)
REPLY = "reply"  # a call whose reply called no tool
NOT_RECORDED = "not recorded"  # a call whose tools (or a shell call's programs) the ledger does not hold
NO_COMMAND = "(no command)"  # a shell tool call without a command line
SHELLS = frozenset({"run_commands", "execute_command"})  # the Cline CLI's shell tool; the legacy tasks'
LEAD, SUBAGENT, TEAMMATE = "lead", "subagent", "teammate"
NANO = 1_000_000_000


@dataclass
class Share:
    """One row: the calls that used a tool (or one agent's calls) and the part of their cost attributed to it."""

    key: str
    label: str
    calls: int = 0  # calls that used it (a call with two tools counts in both rows; by agent: its own)
    uses: int = 0  # tool calls (by agent: calls)
    unpriced_calls: int = 0  # of those calls, the ones without any price
    usd: float = 0.0  # its share, as summed
    estimated_usd: float = 0.0  # of which estimated from tokens
    nano: int = 0  # its share in whole nano-dollars (`apportion`): what is shown
    role: str = ""  # by agent: lead | subagent | teammate
    sessions: set[str] = field(default_factory=set)
    models: list[str] = field(default_factory=list)
    under: list[Share] = field(default_factory=list)  # a shell tool's programs

    @property
    def cost_usd(self) -> float | None:
        """None when none of its calls has a price (never $0)."""
        return priced_cost(self.nano / NANO, self.calls, self.unpriced_calls)

    def to_json(self) -> dict:
        out: dict = {"key": self.key}
        if self.label != self.key:
            out["label"] = self.label
        if self.role:
            out["role"] = self.role
        cost = self.cost_usd
        out.update(
            cost_usd=None if cost is None else round(cost, 9),
            estimated_cost_usd=round(self.estimated_usd, 9),
            calls=self.calls,
            uses=self.uses,
            unpriced_calls=self.unpriced_calls,
        )
        if self.models:
            out["models"] = self.models
        if self.sessions:
            out["sessions"] = len(self.sessions)
        if self.under:
            out["commands"] = [s.to_json() for s in self.under]
        return out


@dataclass
class Attribution:
    """A period's or one session's cost split by tool or by agent, with the total it adds up to."""

    by: str  # tool | agent
    since: str | None  # the period's days (None: one session's whole life)
    until: str | None
    timezone: str
    rows: list[Share]
    total: Share
    session_id: str | None = None
    rule: str = ""

    def to_json(self) -> dict:
        out: dict = {"by": self.by}
        if self.since is not None:
            out.update(since=self.since, until=self.until, timezone=self.timezone)
        if self.session_id is not None:
            out["session_id"] = self.session_id
        if self.rule:
            out["rule"] = self.rule
        out.update(rows=[r.to_json() for r in self.rows], total=self.total.to_json())
        return out


def by_tool(
    ledger: Ledger, book: PriceBook, period: Period | None = None, session_id: str | None = None
) -> Attribution:
    """The period's (or one session's: `period` None) cost by tool; shell tools split by program."""
    rows: dict[str, Share] = {}
    total = Share("total", "total")
    for g, one, _ in _priced(ledger, book, period, session_id, ("tools", "commands", "origin"), total):
        tools, commands, origin = g.by
        names = _tool_names(tools, origin)
        for name, n in _counted(names).items():
            part = n / len(names)
            row = rows.setdefault(name, Share(name, name))
            _count(row, one, one.cost_usd * part, one.estimated_usd * part, n)
            if name in SHELLS:
                _split_shell(row, one, part / n, _blocks(commands, n, names, name))
    return _finish("tool", period, session_id, rows, total, TOOL_RULE)


def by_agent(
    ledger: Ledger, book: PriceBook, period: Period | None = None, session_id: str | None = None
) -> Attribution:
    """The period's (or one session's) cost by agent: the lead, each subagent, each teammate, with their models."""
    rows: dict[str, Share] = {}
    total = Share("total", "total")
    for g, one, pricer in _priced(ledger, book, period, session_id, ("session", "file", "agent"), total):
        sid, path, agent = g.by
        role, name = agent_of(agent, path)
        key = LEAD if role == LEAD else f"{sid}/{PurePath(path or '').name}"
        row = rows.setdefault(key, Share(key, name, role=role))
        _count(row, one, one.cost_usd, one.estimated_usd, 1)
        row.sessions.add(sid or "")
        model = pricer.name(g.route)
        if model not in row.models:
            row.models.append(model)
    total.sessions = {s for r in rows.values() for s in r.sessions}
    return _finish("agent", period, session_id, rows, total)


def _priced(
    ledger: Ledger, book: PriceBook, period: Period | None, sid: str | None, by: tuple[str, ...], total: Share
) -> Iterator[tuple[CostGroup, Totals, Pricer]]:
    """The scope's calls in groups by `by`, each priced once and counted in `total`."""
    pricer = Pricer(ledger, book)
    start, end = period.bounds_ms() if period else ALL_TIME
    for g in pricer.groups(start, end, by=by, session_id=sid):
        one = Totals()
        one.add(g, pricer)
        _count(total, one, one.cost_usd, one.estimated_usd, 1)
        yield g, one, pricer


def agent_of(agent: str | None, path: str | None) -> tuple[str, str]:
    """(role, name) of the file a call came from: the lead; a subagent by its id (`agent_<id>.messages.json`); a
    teammate by its agent's name (`<agent>__<task>.messages.json`)."""
    if agent not in (SUBAGENT, TEAMMATE):
        return LEAD, LEAD
    name = PurePath(path or "").name.removesuffix(".messages.json")
    if agent == SUBAGENT:
        return SUBAGENT, name.removeprefix("agent_")
    return TEAMMATE, name.partition("__")[0] or name


def _tool_names(tools: str | None, origin: str | None) -> list[str]:
    if tools is None or (origin is not None and not tools):  # a rollup; another machine's call (none shared)
        return [NOT_RECORDED]
    return tools.split(",") if tools else [REPLY]


def _counted(names: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for name in names:
        out[name] = out.get(name, 0) + 1
    return out


def _blocks(commands: str | None, n: int, names: list[str], name: str) -> list[list[str]]:
    """The programs of each of the `n` calls of the shell tool `name` (`Call.commands` lists every shell block of
    the call in order, whichever shell tool: the legacy tasks' and the CLI's never meet in one call)."""
    if commands is None:
        return [[NOT_RECORDED]] * n
    every = commands.split(",")
    mine = [w for w, tool in zip(every, [t for t in names if t in SHELLS], strict=False) if tool == name]
    return [(w.split() or [NO_COMMAND]) for w in (mine + [""] * n)[:n]]


def _split_shell(row: Share, one: Totals, part: float, blocks: list[list[str]]) -> None:
    for words in blocks:
        for word, k in _counted(words).items():
            child = next((c for c in row.under if c.key == word), None)
            if child is None:
                child = Share(word, word)
                row.under.append(child)
            share = part * k / len(words)
            _count(child, one, one.cost_usd * share, one.estimated_usd * share, k)


def _count(row: Share, one: Totals, usd: float, estimated: float, uses: int) -> None:
    row.calls += one.calls
    row.uses += uses * one.calls
    row.unpriced_calls += one.unpriced_calls
    row.usd += usd
    row.estimated_usd += estimated


def _finish(
    by: str, period: Period | None, sid: str | None, rows: dict[str, Share], total: Share, rule: str = ""
) -> Attribution:
    ordered = sorted(rows.values(), key=lambda r: (-r.usd, -r.calls, r.label.casefold()))
    total.nano = round(total.usd * NANO)
    _give(ordered, total.nano)
    for row in ordered:
        row.under.sort(key=lambda r: (-r.usd, -r.calls, r.label.casefold()))
        _give(row.under, row.nano)
    if by == "tool":
        total.uses = sum(r.uses for r in ordered)
    since, until = (period.since.isoformat(), period.until.isoformat()) if period else (None, None)
    return Attribution(by, since, until, timezone_name(), ordered, total, sid, rule)


def _give(rows: list[Share], nano: int) -> None:
    for row, share in zip(rows, apportion([r.usd for r in rows], nano), strict=True):
        row.nano = share


def apportion(amounts: list[float], total: int) -> list[int]:
    """Whole units (nano-dollars) for each of `amounts` (dollars) adding up to `total` exactly: each amount's whole
    units, then the units left over one each to the largest remainders (taken back from the smallest when the
    floats' noise overshoots)."""
    if not amounts:
        return []
    scaled = [a * NANO for a in amounts]
    out = [math.floor(s) for s in scaled]
    order = sorted(range(len(out)), key=lambda i: scaled[i] - out[i], reverse=True)
    left = total - sum(out)
    step = 1 if left > 0 else -1
    i = 0
    while left:
        out[order[i % len(order)] if step > 0 else order[-1 - i % len(order)]] += step
        left -= step
        i += 1
    return out
