"""Any period's figures by day, week, month, project, model, session, source or machine, as plain data
(`trayburn report`, the window's periods, the menu's machines). Never speaks SQL and never reads a file.

A few queries per report, whatever the number of sessions: the period's calls in `costs.Pricer.groups`
by (time bucket, session), priced exactly as their calls one by one would be (`Totals.add`), and what
each session is grouped by (its project, source, title; `Ledger.session_keys`). Each priced group is
added to its row; the total is the rows added up, so the rows and the total agree exactly.

`machines_between`: the figures split by machine (sharing through `sync_dir`): the menu's "Today $4.20 on 3
machines (this one $1.10)", `today --json`'s `machines`, the window's and `report --by machine`'s split.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import NamedTuple

from ..ledger import Bucket, CostGroup, Ledger, Route, queries
from ..pricing import PriceBook
from ..sources.editor_tasks.places import source_label
from .costs import Pricer, Totals, priced_cost
from .day import NO_PROJECT, _r, display_title, project_name
from .money import Money
from .periods import Period, cut, part_key, timezone_name

__all__ = ["NO_PROJECT", "project_name"]  # the one project rule lives in day.py

BY = ("day", "week", "month", "project", "model", "session", "source", "machine")
THIS_MACHINE = "this machine"
TIME_BY = ("day", "week", "month")
NO_SOURCE = "unknown"
Priced = list[tuple[CostGroup, Totals]]  # the period's groups, each priced once


@dataclass
class Group:
    """One row of a report (a day, week, month, project, model, session or source) and its totals."""

    key: str
    label: str
    totals: Totals = field(default_factory=Totals)
    sessions: int = 0
    since: date | None = None  # the days of a day, week or month row
    until: date | None = None

    @property
    def cost_usd(self) -> float | None:
        """None when none of the calls has a price (never $0)."""
        t = self.totals
        return priced_cost(t.cost_usd, t.calls, t.unpriced_calls)

    def to_json(self, money: Money) -> dict:
        t = self.totals
        out: dict = {"key": self.key}
        if self.label != self.key:
            out["label"] = self.label
        if self.since is not None and self.until is not None:
            out["since"], out["until"] = self.since.isoformat(), self.until.isoformat()
        cost = self.cost_usd
        out.update(
            cost_usd=None if cost is None else round(cost, 9),
            estimated_cost_usd=round(t.estimated_usd, 9),
            calls=t.calls,
            sessions=self.sessions,
            tokens={
                "input": t.tokens.input,
                "output": t.tokens.output,
                "cache_read": t.tokens.cache_read,
                "cache_write": t.tokens.cache_write,
            },
            unpriced_calls=t.unpriced_calls,
            plan_calls=t.plan_calls,  # covered by a plan: their list price beside the spend, never in it
            plan_api_value_usd=round(t.plan_api_value_usd, 9),
            capped_calls=t.capped_calls,
            free_calls=t.free_calls,  # calls of a free model: $0, never priced
        )
        if money.currency != "USD":
            out.update(money.to_json(cost))
        return out


@dataclass
class HistoryReport:
    """A period's report: its rows by one dimension and their total."""

    period: Period
    by: str
    timezone: str
    rows: list[Group]
    total: Group

    def to_json(self, money: Money | None = None) -> dict:
        money = money or Money()
        out: dict[str, object] = {
            "since": self.period.since.isoformat(),
            "until": self.period.until.isoformat(),
            "by": self.by,
            "timezone": self.timezone,
            "rows": [g.to_json(money) for g in self.rows],
            "total": self.total.to_json(money),
        }
        if money.currency != "USD":
            out["currency"], out["usd_rate"] = money.shown, money.usd_rate
        return out


def report(
    ledger: Ledger, book: PriceBook, period: Period, by: str = "day", machine_name: str | None = None
) -> HistoryReport:
    """`machine_name`: this machine's name, for `by="machine"` (others are named by their files)."""
    if by not in BY:
        raise ValueError(f"cannot group by '{by}': use one of {', '.join(BY)}")
    parts = cut(period, by) if by in TIME_BY else [period]
    pricer = Pricer(ledger, book)
    keys = {k.id: k for k in ledger.session_keys()} if by not in TIME_BY and by != "model" else {}
    if by == "machine":
        names = {f.origin: f.name or f.origin for f in ledger.machine_files()}
        return _grouped(_fetch(pricer, period, parts), keys, parts, period, by, pricer, names, machine_name)
    return _grouped(_fetch(pricer, period, parts), keys, parts, period, by, pricer)


