"""Model keys, Cline's routes → genai-prices providers (the one place that knows them), and a resolved price as
plain data with the cost of one call. Never imports genai-prices (book.py does) and never reads a file.

Model keys: `z-ai/glm-4.6`, `GLM-4.6` and `glm-4.6` are the model `glm-4-6`.

A call carries a model id as Cline writes it (`z-ai/glm-4.6`, `cline-pass/glm-5.2`, `GLM-4.6`, `claude-sonnet-4-5`),
its `modelInfo.provider` (the route: `openrouter`, `cline-pass`, `anthropic`, `openai-compatible`, …) and its
session's `provider`. `lookups()` turns them into the ordered list of (genai-prices provider id,
model ref) pairs to try; the first that genai-prices knows gives the price.

The order, for a call on route R of a model by vendor V:
1. R is OpenRouter: OpenRouter's own price for the full `vendor/model` id (what OpenRouter bills);
2. R's own price list, when R is a vendor or a host with one (anthropic, openai, deepseek, zai, …);
3. V's price list (V from the id's route prefix, else from the model's family: `glm-` is Z.AI's);
4. OpenRouter's price for `vendor/model` (it lists most vendors' models at their list price);
5. genai-prices' own guess from the model id alone (it sends `glm-*` to zhipuai's CNY list: last).
Cline's own routes (`cline`, `cline-pass`) resell vendors' models, so they have no list of their own:
their calls are priced at the vendor's list price (steps 3-5).

A resolved price: USD per million tokens by kind, with long-context tiers and dated or daily periods, plain data
that round-trips through JSON (the cache file), so pricing a call never needs genai-prices.

`Price.cost()` applies the rules genai-prices applies for a call's usage:
- a tier's price replaces the base price for *all* of a call's tokens of that kind once the call's
  input (cache reads and writes included) exceeds the tier's start;
- a kind without its own price (often cache writes) is charged as uncached input;
- of dated and daily periods, the last one in force at the call's time wins, else the first.
Cline's `inputTokens` include cache reads and writes: uncached input is what remains (never below 0),
so nothing is charged twice.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, NamedTuple

_DOTTED_VERSION = re.compile(r"(?<=\d)\.(?=\d)")
_SNAPSHOT = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$")  # a dated or moving alias of the same model
# OpenRouter's routing shortcuts: the same model, served by the fastest (`:nitro`), the cheapest (`:floor`) or
# a tool-calling-checked (`:exacto`) set of its providers. Not `:free` (another price) nor `:online` (search fees).
ROUTING_VARIANT = re.compile(r":(nitro|floor|exacto)$", re.IGNORECASE)


def model_key(raw: str | None, aliases: Mapping[str, str] = {}) -> str:
    """The grouping key of a model id: no route prefix, lower case, `4.5` spelled `4-5`; an alias's target's."""
    if not raw or not raw.strip():
        return "unknown"
    key = _DOTTED_VERSION.sub("-", ROUTING_VARIANT.sub("", raw.strip().rsplit("/", 1)[-1].lower()))
    if aliases:
        target = {model_key(k): v for k, v in aliases.items()}.get(key)
        return model_key(target) if target and target.strip() else key
    return key


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
# `4-5`, not `-8b` (a size) nor `-0905`; before a dash, a size or variant tag (`llama3.1:8b`, Ollama's), or the end
_DASHED_VERSION = re.compile(r"(?<!\d)(\d{1,2})-(\d{1,2})(?=[-:]|$)")


def spelled(key: str) -> str:
    """A key written back as a model id for a name no price list gives: `kimi-k2-5` → `kimi-k2.5`
    (dates kept: `…-2024-08-06`). A function of the key alone, so the same whatever ids were seen."""
    dates = _DATE.findall(key)
    out = _DASHED_VERSION.sub(r"\1.\2", _DATE.sub("\0", key))
    for date in dates:
        out = out.replace("\0", date, 1)
    return out


def same_model(key: str, model_id: str) -> bool:
    """Whether genai-prices' model `model_id` is the model `key`, or `key` is a dated snapshot of it
    (`claude-sonnet-4-5-20250929`). Its other matches (prefixes: `deepseek-chat-v3.1` → `deepseek-chat`)
    price a model but do not rename it."""
    theirs = model_key(model_id)
    return key == theirs or _SNAPSHOT.sub("", key) == theirs


# Cline's `modelInfo.provider` / session `provider` → the genai-prices provider with that route's own
# prices. None: the route has no price list of its own (it resells or proxies the vendor's model).
ROUTES: dict[str, str | None] = {
    "anthropic": "anthropic",
    "claude-code": "anthropic",
    "openai": "openai",
    "openai-native": "openai",
    "openai-codex": "openai",
    "openai-compatible": None,  # any endpoint: the vendor's list price
    "openrouter": "openrouter",
    "cline": None,  # Cline's own account: resells vendors' models
    "cline-pass": None,  # the ClinePass subscription: same models, plan-covered (billing.py)
    "deepseek": "deepseek",
    "zai": "zai",
    "z-ai": "zai",
    "zai-coding": "zai",
    "moonshot": "moonshotai",
    "moonshotai": "moonshotai",
    "xai": "x-ai",
    "x-ai": "x-ai",
    "gemini": "google",
    "google": "google",
    "vertex": "google",
    "bedrock": "aws",
    "aws": "aws",
    "azure": "azure",
    "mistral": "mistral",
    "groq": "groq",
    "together": "together",
    "fireworks": "fireworks",
    "cerebras": "cerebras",
    "minimax": "minimax",
    "nebius": None,
    "qwen": None,  # Alibaba's DashScope: not in genai-prices; OpenRouter lists Qwen at its price
    "qwen-code": None,
    "requesty": None,
    "litellm": None,
    "ollama": None,  # local models have no list price: unpriced unless the settings give one
    "lmstudio": None,
}

# The route prefix of an OpenRouter-shaped id (`z-ai/glm-4.6`) → the vendor's genai-prices provider.
VENDOR_PREFIXES: dict[str, str | None] = {
    "z-ai": "zai",
    "zai": "zai",
    "anthropic": "anthropic",
    "openai": "openai",
    "moonshotai": "moonshotai",
    "x-ai": "x-ai",
    "google": "google",
    "deepseek": "deepseek",
    "mistralai": "mistral",
    "minimax": "minimax",
    "qwen": None,  # OpenRouter only
    "meta-llama": None,
}

# A bare id's family (its start) → (the vendor's genai-prices provider, its OpenRouter prefix).
FAMILIES: tuple[tuple[str, str | None, str], ...] = (
    ("glm-", "zai", "z-ai"),
    ("claude", "anthropic", "anthropic"),
    ("gpt-", "openai", "openai"),
    ("o1", "openai", "openai"),
    ("o3", "openai", "openai"),
    ("o4", "openai", "openai"),
    ("codex", "openai", "openai"),
    ("kimi", "moonshotai", "moonshotai"),
    ("moonshot", "moonshotai", "moonshotai"),
    ("grok", "x-ai", "x-ai"),
    ("gemini", "google", "google"),
    ("gemma", "google", "google"),
    ("deepseek", "deepseek", "deepseek"),
    ("qwen", None, "qwen"),
    ("mistral", "mistral", "mistralai"),
    ("codestral", "mistral", "mistralai"),
    ("devstral", "mistral", "mistralai"),
    ("minimax", "minimax", "minimax"),
)

# Leading parts of an id that name Cline's route, not the model's vendor (`cline-pass/glm-5.2`; `cline-free/glm-5.2`
# is the same model, which Cline offers free: billing.py says so, its list price is the vendor's).
ROUTE_PARTS = frozenset({"cline", "cline-pass", "cline-free", "openrouter"})

_DIGIT_DASH = re.compile(r"(?<=\d)-(?=\d)")


def split_id(raw: str) -> tuple[str | None, str]:
    """`cline-pass/z-ai/glm-5.2` → ('z-ai', 'glm-5.2'); `GLM-4.6` → (None, 'GLM-4.6')."""
    parts = [p for p in raw.strip().split("/") if p]
    while len(parts) > 1 and parts[0].lower() in ROUTE_PARTS:
        parts = parts[1:]
    if not parts:
        return None, ""
    return (parts[-2].lower() if len(parts) > 1 else None), ROUTING_VARIANT.sub("", parts[-1])


def vendor_of(prefix: str | None, bare: str) -> tuple[str | None, str | None]:
    """(the vendor's genai-prices provider, its OpenRouter prefix) for a model id, as far as known."""
    if prefix is not None:
        return VENDOR_PREFIXES.get(prefix), prefix
    low = bare.lower()
    for start, provider, or_prefix in FAMILIES:
        if low.startswith(start):
            return provider, or_prefix
    return None, None


def spellings(bare: str) -> list[str]:
    """The id as written, then with `4-6` spelled `4.6` (an alias target or a key: `glm-4-6`)."""
    return list(dict.fromkeys((bare, _DIGIT_DASH.sub(".", bare))))


def lookups(raw: str, route: str = "") -> list[tuple[str | None, str]]:
    """Ordered (genai-prices provider id or None for its own guess, model ref) pairs to try."""
    prefix, bare = split_id(raw)
    if not bare:
        return []
    if bare.lower().endswith(":free"):  # OpenRouter's free variant: its own listing or no price, never the paid one
        return [("openrouter", f"{prefix}/{bare}" if prefix else bare)]
    vendor, or_prefix = vendor_of(prefix, bare)
    own = ROUTES.get(route)
    routed = [f"{or_prefix}/{b}" for b in spellings(bare)] if or_prefix else []
    plain = spellings(bare)
    out: list[tuple[str | None, str]] = []
    if own == "openrouter":
        out += [("openrouter", ref) for ref in routed or plain]
    if own and own != "openrouter":
        out += [(own, ref) for ref in plain]
    if vendor:
        out += [(vendor, ref) for ref in plain]
    out += [("openrouter", ref) for ref in routed]
    out += [(None, ref) for ref in plain]
    return list(dict.fromkeys(out))


KINDS = ("input", "output", "cache_read", "cache_write")


class Rate(NamedTuple):
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


class Rates(NamedTuple):
    """A model's price per token of each kind (and per request, where charged)."""

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


class Period(NamedTuple):
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


class Price(NamedTuple):
    """Where a price came from and its periods (one, for most models)."""

    periods: tuple[Period, ...]
    source: str  # "genai-prices" | "settings"
    provider: str | None = None  # genai-prices provider id
    model: str | None = None  # genai-prices model id
    version: str | None = None  # genai-prices version

    def rates_at(self, at_ms: int | None = None) -> Rates:
        if len(self.periods) == 1:
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
        if len(self.periods) != 1:
            return False
        r = self.periods[0].rates
        return not r.request and not any(
            x is not None and x.tiers for x in (r.input, r.output, r.cache_read, r.cache_write)
        )

    @property
    def periodic(self) -> bool:
        """Whether the rates depend on the call's time (dated or daily periods): price such calls one by one."""
        return len(self.periods) != 1

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
