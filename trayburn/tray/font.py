"""Text on the tray icon: Pillow's bundled font where it is big enough, crisp pixel digits where not.

Everything is drawn on a canvas `SS` times larger than the icon, with boxes given in icon
pixels, so one reduction at the end keeps edges on whole pixels. Where Pillow's font (no system
fonts) would come out barely taller than a pixel font (4 characters in 16-24 px), the built-in
3x5 or 4x7 pixel digits are used instead: they stay sharp.
"""

from __future__ import annotations

import functools

from PIL import ImageDraw, ImageFont

from .mark import SS, Colour

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
