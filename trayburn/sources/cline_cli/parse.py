"""The Cline CLI's files, from bytes to facts: a manifest to a `SessionRecord`, a messages file to its `Call`s.
Never touches disk: the caller owns files and checkpoints.

Follows the rules in docs/formats/cline-cli.md: one call per assistant message with a non-zero metrics
block; `inputTokens` include cache reads and writes; a reported cost (0 included) is used as is.

Whatever a file holds, what comes out is storable and displayable: strings without lone surrogates,
times local time can show on every platform, costs finite and at most MAX_COST per call, and a
valid document parses however deeply its tool input nests: JSON nested deeper than the decoders recurse (tool
input 1,200 levels deep) is made shallow enough to decode, without recursing, on the generic path.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from types import ModuleType
from typing import Any

from ...files import blake2b
from ..base import (
    MAX_COST,
    MAX_MS,
    MIN_MS,
    Call,
    SessionRecord,
    command_words,
    reported_cost,
    storable_id,
    token_count,
)
from ..base import storable_text as _text


class ParseError(ValueError):
    """The bytes are not the document we expected (often a file caught mid-write)."""


# The typed fast path (msgspec structs decoding only the fields used) lives in typed.py, imported at the first
# parse: a refresh that finds nothing changed never pays for msgspec.


@dataclass(slots=True)
class Messages:
    agent: str  # lead | subagent | teammate
    calls: list[Call]
    # whether a user message may open with the warning of a legacy task's copy (then `trim_legacy_copy` looks at the
    # file: sources/editor_tasks/parse.py); False only when the typed decoder saw every user message's text
    warning: bool = True


# How the user message opens that follows a legacy task's converted messages in Cline 4.x's copy of it (compared
# lowercased, past leading white space; editor_tasks.parse.LEGACY_WARNING, prefixed by "warning: ").
LEGACY_WARNING_START = "warning: this is a legacy conversation"


def _cost_note(value: Any) -> str | None:
    """Why a reported cost, a number other than 0, is not used (None when it is used, or is not a
    number: then it is as if absent). Such a call counts even without tokens: spend was reported."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value == 0 or reported_cost(value) is not None:
        return None
    if value > MAX_COST:
        return f"reported cost {value:.6g} is over ${MAX_COST:,.0f} for one call; estimated instead"
    return f"reported cost {value} is not a sum of dollars; estimated instead"


def to_ms(value: Any) -> int | None:
    """Epoch ms from ms, seconds (below 1e12) or an ISO string (UTC unless it says otherwise);
    None when missing, 0, unusable or outside what local time can show (see `displayable`)."""
    if type(value) is int and 1e12 <= value <= MAX_MS:  # the common case (epoch ms), decided first
        return value
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and 0 < value <= MAX_MS:
        return displayable(int(value) if value >= 1e12 else round(value * 1000))
    if isinstance(value, str) and value.strip():
        return displayable(_iso_ms(value.strip()))
    return None


def displayable(epoch_ms: int | None) -> int | None:
    """The time if local time can show it on every platform (MIN_MS to MAX_MS), else None: then the
    caller's fallback applies (a call's session start, a session's id time)."""
    return epoch_ms if epoch_ms is not None and MIN_MS <= epoch_ms <= MAX_MS else None


def _iso_ms(text: str) -> int | None:
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return int(when.timestamp() * 1000)
    except (ValueError, OverflowError):
        return None


SHELL = "run_commands"  # the tool whose calls are split further by the program each command line runs


def _tool_names(content: Any) -> tuple[tuple[str, ...], str | None]:
    """Tool names of a generic (dict) message's content blocks, and its shell commands' words (`Call.commands`)."""
    if not isinstance(content, list):
        return (), None
    names, shell = [], []
    for block in content:
        if isinstance(block, dict):
            kind, name = block.get("type"), block.get("name")
        else:
            continue
        if kind == "tool_use" and isinstance(name, str):
            names.append(_text(name))
            if name == SHELL:
                given = block.get("input")
                shell.append(command_words(given.get("commands") if isinstance(given, dict) else None))
    return tuple(names), ",".join(shell) if shell else None


