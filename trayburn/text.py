"""Text for a terminal: what it would obey rather than show taken out, one line for a cell, widths in the
columns a terminal gives each character, and the tables and plurals every command prints."""

from __future__ import annotations

import re
from collections.abc import Collection

# What a terminal would obey rather than show: C0 controls but tab and newline (ESC, BEL, a lone CR…),
# DEL, C1 controls (0x9b is CSI on its own), and the bidirectional overrides that reorder a line.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def clean(text: str) -> str:
    """Text safe to print: titles, model names and paths come from files anyone could write, so an
    OSC 52 clipboard write or a screen clear in a title is removed, never sent to the terminal."""
    text = _CONTROLS.sub("", text)
    return text if text.isascii() else _escaped(text)


def _escaped(text: str) -> str:
    """A name that is not UTF-8 (a surrogate escape, as Python reads it) shown as its escape: `sess\\udcff`."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def one_line(text: str) -> str:
    """`clean`, and on one line (for a table cell)."""
    return clean(text).replace("\n", " ").replace("\t", " ")


def columns(text: str) -> int:
    """The terminal columns `text` takes: East Asian wide and full-width characters (CJK, most emoji) two,
    combining marks and zero-width characters none, the rest one."""
    if text.isascii():
        return len(text)
    return sum(_char_columns(ch) for ch in text)


def _char_columns(ch: str) -> int:
    import unicodedata

    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in "WF" else 1


def table(headers: list[str], rows: list[list[str]], right: Collection[int] = frozenset()) -> str:
    rows = [[one_line(str(c)) for c in r] for r in rows]
    widths = [max(columns(str(x)) for x in col) for col in zip(headers, *rows, strict=True)]

    def line(cells):
        return "  ".join(
            _pad(str(c), w, i in right) for i, (c, w) in enumerate(zip(cells, widths, strict=False))
        ).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows])


def _pad(cell: str, width: int, right: bool) -> str:
    fill = " " * (width - columns(cell))
    return fill + cell if right else cell + fill


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def shorten(text: str, width: int) -> str:
    """At most `width` terminal columns, "…" ending what was cut."""
    if columns(text) <= width:
        return text
    kept, used = [], 0
    for ch in text:
        used += _char_columns(ch)
        if used > width - 1:
            break
        kept.append(ch)
    return "".join(kept) + "…"
