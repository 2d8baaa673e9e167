"""The tray icon: trayburn's mark plus today's cost, drawn with Pillow only.

Pure drawing: no pystray, no tkinter, no I/O except the guarded, time-limited
look-ups in `resolve_theme`. Everything returns RGBA `PIL.Image.Image`s.

Each size is laid out for itself (not shrunk from a big icon) so the cost stays
legible at 16, 22 and 24 px: everything is drawn 4x larger with edges on whole
icon pixels, then reduced once. The label uses Pillow's bundled font
(`ImageFont.load_default`, no system fonts), slightly emboldened; where that font
would come out barely taller than a pixel font (4 characters in 16-24 px), the
built-in 3x5 or 4x7 pixel digits are used instead: they stay sharp.
"""

from __future__ import annotations

import enum
import functools
import logging
import math
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from PIL import Image, ImageDraw, ImageFont

log = logging.getLogger(__name__)

NO_DATA_LABEL = "\u2013"  # en dash; drawn as a bar (Pillow's font has no glyph)
_DASHES = "\u2013\u2014\u2212-"
_SS = 4  # supersampling factor: the canvas is this many times the icon
Colour = tuple[int, int, int, int]
Box = tuple[int, int, int, int]  # left, top, right, bottom (exclusive)

FLAME = (255, 122, 26, 255)
FLAME_CORE = (255, 208, 77, 255)
TILE = (31, 36, 48, 255)
DISH = (232, 232, 236, 255)
AMBER = (255, 179, 0, 255)
RED = (214, 40, 40, 255)
INK_DARK = (24, 24, 27, 255)
INK_LIGHT = (250, 250, 250, 255)


def format_cost(usd: float | None) -> str:
    """Today's cost as a label of at most 4 characters, for a 16-24 px icon.

    None (or NaN/inf) -> "–" (no data); below half a cent -> "$0";
    below $9.995 -> two decimals ("4.21", "0.07");
    below $999.5 -> whole dollars ("12", "123");
    then thousands ("1.2k", "12k", "999k"), millions ("1.0M") and so on.
    There is no "$" except on "$0": every character costs legibility.
    """
    if usd is None or not math.isfinite(usd):
        return NO_DATA_LABEL
    if usd < 0.005:
        return "$0"
    if usd < 9.995:
        return f"{usd:.2f}"
    if usd < 999.5:
        return f"{usd:.0f}"
    return _with_suffix(usd)


def _with_suffix(usd: float) -> str:
    for divisor, suffix in ((1e3, "k"), (1e6, "M"), (1e9, "G")):
        scaled = usd / divisor
        if scaled < 9.95:
            return f"{scaled:.1f}{suffix}"
        if scaled < 999.5:
            return f"{scaled:.0f}{suffix}"
    return "1T+"


class IconState(enum.Enum):
    NO_DATA = "no_data"  # nothing recorded yet: greyed mark, "–"
    OK = "ok"  # below 80% of the budget, or no budget
    WARN = "warn"  # >= 80% of the budget: label on amber
    OVER = "over"  # >= 100% of the budget: label on red
    PROBLEM = "problem"  # Cline's folders missing or unreadable: "!" badge


@dataclass(frozen=True)
class _Theme:
    text: Colour
    muted: Colour


_THEMES = {
    "light": _Theme(text=INK_DARK, muted=(128, 128, 134, 255)),  # light panel
    "dark": _Theme(text=INK_LIGHT, muted=(150, 150, 156, 255)),  # dark panel
}


# --- the mark ---------------------------------------------------------------
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


def _bezier(path, steps: int = 16) -> list[tuple[float, float]]:
    """Flatten (start, (c1, c2, end), ...) cubic Bézier segments to points."""
    points, p0 = [path[0]], path[0]
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


def _fit(points, src: Box, dst: tuple[float, float, float, float]):
    """Map points from box `src` into box `dst`, keeping the aspect, centred."""
    scale = min((dst[2] - dst[0]) / (src[2] - src[0]), (dst[3] - dst[1]) / (src[3] - src[1]))
    dx = dst[0] + ((dst[2] - dst[0]) - (src[2] - src[0]) * scale) / 2
    dy = dst[1] + ((dst[3] - dst[1]) - (src[3] - src[1]) * scale) / 2
    return [(dx + (x - src[0]) * scale, dy + (y - src[1]) * scale) for x, y in points]


