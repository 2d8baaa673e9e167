"""Valid JSON nested deeper than the decoders recurse (tool input 1,200 levels deep): made shallow enough to
decode, without recursing. No I/O; used by parse.py's generic path."""

from __future__ import annotations

import re

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
