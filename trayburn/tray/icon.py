"""The tray icon: trayburn's mark over today's cost, drawn with Pillow only, at the tray's size.

Pure drawing: no pystray, no tkinter, no I/O. Everything returns RGBA `PIL.Image.Image`s.
Each size is laid out for itself (not shrunk from a big icon) so the cost stays legible at
16, 22 and 24 px (see `font`). The panel is "light" (dark ink), "dark" (light ink) or "any":
the panel's shade is unknown, so the icon brings its own dark tile and reads on both.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from PIL import Image, ImageDraw

from .font import Box, draw_text, inclusive, up
from .label import IconState
from .mark import FLAME, FLAME_CORE, SS, TILE, Colour, draw_flame, draw_mark

__all__ = ["PANELS", "IconState", "draw_mark", "render_icon"]

AMBER = (255, 179, 0, 255)
RED = (214, 40, 40, 255)
INK_DARK = (24, 24, 27, 255)
INK_LIGHT = (250, 250, 250, 255)
STALE_DOT = (150, 150, 156, 255)
CRISP_BELOW = 18  # icons smaller than this draw the figure in pixel digits only (a smooth font blurs there)


@dataclass(frozen=True)
class _Theme:
    text: Colour
    muted: Colour
    tile: Colour | None = None  # the icon's own background, where the panel's shade is unknown


_THEMES = {
    "light": _Theme(text=INK_DARK, muted=(112, 112, 118, 255)),  # a light panel
    "dark": _Theme(text=INK_LIGHT, muted=(150, 150, 156, 255)),  # a dark panel
    "any": _Theme(text=INK_LIGHT, muted=(160, 160, 166, 255), tile=TILE),  # unknown: brings its own
}
PANELS = tuple(_THEMES)


@dataclass(frozen=True)
class _Layout:
    mark: Box  # the flame
    line: Box  # the tray line under it
    badge: Box  # the "!" disc, in place of the flame and line
    pill: Box  # the label's background (WARN / OVER)
    text: Box  # where the label's ink goes


def _layout(size: int, label_share: float = 0.62) -> _Layout:
    """Boxes in icon pixels: the label takes the lower part, the mark the rest."""
    pill_top = size - round(size * label_share)
    line_h, gap = max(1, round(size / 20)), size // 20
    line_top = pill_top - gap - line_h
    line_w = round(size * 0.62)
    line_left = (size - line_w) // 2
    inset = max(1, size // 16)
    side = 0 if size < CRISP_BELOW else inset  # a 14-16 px icon: its whole width for "0.33" in 3x5 pixel digits
    return _Layout(
        mark=(0, 0, size, line_top),
        line=(line_left, line_top, line_left + line_w, line_top + line_h),
        badge=(0, 0, size, pill_top - gap),
        pill=(0, pill_top, size, size),
        text=(side, pill_top + inset, size - side, size - inset),
    )


def _colours(state: IconState, theme: _Theme) -> tuple[Colour | None, Colour, Colour]:
    """(pill fill, label colour, tray-line colour) for a state."""
    return {
        IconState.NO_DATA: (None, theme.muted, theme.muted),
        IconState.OK: (None, theme.text, theme.text),
        IconState.WARN: (AMBER, INK_DARK, theme.text),
        IconState.OVER: (RED, INK_LIGHT, theme.text),
        IconState.PROBLEM: (None, theme.muted, theme.muted),
    }[state]


def _draw_badge(draw: ImageDraw.ImageDraw, box: Box) -> None:
    """A red disc with a white "!", its strokes on whole icon pixels."""
    d = min(box[2] - box[0], box[3] - box[1])
    d -= (box[2] - box[0] - d) % 2  # keep the disc centred on the pixel grid
    left, top = box[0] + (box[2] - box[0] - d) // 2, box[1] + (box[3] - box[1] - d) // 2
    draw.ellipse(inclusive(up((left, top, left + d, top + d))), fill=RED)
    stem = max(2 - d % 2, round(d / 6))
    x = left + (d - stem) // 2
    stem_top, stem_bottom = top + round(d * 0.17), top + round(d * 0.55)
    dot_top = stem_bottom + max(1, round(d * 0.12))
    dot_h = max(1, round(d * 0.14))
    for rect in ((x, stem_top, x + stem, stem_bottom), (x, dot_top, x + stem, dot_top + dot_h)):
        draw.rectangle(inclusive(up(rect)), fill=INK_LIGHT)


def _draw_mark_part(draw: ImageDraw.ImageDraw, layout: _Layout, state: IconState, theme: _Theme, size: int) -> None:
    """The flame on its tray line; for PROBLEM, the "!" badge in their place."""
    _, _, line_colour = _colours(state, theme)
    if state is IconState.PROBLEM:
        return _draw_badge(draw, layout.badge)
    if state is IconState.NO_DATA:
        draw_flame(draw, up(layout.mark), theme.muted, None)
    else:
        draw_flame(draw, up(layout.mark), FLAME, FLAME_CORE if size >= 32 else None)
    draw.rectangle(inclusive(up(layout.line)), fill=line_colour)


def _draw_stale(draw: ImageDraw.ImageDraw, size: int) -> None:
    """A small hollow ring in the top-right corner: the figures are not fresh."""
    d = max(4, round(size * 0.28))
    ring = max(1, round(d / 4))
    box = up((size - d, 0, size, d))
    draw.ellipse(inclusive(box), fill=INK_DARK)
    inner = (box[0] + ring * SS, box[1] + ring * SS, box[2] - ring * SS, box[3] - ring * SS)
    draw.ellipse(inclusive(inner), fill=STALE_DOT)


@functools.lru_cache(maxsize=64)
def _render(label: str, state: IconState, panel: str, size: int, stale: bool) -> Image.Image:
    theme = _THEMES[panel]
    layout = _layout(size, 0.5 if state is IconState.PROBLEM else 0.62)
    pill, text_colour, _ = _colours(state, theme)
    image = Image.new("RGBA", (size * SS, size * SS), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    if theme.tile is not None:
        draw.rounded_rectangle(inclusive(up((0, 0, size, size))), radius=size * SS * 0.2, fill=theme.tile)
    _draw_mark_part(draw, layout, state, theme, size)
    if pill is not None:
        draw.rounded_rectangle(inclusive(up(layout.pill)), radius=size * SS * 0.16, fill=pill)
    draw_text(draw, label, layout.text, text_colour, crisp=size < CRISP_BELOW)
    if stale:
        _draw_stale(draw, size)
    return image.resize((size, size), Image.Resampling.BOX)


def render_icon(
    label: str, state: IconState, theme: str = "light", size: int = 64, *, stale: bool = False
) -> Image.Image:
    """The tray icon: the mark over `label`, coloured by `state`, RGBA `size`x`size`.

    `theme` is the panel's: "light" draws dark text, "dark" light text, "any" a dark tile
    with light text (for a panel of unknown shade). `stale` adds a grey ring: the figures are
    old. Results are cached: the same arguments return the same (shared, do not mutate) image.
    """
    if theme not in _THEMES:
        raise ValueError(f"theme must be one of {', '.join(PANELS)}, not {theme!r}")
    if not isinstance(state, IconState):
        raise TypeError(f"state must be an IconState, not {state!r}")
    if size < 8:
        raise ValueError(f"size must be at least 8 px, not {size}")
    return _render(str(label), state, theme, int(size), bool(stale))


@functools.lru_cache(maxsize=8)
def render_mark(size: int) -> Image.Image:
    """The mark alone, for a host that draws today's cost as text beside it (a StatusNotifierItem's label)."""
    return draw_mark(max(8, int(size)))