def overview(
    ledger: Ledger, book: PriceBook, period: Period, groupings: tuple[str, ...] = ("day", "project", "model", "source")
) -> dict[str, HistoryReport]:
    """Several groupings of one period from a single read (per day), as the window's period view shows."""
    days = cut(period, "day")
    pricer = Pricer(ledger, book)
    found, keys = _fetch(pricer, period, days), {k.id: k for k in ledger.session_keys()}
    return {by: _grouped(found, keys, days if by == "day" else [period], period, by, pricer) for by in groupings}


def report_from(
    priced: Iterable[tuple[str, CostGroup, Totals]], keys: Mapping[str, queries.SessionKeys], period: Period, by: str,
    pricer: Pricer,
) -> HistoryReport:  # fmt: skip
    """`report` by project, source or session from calls already read and priced: (session id, one of its groups,
    that group's Totals), `keys` the sessions' (those missing are grouped as a session without a row is)."""
    found = [(tuple.__new__(CostGroup, (g.route, g.band, (0, sid), *g[3:])), one) for sid, g, one in priced]
    return _grouped(found, dict(keys), [period], period, by, pricer)


def _fetch(pricer: Pricer, period: Period, parts: list[Period]) -> Priced:
    """The period's calls in groups by (part, session), each priced once."""
    buckets = [Bucket(i, *p.bounds_ms()) for i, p in enumerate(parts)]
    out = []
    for g in pricer.groups(*period.bounds_ms(), by=("session",), buckets=buckets):
        one = Totals()
        one.add(g, pricer)
        out.append((g, one))
    return out


def _grouped(
    found: Priced,
    keys: dict[str, queries.SessionKeys],
    parts: list[Period],
    period: Period,
    by: str,
    pricer: Pricer,
    machines: dict[str, str] | None = None,
    this_machine: str | None = None,
) -> HistoryReport:
    """The rows of a report from groups by (part, session); for a grouping other than time, the parts'
    indexes are not looked at (any cut of the period will do)."""
    name = _namer(by, pricer, parts, keys, machines or {}, this_machine or THIS_MACHINE)
    groups: dict[str, Group] = {}
    if by in TIME_BY:  # every day (week, month) of the period, those without calls too
        for part in parts:
            key = part_key(part, by)
            groups[key] = Group(key, key, since=part.since, until=part.until)
    seen: dict[str, set[str]] = {}
    for g, one in found:
        bucket, sid = g.by
        key, label = name(bucket, sid or "", g.route)
        row = groups.get(key) or groups.setdefault(key, Group(key, label))
        row.totals.merge(one)
        seen.setdefault(key, set()).add(sid)
    for key, row in groups.items():
        row.sessions = len(seen.get(key, ()))
    ordered = list(groups.values())
    if by not in TIME_BY:
        ordered.sort(key=lambda g: (-(g.totals.cost_usd), -g.totals.calls, g.label.casefold()))
    total = Group("total", "total", since=period.since, until=period.until)
    for row in ordered:  # the rows added up: they and the total agree exactly
        total.totals.merge(row.totals)
    total.sessions = len({g.by[1] for g, _ in found})
    return HistoryReport(period, by, timezone_name(), ordered, total)


def _namer(
    by: str,
    pricer: Pricer,
    parts: list[Period],
    keys: dict[str, queries.SessionKeys],
    machines: dict[str, str],
    this_machine: str,
) -> Callable[[int, str, Route], tuple[str, str]]:
    """(key, label) of a row from a group's part, session and route."""
    if by in TIME_BY:
        part_keys = [part_key(p, by) for p in parts]
        return lambda bucket, sid, route: (part_keys[bucket], part_keys[bucket])
    if by == "model":
        return lambda bucket, sid, route: (pricer.key(route), pricer.name(route))
    if by == "project":
        projects = {sid: project_name(k.workspace_root or k.cwd) for sid, k in keys.items()}
        return lambda bucket, sid, route: (projects.get(sid, NO_PROJECT),) * 2
    if by == "source":  # key: the `source` as written; label: the app people know ("Cline CLI")
        sources = {sid: k.source or NO_SOURCE for sid, k in keys.items()}
        return lambda bucket, sid, route: (key := sources.get(sid, NO_SOURCE), source_label(key))
    if by == "machine":  # key: the machine's id ("this" for this one); label: its name
        where = {sid: k.origin for sid, k in keys.items()}

        def machine(bucket: int, sid: str, route: Route) -> tuple[str, str]:
            origin = where.get(sid)
            return ("this", this_machine) if origin is None else (origin, machines.get(origin, origin))

        return machine
    titles = {sid: display_title(k.title, k.prompt) for sid, k in keys.items()}
    return lambda bucket, sid, route: (sid, titles.get(sid, sid))


