"""The price book: a model id as Cline writes it (and its route) → canonical key, display name, price.

Settings win: an alias renames a model before anything else, and a `[prices."model"]` table replaces
the shipped rates it names (the others stay). Half a price for a model genai-prices does not know is
no price: never charge a missing rate as $0. Everything genai-prices says is kept in the cache, so
a warm process prices known models without importing it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from os import PathLike

from . import routes
from .cache import Entry, PriceCache
from .keys import model_key, same_model, spelled
from .price import Period, Price, Rate, Rates


class PriceBook:
    """Looks up canonical keys, display names and prices; settings' prices win over the shipped data."""

    def __init__(
        self,
        prices: Mapping[str, Mapping[str, float]] = {},
        aliases: Mapping[str, str] = {},
        cache: str | PathLike[str] | None = None,
    ):
        self.aliases = {model_key(k): v.strip() for k, v in aliases.items() if v and v.strip()}
        self.overrides = {model_key(m, aliases): dict(p) for m, p in prices.items()}
        settings = {"prices": {m: dict(p) for m, p in prices.items()}, "aliases": dict(aliases)}
        self._cache = PriceCache(cache, settings)
        self._lock = threading.Lock()

    # ---- what a call's model is ------------------------------------------------------------------

    def _ref(self, raw: str | None) -> str:
        """The id to look up: an alias's target, else the id as written."""
        text = (raw or "").strip()
        return self.aliases.get(model_key(text), text) if text else ""

    def entry(self, raw: str | None, provider: str | None = None, session_provider: str | None = None) -> Entry:
        ref = self._ref(raw)
        if not ref:
            return Entry("unknown", None)
        slot = f"{routes.route_of(provider, session_provider)}\t{ref.lower()}"
        found = self._cache.models.get(slot)
        if found is None:
            found = self._resolve(slot, ref, routes.route_of(provider, session_provider))
        return found

    def _resolve(self, slot: str, ref: str, route: str) -> Entry:
        from . import genai

        with self._lock:
            hit = genai.resolve(ref, route)
            own = model_key(ref)
            entry = Entry(model_key(hit[1]) if hit and same_model(own, hit[1]) else own, hit[0] if hit else None)
            self._cache.models[slot] = entry
            self._cache.save()
        return entry

    def key(self, raw: str | None, provider: str | None = None, session_provider: str | None = None) -> str:
        """One key per model, whatever id or route it came by (`z-ai/glm-4.6`, `GLM-4.6` → `glm-4-6`)."""
        return self.entry(raw, provider, session_provider).key

    def display(self, raw: str | None, provider: str | None = None, session_provider: str | None = None) -> str:
        """The model's name as its vendor spells it, chosen from its key alone (whatever ids were seen)."""
        return self.name_of(self.key(raw, provider, session_provider))

    def name_of(self, key: str) -> str:
        """The display name of a canonical key (the same for every id of the model, whatever was seen)."""
        if key == "unknown":
            return "unknown model"
        if key not in self._cache.names:
            from . import genai

            with self._lock:
                self._cache.names[key] = genai.name(key)
                self._cache.save()
        return self._cache.names[key] or spelled(key)

    # ---- what it costs -----------------------------------------------------------------------------

    def prices(self, raw: str | None, provider: str | None = None, session_provider: str | None = None) -> Price | None:
        """The price a call of this model on this route pays: settings over shipped; None when unknown."""
        entry = self.entry(raw, provider, session_provider)
        override = self.overrides.get(model_key(self._ref(raw))) or self.overrides.get(entry.key)
        return entry.price if override is None else _merged(entry.price, override)

    def tier_starts(self, calls: Iterable[tuple[str | None, str | None]]) -> list[int]:
        """Every input size at which the price of one of these (model id, route) pairs changes: the
        bands to group calls by in SQL before pricing each group's sums with `Price.cost(tier_input=)`."""
        prices = (self.prices(model, route) for model, route in calls)
        return sorted({start for p in prices if p is not None for start in p.tier_starts()})

    def call_cost(
        self,
        raw: str | None,
        input: int,
        output: int,
        cache_read: int,
        cache_write: int,
        provider: str | None = None,
        session_provider: str | None = None,
        at_ms: int | None = None,
    ) -> float | None:
        """USD for ONE call's tokens at its time (tiers and daily periods applied), None when unpriced."""
        price = self.prices(raw, provider, session_provider)
        return None if price is None else price.cost(input, output, cache_read, cache_write, at_ms)


def _merged(base: Price | None, override: Mapping[str, float]) -> Price | None:
    """The settings' rates over the shipped ones, kind by kind (tiers stay on the kinds not overridden)."""
    if base is None:
        if not {"input", "output"} <= override.keys():
            return None  # half a price is no price
        return Price.flat(
            override["input"], override["output"], override.get("cache_read"), override.get("cache_write")
        )

    def over(r: Rates) -> Rates:
        def pick(kind: str, shipped: Rate | None) -> Rate | None:
            return Rate(float(override[kind])) if kind in override else shipped

        return Rates(
            pick("input", r.input) or r.input,
            pick("output", r.output) or r.output,
            pick("cache_read", r.cache_read),
            pick("cache_write", r.cache_write),
            r.request,
        )

    periods = tuple(Period(over(p.rates), p.since, p.daily) for p in base.periods)
    return Price(periods, "settings", base.provider, base.model, base.version)
