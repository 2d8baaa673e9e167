"""trayburn's mark: a flame in a tray, drawn with Pillow from the shapes of assets/trayburn.svg."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PIL import Image, ImageDraw

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