def _usage(get: Any, cost_field: str) -> tuple[tuple[int, int, int, int], float | None, str | None]:
    """Tokens, cost and a note on a cost set aside, from a plain dict's `get` (the generic path and
    the manifest's rollup)."""
    tokens = (
        token_count(get("inputTokens")),
        token_count(get("outputTokens")),
        token_count(get("cacheReadTokens")),
        token_count(get("cacheWriteTokens")),
    )
    reported = get(cost_field)
    return tokens, reported_cost(reported), _cost_note(reported)


def _calls(messages: list, session_id: str) -> list[Call]:
    """The calls of a generic (JSON) list of messages; each message keeps its index (non-objects
    included)."""
    calls: list[Call] = []
    for index, m in enumerate(messages):
        if not isinstance(m, dict):
            continue  # not an object: no call, but it keeps its index
        metrics, info = m.get("metrics"), m.get("modelInfo")
        if m.get("role") != "assistant" or not isinstance(metrics, dict):
            continue
        tokens, cost, note = _usage(metrics.get, "cost")
        if any(tokens) or cost or note:
            model, provider = (info.get("id"), info.get("provider")) if isinstance(info, dict) else (None, None)
            mid, ts_ms, name = m.get("id"), to_ms(m.get("ts")), _str(model)
            key = (
                storable_id(mid)
                if isinstance(mid, str) and mid
                else idless_key(session_id, index, ts_ms, name, tokens, cost)
            )
            tools, commands = _tool_names(m.get("content"))
            calls.append(Call(key, index, ts_ms, name, *tokens, cost, tools, note, _str(provider), commands))
    return calls


def _typed_calls(messages: list, session_id: str) -> tuple[list[Call], bool]:
    """`_calls` for the typed decoder's messages, whose values it already checked and whose strings are storable as
    they are (typed.py): the same rules, with the common values decided first and inline (a cold ingest runs this
    loop for every call of the history, so nothing is made here that the call does not keep). And whether a user
    message opens with a legacy copy's warning (`Messages.warning`), which the bytes need not then be searched for.
    A user message's text is its content as a string, else its first block's `text` (as `trim_legacy_copy` takes it).
    (The first 64 characters lowercased start as all of them lowercased do: a character lowercases to one or more,
    and only Σ's depends on the next one, never into ASCII.)"""
    assistant, new = _typed().Assistant, tuple.__new__
    calls: list[Call] = []
    warning = False
    for index, m in enumerate(messages):
        if type(m) is not assistant:  # a user message: no call, but it keeps its index
            content = m.content
            if content is not None and not warning:
                text = content if type(content) is str else content[0].text if content else None
                warning = type(text) is str and text.lstrip()[:64].lower().startswith(LEGACY_WARNING_START)
            continue
        if m.metrics is None:
            continue
        metrics = m.metrics
        i, o = metrics.inputTokens or 0, metrics.outputTokens or 0
        cr, cw, cost = metrics.cacheReadTokens or 0, metrics.cacheWriteTokens or 0, metrics.cost
        if not (i or o or cr or cw or cost):
            continue
        info, mid, ts, content = m.modelInfo, m.id, m.ts, m.content
        model, provider = (info.id, info.provider) if info is not None else (None, None)
        if not (type(ts) is int and 1e12 <= ts <= MAX_MS):
            ts = to_ms(ts)
        if not (type(model) is str and model.strip()):
            model = None
        if not (type(provider) is str and provider.strip()):
            provider = None
        if not (type(mid) is str and mid):  # no id: its content is its identity (renamed copies count it once)
            mid = idless_key(session_id, index, ts, model, (i, o, cr, cw), cost)
        tools: tuple[str, ...] = ()
        commands = None
        if type(content) is list and content:  # of typed blocks
            tools = tuple([b.name for b in content if b.type == "tool_use" and type(b.name) is str])
            if SHELL in tools:
                commands = _shell_words(content)
        calls.append(new(Call, (mid, index, ts, model, i, o, cr, cw, cost, tools, None, provider, commands)))
    return calls, warning


