"""What a screenshot shows: its colours, and WCAG contrast, of text as a reader of the tray gets it."""

from __future__ import annotations

from pathlib import Path

from .xwindows import Rect


def luminance(rgb: tuple[int, ...]) -> float:
    """WCAG relative luminance of an sRGB colour."""

    def channel(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: tuple[int, ...], b: tuple[int, ...]) -> float:
    """WCAG contrast ratio, 1 to 21."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def text_contrast(
    image, box: tuple[int, int, int, int], panel: tuple[int, ...] | None = None
) -> tuple[float, tuple[int, int, int], tuple[int, int, int]]:
    """(contrast, ink, background) of the text in ``box`` of an RGB screenshot.

    The background is the most common colour in the box (what the text sits on: the panel, or
    the icon's own tile); the ink is the median, by luminance, of the pixels that stand out
    from it (contrast above 1.5), so a few extreme pixels cannot carry the figure. Pixels of
    the ``panel`` colour showing at a tile's rounded corners are not ink.
    """
    region = image.convert("RGB").crop(box)
    counts = region.getcolors(maxcolors=1 << 20)
    background = max(counts)[1]

    def is_ink(rgb: tuple[int, int, int]) -> bool:
        on_tile = panel is not None and contrast(panel, background) > 1.2
        return contrast(rgb, background) > 1.5 and not (on_tile and contrast(rgb, panel) < 1.2)

    ink = sorted((luminance(rgb), rgb) for n, rgb in counts for _ in range(n) if is_ink(rgb))
    if not ink:
        return 1.0, background, background
    rgb = ink[len(ink) // 2][1]
    return contrast(rgb, background), rgb, background


def image_colours(path: Path, rect: Rect | None = None) -> set[tuple[int, int, int]]:
    """The distinct RGB colours in a screenshot, or in ``rect`` of it."""
    from PIL import Image

    with Image.open(path) as image:
        region = image.convert("RGB").crop(rect.box) if rect else image.convert("RGB")
        return {rgb for _, rgb in region.getcolors(maxcolors=1 << 24)}


def has_colour_near(colours: set[tuple[int, int, int]], rgb: tuple[int, int, int], tolerance: int = 24) -> bool:
    return any(all(abs(a - b) <= tolerance for a, b in zip(c, rgb, strict=False)) for c in colours)


def ink_height(
    image, box: tuple[int, int, int, int], ink: tuple[int, ...], background: tuple[int, ...], panel=None
) -> int:
    """How many pixel rows of ``box`` hold the text's ink: pixels nearer the ink colour than the background
    (by contrast), from the first such row to the last: the digits' height as a reader of the tray sees it.
    The ``panel`` showing at a tile's rounded corners is not ink."""
    region = image.convert("RGB").crop(box)
    half = contrast(ink, background) / 2
    on_tile = panel is not None and contrast(panel, background) > 1.2

    def is_ink(rgb) -> bool:
        return contrast(rgb, background) > half and not (on_tile and contrast(rgb, panel) < 1.1)

    rows = [y for y in range(region.height) if any(is_ink(region.getpixel((x, y))) for x in range(region.width))]
    return rows[-1] - rows[0] + 1 if rows else 0
