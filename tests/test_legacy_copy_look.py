"""A Cline 4.x copy of a legacy task is trimmed where its user message opens with the warning, whichever way the
messages file is decoded: the typed decoder says whether any user message opens with it (so most files are never
searched for it), and what comes out is exactly what `trim_legacy_copy` alone makes of the file."""

from __future__ import annotations

import json

import pytest
from helpers.corpus import assistant, messages_doc

from trayburn.sources.cline_cli import parse
from trayburn.sources.cline_cli.source import _parse_messages
from trayburn.sources.editor_tasks.parse import LEGACY_WARNING, trim_legacy_copy

T = 1796026733527
WARNING = "Warning: this is a legacy conversation …"


def test_the_warning_is_the_one_the_trim_looks_for():
    assert "warning: " + LEGACY_WARNING.decode() == parse.LEGACY_WARNING_START


def user(content) -> dict:
    return {"role": "user", "content": content}


def blocks(*texts) -> list:
    return [{"type": "text", "text": t} if isinstance(t, str) else t for t in texts]


TOOL_RESULT = {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": WARNING}]}
CASES = {  # the user message between the two calls → the calls kept (their seq)
    "block": (user(blocks(WARNING)), [2]),
    "string": (user(WARNING), [2]),
    "spaces and a capital": (user(blocks("\n  WARNING: this is a legacy conversation, resumed")), [2]),
    "all capitals (not in the bytes as such)": (user(blocks("WARNING: THIS IS A LEGACY CONVERSATION")), [0, 2]),
    "not the first block": (user(blocks("hello", WARNING)), [0, 2]),
    "inside a tool result": (user([TOOL_RESULT]), [0, 2]),
    "not at the start": (user(blocks("note: " + WARNING)), [0, 2]),
    "an escaped capital": (user(blocks("\\u0057arning: this is a legacy conversation")), [2]),
    "escaped within the words": (user(blocks("Warning: \\u0074his is a legacy conversation")), [0, 2]),
    "no text": (user([{"type": "image", "source": {}}]), [0, 2]),
    "empty content": (user([]), [0, 2]),
    "content null": (user(None), [0, 2]),
    "text not a string": (user(blocks({"type": "text", "text": 7})), [0, 2]),
    "odd content (generic path)": (user(["a string block", {"type": "text", "text": WARNING}]), [0, 2]),
    "odd first block (generic path)": (user([WARNING]), [0, 2]),
    "odd message (generic path)": ({"role": "system", "content": WARNING}, [0, 2]),
}


@pytest.mark.parametrize("name", CASES)
def test_trimmed_exactly_as_trim_legacy_copy_does(name):
    middle, kept = CASES[name]
    doc = messages_doc("S", [assistant("m1", T), middle, assistant("m2", T + 1000)])
    data = json.dumps(doc).replace("\\\\u00", "\\u00").encode()  # ("escaped": a JSON escape in the file)
    got = _parse_messages(data, "S")
    assert [c.seq for c in got.calls] == kept
    assert got.calls == trim_legacy_copy(parse.parse_messages(data, "S"), data).calls


def test_a_warning_after_the_first_is_found_too():
    doc = messages_doc("S", [user(blocks("hi")), assistant("m1", T), user(blocks(WARNING)), assistant("m2", T + 1)])
    got = parse.parse_messages(json.dumps(doc).encode(), "S")
    assert got.warning
    assert not parse.parse_messages(json.dumps(messages_doc("S", [user(blocks("hi"))])).encode(), "S").warning