def _shell_words(blocks: list) -> str:
    """`Call.commands` of typed blocks: each run_commands block's command words (none when its input is not an
    object)."""
    return ",".join(
        command_words(b.input.commands if b.input is not None else None)
        for b in blocks
        if b.type == "tool_use" and b.name == SHELL
    )


IDLESS = "noid:"  # the prefix of a key made from a message's content (it had no id)


def idless_key(
    scope: str, index: int, ts_ms: int | None, model: str | None, tokens: tuple[int, ...], cost: float | None
) -> str:
    """The key of a message without an id: its content (place, time, model, tokens, cost) and the file's
    name within its session (`scope` is "<session>" for the lead's file, "<session>/<file name>" for
    others), not the session's id, so two renamed copies of a session key their calls alike and they
    count once (by the session that started first)."""
    within = scope.rpartition("/")[2] if "/" in scope else ""
    text = repr((within, index, ts_ms, model, tuple(tokens), cost))
    return IDLESS + blake2b(text.encode("utf-8", "backslashreplace"), digest_size=12).hexdigest()


def parse_messages(data: bytes, session_id: str) -> Messages:
    """A `*.messages.json` document (or Cline's older bare array) → its calls."""
    typed = _typed()
    try:
        doc = typed.messages.decode(data)
    except (typed.DecodeError, typed.ValidationError, RecursionError):
        return _generic_messages(_slow(data), session_id)
    if isinstance(doc, typed.MessagesDoc):
        agent = _text(doc.agent) if isinstance(doc.agent, str) else "lead"
        return Messages(agent, *_typed_calls(doc.messages, session_id))
    return Messages("lead", *_typed_calls(doc, session_id))  # the older bare array


def _generic_messages(doc: Any, session_id: str) -> Messages:
    if isinstance(doc, dict):
        messages = doc.get("messages")
        if not isinstance(messages, list):
            raise ParseError("no 'messages' list")
        agent = _text(doc["agent"]) if isinstance(doc.get("agent"), str) else "lead"
        return Messages(agent, _calls(messages, session_id))  # non-objects are skipped, keeping indexes
    if isinstance(doc, list):
        return Messages("lead", _calls(doc, session_id))
    raise ParseError("not a messages document")


def _slow(data: bytes) -> Any:
    """Generic JSON, for documents whose shape the typed decoder refuses (odd but valid)."""
    try:
        return json.loads(data)
    except RecursionError:
        pass
    except ValueError as exc:
        raise ParseError(_describe(data, exc)) from None
    try:  # valid JSON nested deeper than the decoders go, or not JSON at all
        return json.loads(shallow(data))
    except (ValueError, RecursionError) as exc:
        raise ParseError(_describe(data, exc)) from None


def _describe(data: bytes, exc: Exception) -> str:
    if not data.strip():
        return "empty file (being written?)"
    if b"\x00" in data[:4096]:
        return "binary data, not JSON"
    return f"invalid JSON ({str(exc).split(':')[0]}), perhaps caught mid-write"


def parse_manifest(data: bytes) -> SessionRecord:
    """A session manifest `<id>.json` → the session as the ledger keeps it (`id`: the one the file names; the
    source sets the folder and the id it is filed under). Raises ParseError if not a JSON object."""
    typed = _typed()
    try:  # untyped: a typed struct would skip unknown fields unchecked (invalid UTF-8 in them passes)
        doc = typed.manifest.decode(data)
    except (typed.DecodeError, typed.ValidationError, RecursionError):
        doc = _slow(data)  # valid JSON msgspec refuses (1e400) still parses; the rest raises ParseError
    if not isinstance(doc, dict):
        raise ParseError("not a JSON object")
    sid = storable_id(doc["session_id"]) if isinstance(doc.get("session_id"), str) else ""
    meta: dict[str, Any] = doc["metadata"] if isinstance(doc.get("metadata"), dict) else {}
    fork: dict[str, Any] = meta["fork"] if isinstance(meta.get("fork"), dict) else {}
    return SessionRecord(
        id=sid,
        folder=None,
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
        forked_from=storable_id(fork["forkedFromSessionId"]) if _str(fork.get("forkedFromSessionId")) else None,
        rollup=_rollup(meta.get("usage"), sid),
    )


