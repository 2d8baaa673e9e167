"""Model names and prices: normalising `z-ai/glm-5.2`, `cline-pass/glm-5.2`, `GLM-5.2` to one model,
and estimating a call's cost from its tokens where Cline reported none.

Prices come from data shipped with trayburn (the `genai-prices` package's bundled snapshot; never
its network updater) and from the settings file's `[prices."model"]` tables, which win. Cline's
`inputTokens` already include cache reads and writes, so uncached input is what remains after
taking them out; nothing is charged twice.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

_DOTTED_VERSION = re.compile(r"(?<=\d)\.(?=\d)")


@dataclass(frozen=True)
class UnitPrices:
    """USD per million tokens."""

    input: float
    output: float
    cache_read: float
    cache_write: float
    source: str  # "settings" | "genai-prices"

    def cost(self, input: int, output: int, cache_read: int, cache_write: int) -> float:
        uncached = max(input - cache_read - cache_write, 0)
        return (
            uncached * self.input + output * self.output + cache_read * self.cache_read + cache_write * self.cache_write
        ) / 1e6


def model_key(raw: str | None, aliases: Mapping[str, str] = {}) -> str:
    """The grouping key of a model id: no route prefix, lower case, `4.5` spelled `4-5`."""
    if not raw or not raw.strip():
        return "unknown"
    key = _DOTTED_VERSION.sub("-", raw.strip().rsplit("/", 1)[-1].lower())
    target = _alias_table(tuple(sorted(aliases.items()))).get(key)
    return target or key


@lru_cache(maxsize=16)
def _alias_table(items: tuple[tuple[str, str], ...]) -> dict[str, str]:
    return {model_key(k): model_key(v) for k, v in items}


class PriceBook:
    """Looks up display names and unit prices; settings' prices win over the shipped data."""

    def __init__(self, prices: Mapping[str, Mapping[str, float]] = {}, aliases: Mapping[str, str] = {}):
        self.aliases = dict(aliases)
        self.overrides = {model_key(m, self.aliases): dict(p) for m, p in prices.items()}

    def key(self, raw: str | None) -> str:
        return model_key(raw, self.aliases)

    def display(self, raw: str | None) -> str:
        key = self.key(raw)
        if key == "unknown":
            return "unknown model"
        found = _shipped(key, self._name(raw, key))
        if found and any(ch.isupper() for ch in found[1]) and model_key(found[1].replace(" ", "-")) == key:
            return found[1]  # the same model, better spelled: "Claude Sonnet 4.5", "GLM-5.2"
        return self._name(raw, key)

    def _name(self, raw: str | None, key: str) -> str:
        """The name to look up: the raw id without its route, unless an alias renamed it."""
        return _stripped(raw) if model_key(raw) == key else key

    def prices(self, raw: str | None) -> UnitPrices | None:
        key = self.key(raw)
        shipped = _shipped(key, self._name(raw, key))
        base = shipped[0] if shipped else None
        override = self.overrides.get(key)
        if override is None:
            return base
        if base is None and not {"input", "output"} <= override.keys():
            return None  # half a price is no price: never charge a missing rate as $0
        # missing fields: the shipped price when there is one; cache tokens of an unknown model at the input rate
        fallback = base or UnitPrices(0, 0, override["input"], override["input"], "settings")
        return UnitPrices(
            override.get("input", fallback.input),
            override.get("output", fallback.output),
            override.get("cache_read", fallback.cache_read),
            override.get("cache_write", fallback.cache_write),
            "settings",
        )

    def estimate(self, raw: str | None, input: int, output: int, cache_read: int, cache_write: int) -> float | None:
        """USD for these tokens, or None when the model has no known price."""
        unit = self.prices(raw)
        return None if unit is None else unit.cost(input, output, cache_read, cache_write)


def _stripped(raw: str | None) -> str:
    return (raw or "").strip().rsplit("/", 1)[-1]


@lru_cache(maxsize=512)
def _shipped(key: str, stripped: str) -> tuple[UnitPrices, str] | None:
    """Unit prices and display name from genai-prices' bundled data, probed below any price tier."""
    from genai_prices import Usage, calc_price

    for ref in dict.fromkeys((stripped, stripped.lower(), key, _DOTTED_VERSION.sub(".", key))):
        if not ref:
            continue
        try:
            probe = calc_price(Usage(output_tokens=1000), ref)
        except (LookupError, ValueError):
            continue
        return _probe(ref, probe), probe.model.name or probe.model.id
    return None


def _probe(ref: str, output_probe) -> UnitPrices:
    from genai_prices import Usage, calc_price

    def per_m(**tokens: int) -> float:
        return float(calc_price(Usage(**tokens), ref).total_price) * 1000

    return UnitPrices(
        input=per_m(input_tokens=1000),
        output=float(output_probe.total_price) * 1000,
        cache_read=per_m(input_tokens=1000, cache_read_tokens=1000),
        cache_write=per_m(input_tokens=1000, cache_write_tokens=1000),
        source="genai-prices",
    )