class MachineCost(NamedTuple):
    """One machine's part of a period's spend."""

    id: str | None  # None: this machine
    name: str
    this: bool
    cost_usd: float
    estimated_cost_usd: float
    calls: int
    unpriced_calls: int
    file_gone: bool = False  # its file left sync_dir: its history is kept, nothing new comes

    @property
    def known_cost(self) -> float | None:
        return priced_cost(self.cost_usd, self.calls, self.unpriced_calls)

    def to_json(self) -> dict:
        cost = self.known_cost
        return {
            "id": self.id,
            "name": self.name,
            "this": self.this,
            "cost_usd": None if cost is None else _r(cost),
            "estimated_cost_usd": _r(self.estimated_cost_usd),
            "calls": self.calls,
            "file_gone": self.file_gone,
        }


@dataclass
class MachinesReport:
    """Every machine the ledger holds (this one first, then by cost), over one range."""

    machines: list[MachineCost] = field(default_factory=list)

    @property
    def shared(self) -> bool:
        """Other machines are held: the split is worth showing."""
        return any(not m.this for m in self.machines)

    @property
    def cost_usd(self) -> float:
        return sum(m.cost_usd for m in self.machines)

    @property
    def active(self) -> int:
        """Machines with calls in the range."""
        return sum(1 for m in self.machines if m.calls)

    @property
    def this(self) -> MachineCost | None:
        return next((m for m in self.machines if m.this), None)

    def menu_line(self, money: Callable[[float], str] | None = None, label: str = "Today") -> str | None:
        """'Today $4.20 on 3 machines (this one $1.10)'; None while no other machine is held. `money`
        formats an amount in dollars (the display currency's formatter; default `$1.10`)."""
        if not self.shared:
            return None
        fmt = money or (lambda usd: f"${usd:,.2f}")
        this = self.this
        n = self.active
        if this is None or not this.calls:  # all of it elsewhere: say so rather than "(this one $0.00)"
            others = [m for m in self.machines if m.calls and not m.this]
            where = f"on {others[0].name}" if len(others) == 1 else f"on {n} other machines"
            return f"{label} {fmt(self.cost_usd)} {where}, none on this one" if others else None
        where = f"on {n} machine{'' if n == 1 else 's'}"
        return f"{label} {fmt(self.cost_usd)} {where} (this one {fmt(this.cost_usd)})"

    def to_json(self) -> list[dict]:
        return [m.to_json() for m in self.machines]


def machines_between(
    ledger: Ledger,
    book: PriceBook,
    start_ms: int,
    end_ms: int,
    this_name: str,
    priced: tuple[Pricer, list[CostGroup]] | None = None,
) -> MachinesReport:
    """Counted calls in [start, end) by the machine whose session holds them (`report --by machine`).
    `priced`: those calls' groups by ("origin",) already read, with their pricer."""
    totals: dict[str | None, Totals] = {None: Totals()}
    pricer, groups = priced or (Pricer(ledger, book), None)
    for g in pricer.groups(start_ms, end_ms, by=("origin",)) if groups is None else groups:
        totals.setdefault(g.by[0], Totals()).add(g, pricer)
    files = {f.origin: f for f in ledger.machine_files()}
    for held in files:
        totals.setdefault(held, Totals())
    out = []
    for origin, t in totals.items():
        f = files.get(origin) if origin else None
        name = this_name if origin is None else ((f.name if f else None) or str(origin))
        gone = bool(f and f.gone)
        out.append(
            MachineCost(origin, name, origin is None, t.cost_usd, t.estimated_usd, t.calls, t.unpriced_calls, gone)
        )
    out.sort(key=lambda m: (not m.this, -m.cost_usd, m.name))
    return MachinesReport(out)
