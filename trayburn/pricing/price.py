"""A resolved price: USD per million tokens by kind, with long-context tiers and dated or daily periods.

Plain data that round-trips through JSON (the cache file), so pricing a call never needs
genai-prices. `Price.cost()` applies the rules genai-prices applies for a call's usage:
- a tier's price replaces the base price for *all* of a call's tokens of that kind once the call's
  input (cache reads and writes included) exceeds the tier's start;
- a kind without its own price (often cache writes) is charged as uncached input;
- of dated and daily periods, the last one in force at the call's time wins, else the first.
Cline's `inputTokens` include cache reads and writes: uncached input is what remains (never below 0),
so nothing is charged twice.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

KINDS = ("input", "output", "cache_read", "cache_write")


@dataclass(frozen=True)
class Rate:
    """USD per million tokens of one kind: `base`, or a tier's price once the input passes its start."""

    base: float
    tiers: tuple[tuple[int, float], ...] = ()  # (start, price), by start

    def at(self, input_tokens: int) -> float:
        for start, price in reversed(self.tiers):
            if input_tokens > start:
                return price
        return self.base

    def to_json(self) -> float | dict[str, Any]:
        return self.base if not self.tiers else {"base": self.base, "tiers": [list(t) for t in self.tiers]}

    @classmethod
    def from_json(cls, value: Any) -> Rate:
        if isinstance(value, dict):
            return cls(float(value["base"]), tuple((int(s), float(p)) for s, p in value["tiers"]))
        return cls(float(value))


@dataclass(frozen=True)
class Rates:
    input: Rate
    output: Rate
    cache_read: Rate | None = None  # None: charged as uncached input
    cache_write: Rate | None = None
    request: float = 0.0  # USD per call, on the few models that charge one

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: (r.to_json() if (r := getattr(self, k)) is not None else None) for k in KINDS}
        if self.request:
            out["request"] = self.request
        return out

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Rates:
        def rate(kind: str) -> Rate | None:
            return None if value.get(kind) is None else Rate.from_json(value[kind])

        return cls(Rate.from_json(value["input"]), Rate.from_json(value["output"]), rate("cache_read"),
                   rate("cache_write"), float(value.get("request", 0.0)))  # fmt: skip


@dataclass(frozen=True)
class Period:
    """Rates in force from a UTC date on (`since`), or each day in a UTC window (`daily`, seconds)."""

    rates: Rates
    since: str | None = None  # ISO date
    daily: tuple[int, int] | None = None  # [start, end) seconds after UTC midnight; may wrap

    def active(self, when: datetime) -> bool:
        if self.since is not None and when.date().isoformat() < self.since:
            return False
        if self.daily is not None:
            now = when.hour * 3600 + when.minute * 60 + when.second
            start, end = self.daily
            return (start <= now < end) if start <= end else (now >= start or now < end)
        return True

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rates": self.rates.to_json()}
        if self.since is not None:
            out["since"] = self.since
        if self.daily is not None:
            out["daily_utc_s"] = list(self.daily)
        return out

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Period:
        daily = value.get("daily_utc_s")
        return cls(
            Rates.from_json(value["rates"]), value.get("since"), (int(daily[0]), int(daily[1])) if daily else None
        )


@dataclass(frozen=True)
class Price:
    """Where a price came from and its periods (one, for most models)."""

    periods: tuple[Period, ...]
    source: str  # "genai-prices" | "settings"
    provider: str | None = None  # genai-prices provider id
    model: str | None = None  # genai-prices model id
    version: str | None = None  # genai-prices version
    _single: bool = field(default=False, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_single", len(self.periods) == 1)

    def rates_at(self, at_ms: int | None = None) -> Rates:
        if self._single:
            return self.periods[0].rates
        when = datetime.fromtimestamp((time.time() if at_ms is None else at_ms / 1000), UTC)
        for period in reversed(self.periods):
            if period.active(when):
                return period.rates
        return self.periods[0].rates

    def cost(
        self,
        input: int,
        output: int,
        cache_read: int = 0,
        cache_write: int = 0,
        at_ms: int | None = None,
        tier_input: int | None = None,
    ) -> float:
        """USD for one call's tokens (`input` includes the cache tokens, as Cline counts them).

        With `tier_input`, the tokens may be summed over calls that all fall in one tier band (each
        call's input floored at its cache tokens): the band is chosen by `tier_input`, e.g. the band's
        lower bound + 1, and the per-call charge is left out (add `request` x calls)."""
        r = self.rates_at(at_ms)
        total_in = max(input, cache_read + cache_write)
        size = total_in if tier_input is None else tier_input
        in_rate = r.input.at(size)
        usd = (total_in - cache_read - cache_write) * in_rate + output * r.output.at(size)
        usd += cache_read * (in_rate if r.cache_read is None else r.cache_read.at(size))
        usd += cache_write * (in_rate if r.cache_write is None else r.cache_write.at(size))
        return usd / 1e6 + (r.request if tier_input is None else 0.0)

    # the base rates in force now, USD per million (what a person compares with a price list)
    @property
    def input(self) -> float:
        return self.rates_at().input.base

    @property
    def output(self) -> float:
        return self.rates_at().output.base

    @property
    def cache_read(self) -> float:
        r = self.rates_at()
        return (r.cache_read or r.input).base

    @property
    def cache_write(self) -> float:
        r = self.rates_at()
        return (r.cache_write or r.input).base

    @property
    def linear(self) -> bool:
        """One period, no tiers, no per-call charge: the cost of summed tokens is the sum of the costs."""
        if not self._single:
            return False
        r = self.periods[0].rates
        return not r.request and not any(
            x is not None and x.tiers for x in (r.input, r.output, r.cache_read, r.cache_write)
        )

    @property
    def periodic(self) -> bool:
        """Whether the rates depend on the call's time (dated or daily periods): price such calls one by one."""
        return not self._single

    @property
    def max_rate(self) -> float:
        """The highest USD per million tokens of any kind, tier or period (what bounds a call's cost)."""
        rates = [p.rates for p in self.periods]
        rs = [x for r in rates for x in (r.input, r.output, r.cache_read, r.cache_write) if x is not None]
        return max(max(x.base, *(v for _, v in x.tiers)) if x.tiers else x.base for x in rs)

    def tier_starts(self) -> list[int]:
        """Every input size at which some rate changes (for grouping calls before pricing them)."""
        rates = [p.rates for p in self.periods]
        rs = [x for r in rates for x in (r.input, r.output, r.cache_read, r.cache_write) if x is not None]
        return sorted({start for x in rs for start, _ in x.tiers})

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "provider": self.provider,
            "model": self.model,
            "version": self.version,
            "periods": [p.to_json() for p in self.periods],
        }

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Price:
        periods = tuple(Period.from_json(p) for p in value["periods"])
        return cls(periods, value["source"], value.get("provider"), value.get("model"), value.get("version"))

    @classmethod
    def flat(cls, input: float, output: float, cache_read: float | None = None, cache_write: float | None = None,
             source: str = "settings") -> Price:  # fmt: skip
        opt = lambda v: None if v is None else Rate(v)  # noqa: E731
        return cls((Period(Rates(Rate(input), Rate(output), opt(cache_read), opt(cache_write))),), source)
