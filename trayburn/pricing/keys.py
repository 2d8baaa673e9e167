"""Model keys: `z-ai/glm-4.6`, `GLM-4.6` and `glm-4.6` are the model `glm-4-6`."""

from __future__ import annotations

import re
from collections.abc import Mapping

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
