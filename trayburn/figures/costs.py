"""What counted calls cost: reported costs as they are, the others estimated when read (so better price
data re-prices old calls); plan-covered calls valued at list price beside the spend, never in it, and free
calls $0. Never speaks SQL (the ledger's `cost_groups` does) and never shows a call without a price as $0.

The one place the estimation rules live:
- a call is paid, covered by a plan or free by its route and model id (`billing.Billing.of`), never by its cost
  field: a plan's or a free model's call is $0 of spend whatever its cost says; a plan call's API value is its
  tokens at list price (the cost Cline wrote, where no list price is known), a free call has none;
- calls are priced in the groups `Ledger.cost_groups` returns: one route, one tier band, so a group's
  summed tokens cost exactly what its calls priced one by one would (`Price.cost(tier_input=)`); calls
  whose price depends on their time (`Price.periodic`) or whose tokens are absurd come one by one;
- the route is the call's provider, else its session's; names and grouping by `PriceBook.key`;
- an estimate is at most `MAX_COST` per call (the parser's bound on a reported cost), and marked;
- a group none of whose calls has a price is "unpriced", never $0 (`priced_cost`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from ..billing import FREE, PAID, PLAN, route_of
from ..ledger import Bucket, CostGroup, Ledger, Route, Usage
from ..pricing import Price, PriceBook
from ..sources.base import MAX_COST


@dataclass
class Tokens:
    """A count of tokens of each kind."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    @property
    def total(self) -> int:
        return self.input + self.output


@dataclass
class Totals:
    """Priced figures of some calls, summed group by group (`add`): spend, estimates, plan and free calls."""

    calls: int = 0
    tokens: Tokens = field(default_factory=Tokens)
    reported_usd: float = 0.0
    estimated_usd: float = 0.0
    unpriced_calls: int = 0
    plan_calls: int = 0  # calls a plan covered (on a plan route, whatever their cost field says)
    plan_api_value_usd: float = 0.0  # what those calls' tokens cost at list price: never in cost_usd
    capped_calls: int = 0  # estimates held at MAX_COST (absurd token counts)
    free_calls: int = 0  # calls of a free model: $0, and no price
    plans: set[str] = field(default_factory=set)  # the names of the plans that covered calls ("ClinePass")

    @property
    def cost_usd(self) -> float:
        return self.reported_usd + self.estimated_usd

    def merge(self, other: Totals) -> None:
        """Another's calls added to these (groups priced once, counted in several figures)."""
        self.calls += other.calls
        t, o = self.tokens, other.tokens
        t.input += o.input
        t.output += o.output
        t.cache_read += o.cache_read
        t.cache_write += o.cache_write
        self.reported_usd += other.reported_usd
        self.estimated_usd += other.estimated_usd
        self.unpriced_calls += other.unpriced_calls
        self.plan_calls += other.plan_calls
        self.plan_api_value_usd += other.plan_api_value_usd
        self.capped_calls += other.capped_calls
        self.free_calls += other.free_calls
        self.plans |= other.plans

    def add(self, g: CostGroup, pricer: Pricer) -> None:
        """A group of calls: paid ones at their reported costs, the others estimated; a plan's valued
        beside the spend; a free model's counted."""
        s = g.sums
        self.calls += s.calls
        t = self.tokens
        t.input += s.input
        t.output += s.output
        t.cache_read += s.cache_read
        t.cache_write += s.cache_write
        billed = pricer.billed(g.route)
        if billed == FREE:
            self.free_calls += s.calls
            return
        price = pricer.price(g.route)
        if billed == PLAN:
            self.plan_calls += s.calls
            self.plans.add(pricer.plan_name(g.route))
            whole = Usage(s.calls, g.floored_input, s.output, s.cache_read, s.cache_write)
            self.plan_api_value_usd += s.reported_usd if price is None else _group_cost(price, g, whole)[0]
            return
        self.reported_usd += s.reported_usd
        if s.unpriced_calls:
            if price is None:
                self.unpriced_calls += s.unpriced_calls
            else:
                usd, capped = _group_cost(price, g, Usage(*s[6:]))
                self.estimated_usd += usd
                self.capped_calls += capped


