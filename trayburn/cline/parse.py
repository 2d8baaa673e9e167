"""Cline's files, from bytes to facts. No I/O here: the caller owns files and checkpoints.

Follows the rules in cline-format.md: one call per assistant message with a non-zero metrics
block; `inputTokens` include cache reads and writes; a reported cost (0 included) is used as is.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any

import msgspec


class ParseError(ValueError):
    """The bytes are not the document we expected (often a file caught mid-write)."""


MAX_TOKENS = 2**53  # above this a token count is garbage (and would not fit SQLite's INTEGER)
MAX_MS = 253402300799999  # 9999-12-31T23:59:59.999Z

# ---- typed fast path: only the fields we use are decoded; the rest is skipped -------------------
# The decoder also checks the values the rules care about. A document that does not fit (a message with
# another role, metrics that are not an object, a token count that is not a sane integer, a negative
# cost, …) goes whole to the generic path, which applies the same rules to any valid JSON.

_Count = Annotated[int, msgspec.Meta(ge=0, le=MAX_TOKENS)]
_Cost = Annotated[float, msgspec.Meta(ge=0)]


class _Block(msgspec.Struct):
    type: Any = None
    name: Any = None


class _Metrics(msgspec.Struct):
    inputTokens: _Count | None = None
    outputTokens: _Count | None = None
    cacheReadTokens: _Count | None = None
    cacheWriteTokens: _Count | None = None
    cost: _Cost | None = None


class _ModelInfo(msgspec.Struct):
    id: Any = None
    provider: Any = None


class _Assistant(msgspec.Struct, tag_field="role", tag="assistant"):
    id: Any = None
    ts: Any = None
    modelInfo: _ModelInfo | None = None
    metrics: _Metrics | None = None
    content: str | list[_Block] | None = None


class _User(msgspec.Struct, tag_field="role", tag="user"):
    """Never a call: its content (tool results, often most of the file) is skipped unread."""


class _MessagesDoc(msgspec.Struct):
    agent: Any = None
    messages: list[_Assistant | _User] = []


_fast = msgspec.json.Decoder(_MessagesDoc | list[_Assistant | _User])


@dataclass(slots=True)
class Call:
    key: str  # identity across sessions: the message id (or session:index when it has none)
    index: int
    ts_ms: int | None  # None: use the session's start
    model: str | None  # modelInfo.id; None: use the manifest's model
    input: int
    output: int
    cache_read: int
    cache_write: int
    cost: float | None  # as reported; None when absent or unusable
    tools: tuple[str, ...]
    provider: str | None = None  # modelInfo.provider; None: use the session's provider


@dataclass(slots=True)
class Messages:
    agent: str  # lead | subagent | teammate
    calls: list[Call]


@dataclass(slots=True)
class Manifest:
    session_id: str
    started_ms: int | None
    ended_ms: int | None
    status: str
    title: str | None
    prompt: str | None
    cwd: str | None
    workspace_root: str | None
    model: str | None
    provider: str | None
    source: str | None
    messages_path: str | None
    forked_from: str | None
    rollup: Call | None  # metadata.usage as one call, used only when no message has metrics


def _tokens(value: Any) -> int:
    """Token fields that are not non-negative finite numbers (of a sane size) count as 0."""
    if type(value) is int and 0 <= value <= MAX_TOKENS:  # the common case, decided first
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_TOKENS:
        return 0
    return int(value)


def _cost(value: Any) -> float | None:
    if type(value) is float and 0 <= value < math.inf:  # the common case, decided first
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        return None
    return float(value)


def to_ms(value: Any) -> int | None:
    """Epoch ms from ms, seconds (below 1e12) or an ISO string (UTC unless it says otherwise);
    None when missing, 0 or unusable."""
    if type(value) is int and 1e12 <= value <= MAX_MS:  # the common case (epoch ms), decided first
        return value
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and 0 < value <= MAX_MS:
        return int(value) if value >= 1e12 else round(value * 1000)
    if isinstance(value, str) and value.strip():
        return _iso_ms(value.strip())
    return None


def id_ms(session_id: str) -> int | None:
    """The epoch ms a session id begins with (`1796023651231_hi7ti` → 1796023651231), if plausible."""
    head = session_id.partition("_")[0]
    if not (head.isascii() and head.isdigit()):
        return None
    value = int(head)
    return value if 1e12 <= value <= MAX_MS else None


def _iso_ms(text: str) -> int | None:
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return int(when.timestamp() * 1000)


def _tool_names(content: Any) -> tuple[str, ...]:
    if not isinstance(content, list):
        return ()
    names = []
    for block in content:
        if type(block) is _Block:
            kind, name = block.type, block.name
        elif isinstance(block, dict):
            kind, name = block.get("type"), block.get("name")
        else:
            continue
        if kind == "tool_use" and isinstance(name, str):
            names.append(name)
    return tuple(names)


def _usage(get: Any, cost_field: str) -> tuple[tuple[int, int, int, int], float | None]:
    """Tokens and cost from a plain dict's `get` (the generic path and the manifest's rollup)."""
    tokens = (
        _tokens(get("inputTokens")),
        _tokens(get("outputTokens")),
        _tokens(get("cacheReadTokens")),
        _tokens(get("cacheWriteTokens")),
    )
    return tokens, _cost(get(cost_field))


def _calls(messages: list, session_id: str) -> list[Call]:
    calls = []
    for index, m in enumerate(messages):
        if type(m) is _Assistant:  # the typed fast path: values already checked by the decoder
            metrics, info = m.metrics, m.modelInfo
            if metrics is None:
                continue
            tokens = (
                metrics.inputTokens or 0,
                metrics.outputTokens or 0,
                metrics.cacheReadTokens or 0,
                metrics.cacheWriteTokens or 0,
            )
            cost = metrics.cost
            model, provider = (info.id, info.provider) if info is not None else (None, None)
            mid, ts, content = m.id, m.ts, m.content
        elif isinstance(m, dict):  # the generic path
            metrics, info = m.get("metrics"), m.get("modelInfo")
            if m.get("role") != "assistant" or not isinstance(metrics, dict):
                continue
            tokens, cost = _usage(metrics.get, "cost")
            model, provider = (info.get("id"), info.get("provider")) if isinstance(info, dict) else (None, None)
            mid, ts, content = m.get("id"), m.get("ts"), m.get("content")
        else:
            continue  # a user message, or not an object: no call, but it keeps its index
        if any(tokens) or cost:
            key = mid if isinstance(mid, str) and mid else f"{session_id}:{index}"
            calls.append(Call(key, index, to_ms(ts), _str(model), *tokens, cost, _tool_names(content), _str(provider)))
    return calls


def parse_messages(data: bytes, session_id: str) -> Messages:
    """A `*.messages.json` document (or Cline's older bare array) → its calls."""
    try:
        doc = _fast.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        doc = _slow(data)
    if isinstance(doc, _MessagesDoc):
        agent = doc.agent if isinstance(doc.agent, str) else "lead"
        return Messages(agent, _calls(doc.messages, session_id))
    if isinstance(doc, dict):
        messages = doc.get("messages")
        if not isinstance(messages, list):
            raise ParseError("no 'messages' list")
        agent = doc.get("agent") if isinstance(doc.get("agent"), str) else "lead"
        return Messages(agent, _calls(messages, session_id))  # non-objects are skipped, keeping indexes
    if isinstance(doc, list):
        return Messages("lead", _calls(doc, session_id))
    raise ParseError("not a messages document")


def _slow(data: bytes) -> Any:
    """Generic JSON, for documents whose shape the typed decoder refuses (odd but valid)."""
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise ParseError(_describe(data, exc)) from None


def _describe(data: bytes, exc: Exception) -> str:
    if not data.strip():
        return "empty file (being written?)"
    if b"\x00" in data[:4096]:
        return "binary data, not JSON"
    return f"invalid JSON ({str(exc).split(':')[0]}), perhaps caught mid-write"


def parse_manifest(data: bytes) -> Manifest:
    """A session manifest `<id>.json` → what we keep of it. Raises ParseError if not a JSON object."""
    try:
        doc = msgspec.json.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        doc = _slow(data)  # valid JSON msgspec refuses (1e400) still parses; the rest raises ParseError
    if not isinstance(doc, dict):
        raise ParseError("not a JSON object")
    sid = doc.get("session_id")
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    fork = meta.get("fork") if isinstance(meta.get("fork"), dict) else {}
    return Manifest(
        session_id=sid if isinstance(sid, str) else "",
        started_ms=to_ms(doc.get("started_at")),
        ended_ms=to_ms(doc.get("ended_at")),
        status=_str(doc.get("status")) or "unknown",
        title=_str(meta.get("title")),
        prompt=_str(doc.get("prompt")),
        cwd=_str(doc.get("cwd")),
        workspace_root=_str(doc.get("workspace_root")),
        model=_str(doc.get("model")),
        provider=_str(doc.get("provider")),
        source=_str(doc.get("source")),
        messages_path=_str(doc.get("messages_path")),
        forked_from=_str(fork.get("forkedFromSessionId")),
        rollup=_rollup(meta.get("usage"), sid if isinstance(sid, str) else ""),
    )


def _rollup(usage: Any, session_id: str) -> Call | None:
    if not isinstance(usage, dict):
        return None
    tokens, cost = _usage(usage.get, "totalCost")
    return Call(f"{session_id}:rollup", -1, None, None, *tokens, cost, ()) if any(tokens) or cost else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None
