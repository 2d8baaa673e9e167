"""A period's calls at list price, beside the spend and never in it: what the cache saved (`cache_saved`) and what
the same calls would have cost on another model (`reprice`, a what-if). Never speaks SQL (the ledger's
`cost_groups` does) and never reads a file.

What the cache saved, per model: the cache-read tokens, what they would have cost at the model's input price
minus what they cost at its cache-read price (its list prices on the calls' route, tiers applied per call), and
the share of input tokens read from the cache. A model without a known price has its tokens counted and its
saving unknown (None), never $0.

The what-if: every counted call of the period with its own tokens (input including the cache tokens, output,
cache reads and writes) priced at the other model's list price on the call's own route (an OpenRouter call at
OpenRouter's price for that model; a vendor's route at the vendor's), tiers and dated prices applied per call as
`Price.cost` does. Calls on a route where the model has no known price are counted apart and named, never $0.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ledger import CostGroup, Ledger, Route
from ..pricing import Price, PriceBook
from .costs import Plan, Pricer, Totals, route_name


@dataclass
class CacheSaving:
    """What one model's cache reads saved at list price."""

    key: str  # the model key rows group by
    name: str
    input_tokens: int = 0  # cache tokens included
    cache_read_tokens: int = 0
    saved_usd: float | None = 0.0  # None: no known price for some of its calls
    unpriced_calls: int = 0

    @property
    def hit_share(self) -> float | None:
        """The share of input tokens read from the cache (None without input)."""
        return self.cache_read_tokens / self.input_tokens if self.input_tokens else None

    def to_json(self) -> dict:
        return {
            "key": self.key,
            "name": self.name,
            "input_tokens": self.input_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_hit_share": None if self.hit_share is None else round(self.hit_share, 6),
            "saved_usd": None if self.saved_usd is None else round(self.saved_usd, 9),
            "unpriced_calls": self.unpriced_calls,
        }


@dataclass
class CacheReport:
    """What cache reads saved over a period, per model and in all."""

    models: list[CacheSaving] = field(default_factory=list)
    total: CacheSaving = field(default_factory=lambda: CacheSaving("total", "total"))

    def to_json(self) -> dict:
        return {"models": [m.to_json() for m in self.models], "total": self.total.to_json()}


def cache_saved(
    ledger: Ledger, book: PriceBook, start_ms: int, end_ms: int, session_id: str | None = None
) -> CacheReport:
    """What cache reads saved in [start, end), per model and in all, at list price."""
    pricer = Pricer(ledger, book)
    rows: dict[str, CacheSaving] = {}
    total = CacheSaving("total", "total")
    plan, by = _list_plan(pricer, start_ms, end_ms)
    for g in pricer.groups(start_ms, end_ms, by, session_id, plan):
        key = pricer.key(g.route)
        row = rows.setdefault(key, CacheSaving(key, pricer.name(g.route)))
        saved = _saved(pricer.price(g.route), g)
        for r in (row, total):
            r.input_tokens += max(g.sums.input, g.sums.cache_read + g.sums.cache_write)
            r.cache_read_tokens += g.sums.cache_read
            if saved is None:
                r.unpriced_calls += g.sums.calls
                if g.sums.cache_read:
                    r.saved_usd = None
            elif r.saved_usd is not None:
                r.saved_usd += saved
    models = sorted(rows.values(), key=lambda r: (-(r.saved_usd or 0.0), -r.cache_read_tokens, r.name))
    return CacheReport([m for m in models if m.input_tokens], total)


def _saved(price: Price | None, g: CostGroup) -> float | None:
    """The group's cache reads at the input price minus at the cache-read price (None: no price)."""
    if price is None:
        return None
    s = g.sums
    if not s.cache_read:
        return 0.0
    at, band = _at(g), g.band + 1
    fresh = price.cost(s.input, 0, 0, s.cache_write, at_ms=at, tier_input=band)  # cache reads as uncached input
    return fresh - price.cost(s.input, 0, s.cache_read, s.cache_write, at_ms=at, tier_input=band)


def _list_plan(pricer: Pricer, start_ms: int, end_ms: int, target: str | None = None) -> tuple[Plan, tuple[str, ...]]:
    """How to group every call of the scope (reported costs or not) so that its sums price exactly at list price:
    by the tier bands of every route's price (or of `target`'s on every route), and by quarter of an hour when a
    price depends on the time (dated or daily prices change on a quarter: priced at its start)."""
    prices = [p for r in _routes(pricer, start_ms, end_ms) if (p := _price_of(pricer, r, target)) is not None]
    bands = tuple(sorted({s for p in prices for s in p.tier_starts()}))
    return Plan(bands, (), None), ("quarter",) if any(p.periodic for p in prices) else ()


def _at(g: CostGroup) -> int | None:
    """The time a group of calls is priced at: its quarter's start when grouped by quarter."""
    return g.by[0] if g.by else None


def _routes(pricer: Pricer, start_ms: int, end_ms: int) -> list[Route]:
    return list(dict.fromkeys(g.route for g in pricer.groups(start_ms, end_ms, plan=Plan())))


def _price_of(pricer: Pricer, r: Route, target: str | None) -> Price | None:
    return pricer.price(r) if target is None else pricer.book.prices(target, r.provider, r.session_provider)


@dataclass
class WhatIf:
    """A period's calls priced on another model: a what-if, never spend."""

    model: str  # as asked
    name: str  # its display name
    cost_usd: float | None  # None: no call of the period has a price on that model
    calls: int
    unpriced_calls: int  # calls on a route where that model has no known price
    unpriced_routes: list[str]
    spend_usd: float  # what the same calls cost as counted (reported, else estimated), for comparison
    spend_unpriced_calls: int

    def to_json(self) -> dict:
        return {
            "what_if": True,
            "model": self.model,
            "name": self.name,
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 9),
            "calls": self.calls,
            "unpriced_calls": self.unpriced_calls,
            "unpriced_routes": self.unpriced_routes,
            "spend_usd": round(self.spend_usd, 9),
            "spend_unpriced_calls": self.spend_unpriced_calls,
        }


def reprice(ledger: Ledger, book: PriceBook, start_ms: int, end_ms: int, model: str) -> WhatIf:
    """Counted calls in [start, end) at `model`'s list price, on each call's own route."""
    pricer = Pricer(ledger, book)
    spend = Totals()
    usd, priced, unpriced, missing = 0.0, 0, 0, list[str]()
    plan, by = _list_plan(pricer, start_ms, end_ms, model)
    for g in pricer.groups(start_ms, end_ms, by, plan=plan):
        spend.add(g, pricer)
        price = book.prices(model, g.route.provider, g.route.session_provider)
        if price is None:
            unpriced += g.sums.calls
            route = route_name(g.route)
            if route not in missing:
                missing.append(route)
            continue
        usd, priced = usd + _cost(price, g), priced + g.sums.calls
    calls = priced + unpriced
    name = book.display(model)
    return WhatIf(model, name, usd if priced or not calls else None, calls, unpriced, missing, spend.cost_usd,
                  spend.unpriced_calls)  # fmt: skip


def _cost(price: Price, g: CostGroup) -> float:
    """A group's tokens at list price (its tier band's rates, its quarter's when grouped by quarter)."""
    s, at = g.sums, _at(g)
    usd = price.cost(s.input, s.output, s.cache_read, s.cache_write, at_ms=at, tier_input=g.band + 1)
    return usd + s.calls * price.rates_at(at).request
