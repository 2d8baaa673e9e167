"""The typed fast path of parse.py: msgspec structs that decode only the fields trayburn uses and skip the
rest (tool results, often most of a messages file, are never built as objects). Imported at the first parse;
never touches disk.

The decoder also checks the values the rules care about. A document that does not fit (a message with
another role, metrics that are not an object, a token count that is not a sane integer, a negative
cost, a tool input that is not an object, …) goes whole to the generic path, which applies the same rules to any
valid JSON. Every string it gives is storable as it is: msgspec refuses a lone surrogate (JSON's "\\ud83d" alone)
and invalid UTF-8, so such a document takes the generic path too, where text is cleaned (`storable_text`).
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import DecodeError, ValidationError

from ..base import MAX_COST, MAX_TOKENS

__all__ = [
    "Assistant",
    "Block",
    "DecodeError",
    "Head",
    "MessagesDoc",
    "ShellInput",
    "User",
    "ValidationError",
    "manifest",
    "messages",
]

_Count = Annotated[int, msgspec.Meta(ge=0, le=MAX_TOKENS)]
_Cost = Annotated[float, msgspec.Meta(ge=0, le=MAX_COST)]


class ShellInput(msgspec.Struct, gc=False):
    """A tool's input, of which only run_commands' `commands` is read (any other field is skipped unread)."""

    commands: Any = None


class Block(msgspec.Struct, gc=False):
    type: Any = None
    name: Any = None
    input: ShellInput | None = None


class _Metrics(msgspec.Struct, gc=False):
    inputTokens: _Count | None = None
    outputTokens: _Count | None = None
    cacheReadTokens: _Count | None = None
    cacheWriteTokens: _Count | None = None
    cost: _Cost | None = None


class _ModelInfo(msgspec.Struct, gc=False):
    id: Any = None
    provider: Any = None


class Assistant(msgspec.Struct, tag_field="role", tag="assistant", gc=False):
    id: Any = None
    ts: Any = None
    modelInfo: _ModelInfo | None = None
    metrics: _Metrics | None = None
    content: str | list[Block] | None = None


class Head(msgspec.Struct, gc=False):
    """A user message's block, of which only `text` is read (any other field, a tool result's content, is skipped)."""

    text: Any = None


class User(msgspec.Struct, tag_field="role", tag="user", gc=False):
    """Never a call. Of its content only the text is read (a string, or its blocks' `text`, of which the first is
    looked at: whether it opens with a legacy copy's warning, `parse.Messages.warning`); tool results, often most of
    the file, are skipped unread."""

    content: str | list[Head] | None = None


class MessagesDoc(msgspec.Struct):
    agent: Any = None
    messages: list[Assistant | User] = []


messages = msgspec.json.Decoder(MessagesDoc | list[Assistant | User])
manifest = msgspec.json.Decoder()  # a manifest is small: decoded whole, so all of it must be valid JSON