def _rollup(usage: Any, session_id: str) -> Call | None:
    if not isinstance(usage, dict):
        return None
    tokens, cost, note = _usage(usage.get, "totalCost")
    if not (any(tokens) or cost or note):
        return None
    return Call(f"{session_id}:rollup", -1, None, None, *tokens, cost, (), note)


@functools.cache
def _typed() -> ModuleType:
    from . import typed  # (msgspec, at the first parse)

    return typed


def _str(value: Any) -> str | None:
    return _text(value) if isinstance(value, str) and value.strip() else None


# ---- valid JSON nested deeper than the decoders recurse -----------------------------------------------
# Calls sit a few levels down (document → messages → message → metrics); anything below SHALLOW_DEPTH is
# tool input or content the parser skips. `shallow` checks the whole document is JSON without
# recursing and replaces each value nested deeper than that with null, so the decoders see the rest.

SHALLOW_DEPTH = 64
_TOKEN = re.compile(
    rb"[ \t\n\r]*+(?:"
    rb'(")'  # 1: a string opens
    rb"|([\[{])"  # 2: a container opens
    rb"|([\]}])"  # 3: a container closes
    rb"|(,)|(:)"  # 4, 5
    rb"|(-?(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?(?:[eE][+-]?[0-9]++)?|true|false|null|NaN|-?Infinity))"  # 6
)
_STRING_REST = re.compile(rb'(?:[^"\\\x00-\x1f]++|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*+"')
_VALUE, _ITEM_OR_END, _KEY_OR_END, _KEY, _COLON, _AFTER = range(6)


def shallow(data: bytes, depth: int = SHALLOW_DEPTH) -> bytes:
    """`data` with every value nested deeper than `depth` replaced by null; ValueError unless `data`
    is one valid JSON document (UTF-8, as json.loads reads it: NaN and Infinity included)."""
    data = data.removeprefix(b"\xef\xbb\xbf")
    data.decode("utf-8")  # UnicodeDecodeError is a ValueError: what is cut must be text too
    stack: list[int] = []
    out: list[bytes] = []
    state, pos, kept, cut = _VALUE, 0, 0, -1
    while True:
        m = _TOKEN.match(data, pos)
        if m is None:
            raise ValueError(f"not JSON at byte {pos}")
        kind, start, pos = m.lastindex, m.start(m.lastindex or 0), m.end()
        if kind == 1:
            rest = _STRING_REST.match(data, pos)
            if rest is None:
                raise ValueError(f"unterminated string at byte {start}")
            pos = rest.end()
            state = _step(
                state, _COLON if state in (_KEY_OR_END, _KEY) else _AFTER, (_VALUE, _ITEM_OR_END, _KEY_OR_END, _KEY)
            )
        elif kind == 2:
            state = _step(state, _KEY_OR_END if data[start] == 0x7B else _ITEM_OR_END, (_VALUE, _ITEM_OR_END))
            stack.append(data[start])
            if len(stack) == depth + 1:
                cut = start
        elif kind == 3:
            closes = (_AFTER, _KEY_OR_END) if data[start] == 0x7D else (_AFTER, _ITEM_OR_END)
            if not stack or stack.pop() != data[start] - 2:  # "[" + 2 == "]", "{" + 2 == "}"
                raise ValueError(f"unbalanced {chr(data[start])} at byte {start}")
            state = _step(state, _AFTER, closes)
            if len(stack) == depth and cut >= 0:
                out += (data[kept:cut], b"null")
                kept, cut = pos, -1
        elif kind == 4:
            state = _step(state, _KEY if stack and stack[-1] == 0x7B else _VALUE, (_AFTER,) if stack else ())
        elif kind == 5:
            state = _step(state, _VALUE, (_COLON,))
        else:
            state = _step(state, _AFTER, (_VALUE, _ITEM_OR_END))
        if state == _AFTER and not stack:
            if data[pos:].strip(b" \t\n\r"):
                raise ValueError(f"extra data at byte {pos}")
            return b"".join(out) + data[kept:]


def _step(state: int, to: int, allowed: tuple[int, ...]) -> int:
    if state not in allowed:
        raise ValueError("not JSON")
    return to
