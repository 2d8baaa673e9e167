"""Cline's route names → genai-prices providers: the one place that knows them.

A call carries a model id as Cline writes it (`z-ai/glm-4.6`, `cline-pass/glm-5.2`, `GLM-4.6`,
`claude-sonnet-4-5`), its `modelInfo.provider` (the route: `openrouter`, `cline-pass`, `anthropic`,
`openai-compatible`, …) and its session's `provider`. `lookups()` turns them into the ordered list of
(genai-prices provider id, model ref) pairs to try; the first that genai-prices knows gives the price.

The order, for a call on route R of a model by vendor V:
1. R is OpenRouter: OpenRouter's own price for the full `vendor/model` id (what OpenRouter bills);
2. R's own price list, when R is a vendor or a host with one (anthropic, openai, deepseek, zai, …);
3. V's price list (V from the id's route prefix, else from the model's family: `glm-` is Z.AI's);
4. OpenRouter's price for `vendor/model` (it lists most vendors' models at their list price);
5. genai-prices' own guess from the model id alone (it sends `glm-*` to zhipuai's CNY list: last).
Cline's own routes (`cline`, `cline-pass`) resell vendors' models, so they have no list of their own:
their calls are priced at the vendor's list price (steps 3-5).
"""

from __future__ import annotations

import re

from .keys import ROUTING_VARIANT

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
    "cline-pass": None,  # the ClinePass subscription: same models, plan-covered
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

# Routes whose calls a subscription covers: Cline reports them at cost 0. Their API value (the same
# tokens at list price) is shown beside the spend, never added to it.
PLAN_ROUTES = frozenset({"cline-pass"})

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

# Leading parts of an id that name Cline's route, not the model's vendor (`cline-pass/glm-5.2`).
ROUTE_PARTS = frozenset({"cline", "cline-pass", "openrouter"})

_DIGIT_DASH = re.compile(r"(?<=\d)-(?=\d)")


def route_of(provider: str | None, session_provider: str | None = None) -> str:
    """The route a call took: its own `modelInfo.provider`, else its session's; '' when neither says."""
    for value in (provider, session_provider):
        if value and value.strip() and value.strip().lower() != "unknown":
            return value.strip().lower()
    return ""


def is_plan(route: str) -> bool:
    """Whether calls on this route (a `route_of()` value) are covered by a plan."""
    return route in PLAN_ROUTES


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