def _draw_flame(draw: ImageDraw.ImageDraw, box, outer: Colour, core: Colour | None) -> None:
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
    big = size * _SS
    image = Image.new("RGBA", (big, big), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    scale = big / 256
    draw.rounded_rectangle([v * scale for v in _TILE_BOX], _TILE_RADIUS * scale, fill=TILE)
    _draw_flame(draw, [v * scale for v in _FLAME_BOX], FLAME, FLAME_CORE)
    _draw_dish(draw, scale, DISH)
    return image.resize((size, size), Image.Resampling.LANCZOS)


# --- text ------------------------------------------------------------------
# All tray-icon drawing happens on a canvas _SS times larger than the icon, with
# boxes given in icon pixels; one reduction at the end keeps edges on whole pixels.
_PIXEL_FONTS = {  # rows -> glyphs ("/" between rows), for tiny labels
    5: {  # 3x5
        "0": "###/#.#/#.#/#.#/###",
        "1": ".#./##./.#./.#./###",
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
    },
}
_STROKE = 1  # emboldening, in canvas pixels: 1/_SS of an icon pixel


def _up(box) -> tuple[int, ...]:
    return tuple(v * _SS for v in box)


def _inclusive(box) -> tuple[int, int, int, int]:
    return (box[0], box[1], box[2] - 1, box[3] - 1)


@functools.lru_cache(maxsize=64)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


@functools.lru_cache(maxsize=256)
def _fit_font(label: str, width: int, height: int):
    """The largest bundled font size whose ink of `label` fits width x height."""
    for size in range(int(height * 1.5) + 2, 3, -1):  # ink is at most ~0.9 em
        box = _font(size).getbbox(label, stroke_width=_STROKE)
        if box[2] - box[0] <= width and box[3] - box[1] <= height:
            return _font(size), box
    return _font(4), _font(4).getbbox(label, stroke_width=_STROKE)


def _pixel_font(label: str, box: Box, smooth_height: float) -> int | None:
    """The tallest pixel font that fits `box`, unless Pillow's font would be taller.

    `smooth_height` is the ink height (stroke included) of Pillow's fitted font;
    a pixel font at most 1.5 px shorter reads better, being crisp.
    """
    width, height = box[2] - box[0], box[3] - box[1]
    for rows, glyphs in sorted(_PIXEL_FONTS.items(), reverse=True):
        if rows + 1.5 < smooth_height or rows > height or any(c not in glyphs for c in label):
            continue
        if _pixel_width(label, glyphs) <= width:
            return rows
    return None


def _pixel_width(label: str, glyphs: dict[str, str]) -> int:
    return sum(glyphs[c].index("/") for c in label) + len(label) - 1


def _draw_pixel_text(draw: ImageDraw.ImageDraw, label: str, box: Box, rows: int, colour: Colour) -> None:
    glyphs = _PIXEL_FONTS[rows]
    x = box[0] + (box[2] - box[0] - _pixel_width(label, glyphs)) // 2
    y = box[1] + (box[3] - box[1] - rows + 1) // 2
    for char in label:
        lines = glyphs[char].split("/")
        for row, line in enumerate(lines):
            for col, bit in enumerate(line):
                if bit == "#":
                    cell = (x + col, y + row, x + col + 1, y + row + 1)
                    draw.rectangle(_inclusive(_up(cell)), fill=colour)
        x += len(lines[0]) + 1


def _draw_dash(draw: ImageDraw.ImageDraw, box: Box, colour: Colour) -> None:
    width, height = box[2] - box[0], box[3] - box[1]
    bar_w, bar_h = max(4, round(width * 0.45)), max(2, round(height / 6))
    left, top = box[0] + (width - bar_w) // 2, box[1] + (height - bar_h) // 2
    draw.rectangle(_inclusive(_up((left, top, left + bar_w, top + bar_h))), fill=colour)


def _draw_text(draw: ImageDraw.ImageDraw, label: str, box: Box, colour: Colour) -> None:
    """Draw `label` centred in `box` (icon pixels), as large as fits."""
    if label and all(c in _DASHES for c in label):
        return _draw_dash(draw, box, colour)
    label = "".join("-" if c in _DASHES else c for c in label)
    left, top, right, bottom = _up(box)
    font, ink = _fit_font(label, right - left, bottom - top)
    rows = _pixel_font(label, box, (ink[3] - ink[1]) / _SS)
    if rows is not None:
        return _draw_pixel_text(draw, label, box, rows, colour)
    x = left + (right - left - (ink[2] - ink[0])) / 2 - ink[0]
    y = top + (bottom - top - (ink[3] - ink[1])) / 2 - ink[1]
    draw.text((round(x), round(y)), label, font=font, fill=colour, stroke_width=_STROKE, stroke_fill=colour)


# --- the tray icon ------------------------------------------------------------
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
    return _Layout(
        mark=(0, 0, size, line_top),
        line=(line_left, line_top, line_left + line_w, line_top + line_h),
        badge=(0, 0, size, pill_top - gap),
        pill=(0, pill_top, size, size),
        text=(inset, pill_top + inset, size - inset, size - inset),
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
    draw.ellipse(_inclusive(_up((left, top, left + d, top + d))), fill=RED)
    stem = max(2 - d % 2, round(d / 6))
    x = left + (d - stem) // 2
    stem_top, stem_bottom = top + round(d * 0.17), top + round(d * 0.55)
    dot_top = stem_bottom + max(1, round(d * 0.12))
    dot_h = max(1, round(d * 0.14))
    for rect in ((x, stem_top, x + stem, stem_bottom), (x, dot_top, x + stem, dot_top + dot_h)):
        draw.rectangle(_inclusive(_up(rect)), fill=INK_LIGHT)


def _draw_mark_part(draw: ImageDraw.ImageDraw, layout: _Layout, state: IconState, theme: _Theme, size: int) -> None:
    """The flame on its tray line; for PROBLEM, the "!" badge in their place."""
    _, _, line_colour = _colours(state, theme)
    if state is IconState.PROBLEM:
        return _draw_badge(draw, layout.badge)
    if state is IconState.NO_DATA:
        _draw_flame(draw, _up(layout.mark), theme.muted, None)
    else:
        _draw_flame(draw, _up(layout.mark), FLAME, FLAME_CORE if size >= 32 else None)
    draw.rectangle(_inclusive(_up(layout.line)), fill=line_colour)


@functools.lru_cache(maxsize=64)
def _render(label: str, state: IconState, theme_name: str, size: int) -> Image.Image:
    theme = _THEMES[theme_name]
    layout = _layout(size, 0.5 if state is IconState.PROBLEM else 0.62)
    pill, text_colour, _ = _colours(state, theme)
    image = Image.new("RGBA", (size * _SS, size * _SS), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    _draw_mark_part(draw, layout, state, theme, size)
    if pill is not None:
        draw.rounded_rectangle(_inclusive(_up(layout.pill)), radius=size * _SS * 0.16, fill=pill)
    _draw_text(draw, label, layout.text, text_colour)
    return image.resize((size, size), Image.Resampling.BOX)


def render_icon(label: str, state: IconState, theme: str = "light", size: int = 64) -> Image.Image:
    """The tray icon: the mark over `label`, coloured by `state`, RGBA `size`x`size`.

    `theme` is the panel's: "light" draws dark text, "dark" light text. Results
    are cached: the same arguments return the same (shared, do not mutate) image.
    """
    if theme not in _THEMES:
        raise ValueError(f"theme must be 'light' or 'dark', not {theme!r}")
    if not isinstance(state, IconState):
        raise TypeError(f"state must be an IconState, not {state!r}")
    if size < 8:
        raise ValueError(f"size must be at least 8 px, not {size}")
    return _render(str(label), state, theme, int(size))


def render_icon_pair(
    label: str, state: IconState, theme: str = "light", base: int = 32
) -> tuple[Image.Image, Image.Image]:
    """(1x, 2x) renderings for backends that take a HiDPI pair."""
    return render_icon(label, state, theme, base), render_icon(label, state, theme, base * 2)


# --- the panel's theme --------------------------------------------------------
Runner = Callable[[list[str]], "str | None"]


def _run_quiet(argv: list[str]) -> str | None:
    """The command's stdout if it ran (whatever its exit code), else None."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=1.0, check=False)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return done.stdout.strip()


def resolve_theme(
    setting: str,
    env: Mapping[str, str] = os.environ,
    *,
    platform: str | None = None,
    run: Runner | None = None,
) -> str:
    """The panel the icon sits on: "light" or "dark".

    "light"/"dark" are returned as given; anything else ("auto") is detected:
    macOS from AppleInterfaceStyle, Windows from the taskbar's registry value,
    Linux from GTK_THEME ":dark" or gsettings' color-scheme. Never raises;
    when nothing is known the answer is "dark" (most Linux panels are). Spawns
    a process on macOS and Linux: call it on start and on settings changes.
    """
    if setting in _THEMES:
        return setting
    platform = platform or sys.platform
    try:
        if platform == "darwin":
            found = _macos_theme(run or _run_quiet)
        elif platform == "win32":
            found = _windows_theme()
        else:
            found = _linux_theme(env, run or _run_quiet)
    except Exception:  # detection is a nicety; never take the app down
        log.debug("theme detection failed", exc_info=True)
        found = None
    return found or "dark"


def _macos_theme(run: Runner) -> str | None:
    out = run(["defaults", "read", "-g", "AppleInterfaceStyle"])
    if out is None:
        return None
    return "dark" if "dark" in out.lower() else "light"  # unset in light mode


def _windows_theme() -> str | None:
    import winreg

    path = r"Software\Microsoft\Windows\CurrentVersion\Themes\Personalize"
    with winreg.OpenKey(winreg.HKEY_CURRENT_USER, path) as key:
        for name in ("SystemUsesLightTheme", "AppsUseLightTheme"):  # taskbar first
            try:
                value, _ = winreg.QueryValueEx(key, name)
            except OSError:
                continue
            return "light" if value else "dark"
    return None


def _linux_theme(env: Mapping[str, str], run: Runner) -> str | None:
    if ":dark" in env.get("GTK_THEME", "").lower():
        return "dark"
    out = run(["gsettings", "get", "org.gnome.desktop.interface", "color-scheme"]) or ""
    if "prefer-dark" in out:
        return "dark"
    # GNOME's top bar stays dark in light mode; elsewhere prefer-light is meant.
    if "prefer-light" in out and "gnome" not in env.get("XDG_CURRENT_DESKTOP", "").lower():
        return "light"
    return None
