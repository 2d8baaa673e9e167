"""The route/id pairs Cline users send, with the list price each must get, and the usages they are priced at;
the list price from genai-prices itself, to check against."""

from __future__ import annotations

from datetime import UTC, datetime

from genai_prices import Usage, calc_price

from .corpus import ms

NOON = ms("2026-11-30T12:00:00Z")
NIGHT = ms("2026-11-30T02:00:00Z")  # inside DeepSeek's 01:00-04:00 UTC window

# (model id as Cline writes it, the call's provider, the genai-prices provider and id of its list price)
ROUTED = [
    ("z-ai/glm-4.6", None, "zai", "glm-4.6"),
    ("GLM-4.6", None, "zai", "glm-4.6"),
    ("GLM-4.6", "zai", "zai", "glm-4.6"),
    ("z-ai/glm-4.6", "openrouter", "openrouter", "z-ai/glm-4.6"),
    ("moonshotai/kimi-k2-0905", None, "openrouter", "moonshotai/kimi-k2-0905"),  # moonshotai lists -preview only
    ("moonshotai/kimi-k2-0905", "openrouter", "openrouter", "moonshotai/kimi-k2-0905"),
    ("kimi-k2-0905-preview", "moonshot", "moonshotai", "kimi-k2-0905-preview"),
    ("qwen/qwen3-coder", None, "openrouter", "qwen/qwen3-coder"),
    ("qwen/qwen3-coder", "cline", "openrouter", "qwen/qwen3-coder"),
    ("z-ai/glm-4.5", None, "zai", "glm-4.5"),
    ("z-ai/glm-5.2", "cline", "zai", "glm-5.2"),
    ("cline-pass/glm-5.2", "cline-pass", "zai", "glm-5.2"),
    ("z-ai/glm-5.2", "cline-pass", "zai", "glm-5.2"),
    ("glm-4.7", None, "zai", "glm-4.7"),
    ("glm-5", None, "zai", "glm-5"),
    ("claude-sonnet-4-5", "anthropic", "anthropic", "claude-sonnet-4-5"),
    ("claude-sonnet-4-5-20250929", None, "anthropic", "claude-sonnet-4-5"),
    ("anthropic/claude-sonnet-4.5", "openrouter", "openrouter", "anthropic/claude-sonnet-4.5"),
    ("anthropic/claude-sonnet-4.5", "cline", "anthropic", "claude-sonnet-4-5"),
    ("deepseek-chat", "deepseek", "deepseek", "deepseek-chat"),
    ("deepseek-flash", "deepseek", "deepseek", "deepseek-flash"),
    ("gpt-4o", "openai-compatible", "openai", "gpt-4o"),
    ("gpt-4o", "openai-native", "openai", "gpt-4o"),
    ("openai/gpt-4o", "cline", "openai", "gpt-4o"),
    ("gemini-2.5-pro", "gemini", "google", "gemini-2.5-pro"),
    ("x-ai/grok-4", "openrouter", "x-ai", "grok-4"),  # not on OpenRouter's list: the vendor's
    # OpenRouter's routing shortcuts: the same model from some of its providers, at the model's price
    ("anthropic/claude-sonnet-4.5:nitro", "openrouter", "openrouter", "anthropic/claude-sonnet-4.5"),
    ("z-ai/glm-4.6:exacto", "openrouter", "openrouter", "z-ai/glm-4.6"),
    ("qwen/qwen3-coder:floor", "openrouter", "openrouter", "qwen/qwen3-coder"),
]
USAGES = [  # input (cache included), output, cache read, cache write
    (12_000, 800, 0, 0),
    (40_000, 1_200, 30_000, 4_000),
    (5_000, 0, 5_000, 0),
    (199_999, 2_000, 150_000, 0),
    (250_000, 1_000, 0, 0),
    (300_000, 5_000, 200_000, 20_000),
]


def list_cost(provider: str, ref: str, usage: tuple[int, int, int, int], at_ms: int) -> float:
    i, o, cr, cw = usage
    when = datetime.fromtimestamp(at_ms / 1000, UTC)
    u = Usage(input_tokens=i, output_tokens=o, cache_read_tokens=cr, cache_write_tokens=cw)
    return float(calc_price(u, ref, provider_id=provider, genai_request_timestamp=when).total_price)