def route_name(r: Route) -> str:
    return route_of(r.provider, r.session_provider)


def capped(usd: float) -> tuple[float, bool]:
    """An estimate for one call, at most MAX_COST (and whether it was held there)."""
    return (MAX_COST, True) if usd > MAX_COST else (usd, False)


def _group_cost(price: Price, g: CostGroup, u: Usage) -> tuple[float, int]:
    if g.at_ms is not None:  # one call, priced at its own time
        usd, held = capped(price.cost(u.input, u.output, u.cache_read, u.cache_write, at_ms=g.at_ms))
        return usd, int(held)
    usd = price.cost(u.input, u.output, u.cache_read, u.cache_write, tier_input=g.band + 1)
    return usd + u.calls * price.rates_at().request, 0


class Plan(NamedTuple):
    """How to group one scope's calls so that their sums price exactly, from the routes seen in it."""

    bands: tuple[int, ...] = ()
    alone: tuple[Route, ...] = ()
    alone_above: int | None = None
    covered: tuple[Route, ...] = ()  # the plan routes: their calls are valued whatever their cost


class CallCost(NamedTuple):
    """One call's cost as it is paid (`Pricer.call`), with how it was found."""

    cost_usd: float | None  # None: no cost reported and no known price; 0 for a plan's or a free call
    estimated: bool
    capped: bool
    plan_api_value_usd: float | None  # a plan-covered call's list price
    billing: str = PAID  # paid | plan | free


class OneCall(Protocol):
    """What pricing one call reads (`ledger.CallRecord`, the export's `ExportCall`)."""

    @property
    def ts_ms(self) -> int: ...
    @property
    def model(self) -> str | None: ...
    @property
    def provider(self) -> str | None: ...
    @property
    def input(self) -> int: ...
    @property
    def output(self) -> int: ...
    @property
    def cache_read(self) -> int: ...
    @property
    def cache_write(self) -> int: ...
    @property
    def cost(self) -> float | None: ...


