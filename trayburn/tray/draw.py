"""The tray icon, drawn with Pillow only: trayburn's mark over today's cost, at the size the tray really shows.

Pure drawing: no pystray, no tkinter, no I/O. Everything returns RGBA `PIL.Image.Image`s.

- The mark (`draw_mark`, `draw_flame`): a flame in a tray, from the shapes of assets/trayburn.svg.
- The text: Pillow's bundled font where it is big enough, crisp 3x5 or 4x7 pixel digits where Pillow's font
  (no system fonts) would come out barely taller than a pixel font (4 characters in 16-24 px): they stay sharp.
  Everything is drawn on a canvas `SS` times larger than the icon, with boxes given in icon pixels, so one
  reduction at the end keeps edges on whole pixels.
- The icon (`render_icon`, `render_mark`): each size laid out for itself (not shrunk from a big icon) so the cost
  stays legible at 16, 22 and 24 px. The panel is "light" (dark ink), "dark" (light ink) or "any": the panel's
  shade is unknown, so the icon brings its own dark tile and reads on both.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from .view import IconState

# ---- the mark ----------------------------------------------------------------------------------------------------

SS = 4  # supersampling factor: every canvas is this many times the icon
Colour = tuple[int, int, int, int]
Point = tuple[float, float]

FLAME = (255, 122, 26, 255)
FLAME_CORE = (255, 208, 77, 255)
TILE = (31, 36, 48, 255)
DISH = (232, 232, 236, 255)

# Shapes in a 256-unit square, the same numbers as assets/trayburn.svg.
_FLAME_PATH = (
    (140, 28),
    ((152, 70), (196, 96), (196, 142)),
    ((196, 178), (166, 200), (128, 200)),
    ((90, 200), (60, 178), (60, 142)),
    ((60, 116), (70, 96), (86, 78)),
    ((86, 98), (94, 110), (106, 110)),
    ((118, 92), (138, 64), (140, 28)),
)
_CORE_PATH = (
    (130, 102),
    ((138, 128), (162, 140), (162, 166)),
    ((162, 186), (147, 198), (128, 198)),
    ((109, 198), (94, 186), (94, 166)),
    ((94, 142), (120, 132), (130, 102)),
)
_FLAME_BOX = (60, 28, 196, 200)
_DISH_POINTS = ((36, 186), (56, 216), (200, 216), (220, 186))
_DISH_WIDTH = 16
_TILE_BOX, _TILE_RADIUS = (8, 8, 248, 248), 56


def _bezier(path: Sequence[Any], steps: int = 16) -> list[Point]:
    """Flatten (start, (c1, c2, end), ...) cubic Bézier segments to points."""
    points: list[Point] = [path[0]]
    p0 = path[0]
    for c1, c2, p3 in path[1:]:
        for i in range(1, steps + 1):
            t, u = i / steps, 1 - i / steps
            points.append(
                tuple(
                    u**3 * a + 3 * u * u * t * b + 3 * u * t * t * c + t**3 * d
                    for a, b, c, d in zip(p0, c1, c2, p3, strict=True)
                )
            )
        p0 = p3
    return points


def _fit(points: Sequence[Point], src: Sequence[float], dst: Sequence[float]) -> list[Point]:
    """Map points from box `src` into box `dst`, keeping the aspect, centred."""
    scale = min((dst[2] - dst[0]) / (src[2] - src[0]), (dst[3] - dst[1]) / (src[3] - src[1]))
    dx = dst[0] + ((dst[2] - dst[0]) - (src[2] - src[0]) * scale) / 2
    dy = dst[1] + ((dst[3] - dst[1]) - (src[3] - src[1]) * scale) / 2
    return [(dx + (x - src[0]) * scale, dy + (y - src[1]) * scale) for x, y in points]


def draw_flame(draw: ImageDraw.ImageDraw, box: Sequence[float], outer: Colour, core: Colour | None) -> None:
    """The flame fitted into `box` (canvas pixels); `core` None leaves out the inner flame."""
    draw.polygon(_fit(_bezier(_FLAME_PATH), _FLAME_BOX, box), fill=outer)
    if core is not None:
        draw.polygon(_fit(_bezier(_CORE_PATH), _FLAME_BOX, box), fill=core)


def _draw_dish(draw: ImageDraw.ImageDraw, scale: float, colour: Colour) -> None:
    points = [(x * scale, y * scale) for x, y in _DISH_POINTS]
    width = round(_DISH_WIDTH * scale)
    draw.line(points, fill=colour, width=width, joint="curve")
    for x, y in (points[0], points[-1]):
        r = width / 2
        draw.ellipse((x - r, y - r, x + r, y + r), fill=colour)


def draw_mark(size: int) -> Image.Image:
    """trayburn's mark (the app icon): a flame in a tray on a dark rounded tile."""
    big = size * SS
    image = Image.new("RGBA", (big, big), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    scale = big / 256
    draw.rounded_rectangle([v * scale for v in _TILE_BOX], _TILE_RADIUS * scale, fill=TILE)
    draw_flame(draw, [v * scale for v in _FLAME_BOX], FLAME, FLAME_CORE)
    _draw_dish(draw, scale, DISH)
    return image.resize((size, size), Image.Resampling.LANCZOS)


# ---- text --------------------------------------------------------------------------------------------------------

Box = tuple[int, int, int, int]  # left, top, right, bottom (exclusive), in icon pixels
DASHES = "\u2013\u2014\u2212-"
AnyFont = ImageFont.FreeTypeFont | ImageFont.ImageFont

_PIXEL_FONTS = {  # rows -> glyphs ("/" between rows), for tiny labels
    5: {  # 3x5
        "0": "###/#.#/#.#/#.#/###",
        "1": ".#/##/.#/.#/.#",  # 2 wide: "100k", "1.25" fit a 14 px icon
        "2": "###/..#/###/#../###",
        "3": "###/..#/###/..#/###",
        "4": "#.#/#.#/###/..#/..#",
        "5": "###/#../###/..#/###",
        "6": "###/#../###/#.#/###",
        "7": "###/..#/.#./.#./.#.",
        "8": "###/#.#/###/#.#/###",
        "9": "###/#.#/###/..#/###",
        "k": "#../#.#/##./#.#/#.#",
        "G": "###/#../#.#/#.#/###",
        ".": "././././#",
        "M": "#...#/##.##/#.#.#/#...#/#...#",
        "€": ".##/###/#../###/.##",
        "¥": "#.#/#.#/.#./###/.#.",
        "£": ".##/#../###/#../###",
    },
    7: {  # 4x7
        "0": ".##./#..#/#..#/#..#/#..#/#..#/.##.",
        "1": "..#./.##./..#./..#./..#./..#./.###",
        "2": ".##./#..#/...#/..#./.#../#.../####",
        "3": ".##./#..#/...#/.##./...#/#..#/.##.",
        "4": "..#./.##./#.#./#.#./####/..#./..#.",
        "5": "####/#.../###./...#/...#/#..#/.##.",
        "6": ".##./#.../#.../###./#..#/#..#/.##.",
        "7": "####/...#/..#./..#./.#../.#../.#..",
        "8": ".##./#..#/#..#/.##./#..#/#..#/.##.",
        "9": ".##./#..#/#..#/.###/...#/...#/.##.",
        "$": "..#../.####/#.#../.###./..#.#/####./..#..",
        "k": "#.../#.../#..#/#.#./##../#.#./#..#",
        "G": ".##./#..#/#.../#.##/#..#/#..#/.##.",
        ".": "././././././#",
        "M": "#...#/##.##/#.#.#/#.#.#/#...#/#...#/#...#",
        "€": "..###/.#.../####./.#.../####./.#.../..###",
        "¥": "#...#/.#.#./..#../#####/..#../#####/..#..",
        "£": "..##/.#../.#../###./.#../.#../####",
    },
}
_STROKE = 1  # emboldening, in canvas pixels: 1/SS of an icon pixel


def up(box: Box) -> Box:
    """A box in icon pixels, in canvas pixels."""
    return (box[0] * SS, box[1] * SS, box[2] * SS, box[3] * SS)


def inclusive(box: Box) -> Box:
    """Pillow's rectangles include their right and bottom edge; ours do not."""
    return (box[0], box[1], box[2] - 1, box[3] - 1)


@functools.lru_cache(maxsize=64)
def _font(size: int) -> AnyFont:
    return ImageFont.load_default(size=size)


@functools.lru_cache(maxsize=256)
def _fit_font(label: str, width: int, height: int) -> tuple[AnyFont, tuple[float, float, float, float]]:
    """The largest bundled font size whose ink of `label` fits width x height."""
    for size in range(int(height * 1.5) + 2, 3, -1):  # ink is at most ~0.9 em
        box = _font(size).getbbox(label, stroke_width=_STROKE)
        if box[2] - box[0] <= width and box[3] - box[1] <= height:
            return _font(size), box
    return _font(4), _font(4).getbbox(label, stroke_width=_STROKE)


def _pixel_font(label: str, box: Box, smooth_height: float | None, crisp: bool = False) -> int | None:
    """The tallest pixel font that fits `box`, unless Pillow's font would be taller.

    `smooth_height` is the ink height (stroke included) of Pillow's fitted font;
    a pixel font at most 1.5 px shorter reads better, being crisp. None: Pillow's font cannot
    draw the label (a currency symbol), so any pixel font that fits will do.
    """
    width, height = box[2] - box[0], box[3] - box[1]
    for rows, glyphs in sorted(_PIXEL_FONTS.items(), reverse=True):
        taller = not crisp and smooth_height is not None and rows + 1.5 < smooth_height
        if taller or rows > height or any(c not in glyphs for c in label):
            continue
        if _pixel_width(label, glyphs) <= width:
            return rows
    return None


def _pixel_width(label: str, glyphs: dict[str, str]) -> int:
    return sum(glyphs[c].index("/") for c in label) + len(label) - 1


def _draw_pixel_text(
    draw: ImageDraw.ImageDraw, label: str, box: Box, rows: int, colour: Colour, scale: int = 1
) -> None:
    """The label in a pixel font, each of its pixels `scale` x `scale` icon pixels."""
    glyphs = _PIXEL_FONTS[rows]
    x = box[0] + (box[2] - box[0] - _pixel_width(label, glyphs) * scale) // 2
    y = box[1] + (box[3] - box[1] - rows * scale + 1) // 2
    for char in label:
        lines = glyphs[char].split("/")
        for row, line in enumerate(lines):
            for col, bit in enumerate(line):
                if bit == "#":
                    cx, cy = x + col * scale, y + row * scale
                    draw.rectangle(inclusive(up((cx, cy, cx + scale, cy + scale))), fill=colour)
        x += (len(lines[0]) + 1) * scale


def _draw_dash(draw: ImageDraw.ImageDraw, box: Box, colour: Colour) -> None:
    width, height = box[2] - box[0], box[3] - box[1]
    bar_w, bar_h = max(4, round(width * 0.45)), max(2, round(height / 6))
    left, top = box[0] + (width - bar_w) // 2, box[1] + (height - bar_h) // 2
    draw.rectangle(inclusive(up((left, top, left + bar_w, top + bar_h))), fill=colour)


def draw_text(draw: ImageDraw.ImageDraw, label: str, box: Box, colour: Colour, crisp: bool = False) -> None:
    """Draw `label` centred in `box` (icon pixels), as large as fits; `crisp`: in pixel digits wherever they
    fit (a 14-16 px icon, where a smooth font is a blur)."""
    if label and all(c in DASHES for c in label):
        return _draw_dash(draw, box, colour)
    label = "".join("-" if c in DASHES else c for c in label).replace("\uffe5", "¥")  # fullwidth yen
    if not label.isascii():  # a currency symbol: Pillow's bundled font has no glyph for it
        rows = _pixel_font(label, box, None)
        if rows is not None:
            width, height = box[2] - box[0], box[3] - box[1]
            scale = max(1, min(height // rows, width // _pixel_width(label, _PIXEL_FONTS[rows])))
            return _draw_pixel_text(draw, label, box, rows, colour, scale)
        label = "".join(c for c in label if c.isascii())  # never a missing-glyph box: the figure alone
    left, top, right, bottom = up(box)
    font, ink = _fit_font(label, right - left, bottom - top)
    rows = _pixel_font(label, box, (ink[3] - ink[1]) / SS, crisp)
    if rows is not None:
        return _draw_pixel_text(draw, label, box, rows, colour)
    x = left + (right - left - (ink[2] - ink[0])) / 2 - ink[0]
    y = top + (bottom - top - (ink[3] - ink[1])) / 2 - ink[1]
    draw.text((round(x), round(y)), label, font=font, fill=colour, stroke_width=_STROKE, stroke_fill=colour)


# ---- the icon ----------------------------------------------------------------------------------------------------

AMBER = (255, 179, 0, 255)
RED = (214, 40, 40, 255)
INK_DARK = (24, 24, 27, 255)
INK_LIGHT = (250, 250, 250, 255)
STALE_DOT = (150, 150, 156, 255)
CRISP_BELOW = 18  # icons smaller than this draw the figure in pixel digits only (a smooth font blurs there)


@dataclass(frozen=True)
class _Theme:
    """The icon's colours on one panel shade."""

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
    """Where each part of the icon is drawn, at one size."""

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
def render_mark(size: int, state: IconState = IconState.OK, *, stale: bool = False) -> Image.Image:
    """The mark alone, for a host that draws today's cost as text beside it (a StatusNotifierItem's label).

    The label is plain text in the panel's colours, so the budget's state is on the mark: an amber dot from
    80 % of the daily budget, a red one from 100 %; `stale` greys the mark (the figures are old)."""
    size = max(8, int(size))
    image = draw_mark(size)
    if stale:
        grey = image.convert("LA").convert("RGBA")
        grey.putalpha(image.getchannel("A").point(lambda a: a * 3 // 5))
        image = grey
    dot = {IconState.WARN: AMBER, IconState.OVER: RED}.get(state)
    if dot is not None:
        big = image.resize((size * SS, size * SS), Image.Resampling.LANCZOS)
        draw = ImageDraw.Draw(big)
        d = big.width * 9 // 20  # the dot's diameter: 45 % of the mark, readable when GNOME shows it at 16 px
        box = (big.width - d, big.height - d, big.width - 1, big.height - 1)
        draw.ellipse(box, fill=dot, outline=(20, 20, 20, 255), width=max(1, big.width // 32))
        image = big.resize((size, size), Image.Resampling.LANCZOS)
    return image