class Pricer:
    """The book's prices, keys and names per route, looked up once per report."""

    def __init__(self, ledger: Ledger, book: PriceBook):
        self.ledger, self.book = ledger, book
        self._prices: dict[Route, Price | None] = {}
        self._keys: dict[Route, str] = {}
        self._billed: dict[Route, str] = {}

    def price(self, r: Route) -> Price | None:
        if r not in self._prices:
            self._prices[r] = self.book.prices(r.model, r.provider, r.session_provider)
        return self._prices[r]

    def key(self, r: Route) -> str:
        if r not in self._keys:
            self._keys[r] = self.book.key(r.model, r.provider, r.session_provider)
        return self._keys[r]

    def name(self, r: Route) -> str:
        return self.book.name_of(self.key(r))

    def billed(self, r: Route) -> str:
        """paid, plan or free: by the call's route and model id (`billing.Billing.of`), never its cost."""
        if r not in self._billed:
            self._billed[r] = self.book.billing.of(route_name(r), r.model)
        return self._billed[r]

    def plan_name(self, r: Route) -> str:
        return self.book.billing.name(route_name(r))

    def plan(self, start_ms: int, end_ms: int, session_id: str | None = None) -> Plan:
        return self._plan(self.ledger.priced_routes(start_ms, end_ms, session_id))

    def _plan(self, routes: Sequence[tuple[Route, bool]]) -> Plan:
        """From the scope's routes, each with whether some of its calls have no reported cost."""
        covered = tuple(r for r, _ in routes if self.billed(r) == PLAN)
        wanted = [r for r, no_cost in routes if (no_cost and self.billed(r) == PAID) or r in covered]
        priced = [(r, p) for r in wanted if (p := self.price(r))]
        top = max((p.max_rate for _, p in priced), default=0.0)
        return Plan(
            tuple(sorted({s for _, p in priced for s in p.tier_starts()})),
            tuple(r for r, p in priced if p.periodic),
            int(MAX_COST * 1e6 / top) if top > 0 else None,
            covered,
        )

    def groups(
        self,
        start_ms: int,
        end_ms: int,
        by: tuple[str, ...] = (),
        session_id: str | None = None,
        plan: Plan | None = None,
        buckets: Sequence[Bucket] | None = None,
    ) -> list[CostGroup]:
        """The scope's calls in groups priced exactly (`plan`: from a scope holding this one; `buckets`:
        spans of time inside it, each group's bucket number first in its `by`)."""
        if plan is None and buckets is None:
            return self.groups_and_sessions(start_ms, end_ms, by, session_id)[0]
        p = plan or self.plan(start_ms, end_ms, session_id)
        return self.ledger.cost_groups(
            start_ms, end_ms, p.bands, p.alone, p.alone_above, by, session_id, buckets, p.covered
        )

    def groups_and_sessions(
        self, start_ms: int, end_ms: int, by: tuple[str, ...] = (), session_id: str | None = None
    ) -> tuple[list[CostGroup], int]:
        """`groups` of a scope, with how many sessions its calls are of, found in the same pass."""
        led = self.ledger
        # most scopes: one pass (`Ledger.plain_cost_groups`), its plan made from the groups it read
        groups, biggest, sessions = led.plain_cost_groups(start_ms, end_ms, by, session_id)
        no_cost: dict[Route, bool] = {}
        for g in groups:
            no_cost[g.route] = no_cost.get(g.route, False) or g.sums.unpriced_calls > 0
        p = self._plan(list(no_cost.items()))
        if not p.bands and not p.alone and (p.alone_above is None or biggest <= p.alone_above):
            return (groups if p.covered else [g._replace(floored_input=0) for g in groups]), sessions
        groups = led.cost_groups(start_ms, end_ms, p.bands, p.alone, p.alone_above, by, session_id, None, p.covered)
        return groups, sessions

    def totals(self, start_ms: int, end_ms: int) -> Totals:
        totals = Totals()
        for g in self.groups(start_ms, end_ms):
            totals.add(g, self)
        return totals

    def call(self, c: OneCall, session_provider: str | None) -> CallCost:
        """One call: a paid one's reported cost, else its estimate at its time; a plan call $0 with its list
        price (the cost Cline wrote where none is known) as API value; a free call $0."""
        route = Route(c.model, c.provider, session_provider)
        billed = self.billed(route)
        if billed == FREE:
            return CallCost(0.0, False, False, None, FREE)
        if c.cost is not None and billed == PAID:
            return CallCost(c.cost, False, False, None)
        price = self.price(route)
        if price is None:
            return CallCost(c.cost, False, False, None) if billed == PAID else CallCost(0.0, False, False, c.cost, PLAN)
        usd, held = capped(price.cost(c.input, c.output, c.cache_read, c.cache_write, at_ms=c.ts_ms))
        if billed == PLAN:
            return CallCost(0.0, False, False, usd, PLAN)
        return CallCost(usd, True, held, None)


def covered_by(calls: int, plan_calls: int, free_calls: int) -> str | None:
    """ "plan" or "free" when every one of some calls was a plan's or a free model's (what to show in place of
    their cost, which is nothing); None otherwise. The sessions list, the report and the window use it."""
    if calls and plan_calls == calls:
        return PLAN
    if calls and free_calls == calls:
        return FREE
    return None


def priced_cost(cost_usd: float, calls: int, unpriced_calls: int) -> float | None:
    """The cost to show for a group of calls: None ("unpriced", never $0) when none of them has a price.
    The one place this rule lives: JSON, the terminal, the menu and the window all use it."""
    return None if calls and unpriced_calls >= calls else cost_usd
