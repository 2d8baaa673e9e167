"""The tray icon: labels, states, panels, the cache, the desktop's shade, the assets."""

from __future__ import annotations

import ast
import itertools
import os
import re
import sys
import types
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageChops

from trayburn import shade
from trayburn.tray import draw, view
from trayburn.tray.draw import CRISP_BELOW, draw_mark, render_icon
from trayburn.tray.view import IconState, format_cost
from trayburn.window import theme

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "assets"
SIZES = (16, 22, 24, 32, 64)
THEMES = ("light", "dark")


def pixels(image: Image.Image):
    """The pixel values (getdata is deprecated from Pillow 13, its successor new there)."""
    return getattr(image, "get_flattened_data", image.getdata)()


def opaque(image: Image.Image, box=None, threshold: int = 128) -> int:
    """How many pixels of `image` (or of `box` in it) are mostly opaque."""
    alpha = image.getchannel("A")
    if box is not None:
        alpha = alpha.crop(box)
    return sum(1 for a in pixels(alpha) if a >= threshold)


def label_box(size: int) -> tuple[int, int, int, int]:
    """The lower 55% of the icon, where the label is drawn."""
    return (0, size - round(size * 0.55), size, size)


def count(image: Image.Image, predicate) -> int:
    return sum(1 for px in pixels(image) if px[3] >= 200 and predicate(px))


def is_amber(px) -> bool:
    return px[0] > 220 and 140 < px[1] < 210 and px[2] < 60


def is_red(px) -> bool:
    return px[0] > 180 and px[1] < 70 and px[2] < 70


# --- format_cost ----------------------------------------------------------------
@pytest.mark.parametrize(
    "usd, label",
    [
        (None, "\u2013"),
        (float("nan"), "\u2013"),
        (float("inf"), "\u2013"),
        (0, "$0"),
        (0.0, "$0"),
        (0.004, "$0"),
        (-3.0, "$0"),
        (0.07, "0.07"),
        (4.214, "4.21"),
        (4.216, "4.22"),
        (9.994, "9.99"),
        (9.996, "10"),
        (12.34, "12"),
        (99.4, "99"),
        (123.4, "123"),
        (999.4, "999"),
        (999.5, "1.0k"),
        (1234, "1.2k"),
        (9949, "9.9k"),
        (9950, "10k"),
        (12_345, "12k"),
        (999_499, "999k"),
        (999_500, "1.0M"),
        (12_300_000, "12M"),
        (5e12, "1T+"),
    ],
)
def test_format_cost_table(usd, label):
    assert format_cost(usd) == label


@given(st.floats(allow_nan=True, allow_infinity=True) | st.none())
def test_format_cost_fits_four_characters(usd):
    assert 1 <= len(format_cost(usd)) <= 4


@settings(max_examples=40, deadline=None)
@given(st.floats(min_value=0, max_value=1e7), st.sampled_from([14, 16, 22, 24, 30]))
def test_every_label_renders_inside_the_icon(usd, size):
    image = render_icon(format_cost(usd), IconState.OK, "dark", size)
    assert opaque(image, label_box(size)) >= 6, "the label left no ink"
    if size < CRISP_BELOW:  # pixel digits, up to the icon's sides: every label pixel is ink or not, no blur
        # (from $100k a day, "999k" is four 3-px glyphs: 15 px, wider than a 14 px icon: the smooth font then)
        box = label_box(size)
        alphas = {image.getpixel((x, y))[3] for x in range(box[0], box[2]) for y in range(box[1], box[3])}
        assert usd >= 1e5 or alphas <= {0, 255}, f"blurred digits at {size} px: {sorted(alphas)}"
        return
    edges = [image.getpixel((x, y))[3] for y in range(size // 2, size) for x in (0, size - 1)]
    assert max(edges) < 128, "the label touches the icon's side: not fitted to width"


@pytest.mark.parametrize(
    "amount, symbol, text",
    [
        (None, "€", "\u2013"),
        (0.0, "€", "€0"),
        (0.049, "€", "€0"),
        (0.33, "€", "€0.3"),
        (3.87, "€", "€3.9"),
        (11.04, "€", "€11"),
        (631.5, "¥", "¥632"),
        (1_800, "¥", "¥2k"),
        (150_000, "¥", "¥150k"),
        (2_600_000, "¥", "¥3M"),
        (3.8, "CHF", "3.8"),  # a symbol of several letters would crowd out the figure
    ],
)
def test_format_money_table(amount, symbol, text):
    assert view.format_money(amount, symbol) == text


@given(st.floats(allow_nan=True, allow_infinity=True) | st.none(), st.sampled_from(["€", "¥", "£", "CHF"]))
def test_format_money_is_a_symbol_and_four_characters_at_most(amount, symbol):
    text = view.format_money(amount, symbol)
    figure = text[1:] if text[:1] == symbol else text
    assert 1 <= len(figure) <= 4 and len(text) <= 5


@pytest.mark.parametrize("size", [16, 22, 24, 32, 64])
def test_currency_symbols_are_drawn_not_missing_glyph_boxes(size):
    """Pillow's bundled font has no €, ¥ or £: drawn as the same box they would all look alike."""
    shots = {t: render_icon(t, IconState.OK, "dark", size).tobytes() for t in ("€3.9", "¥3.9", "£3.9", "3.9")}
    assert len(set(shots.values())) == 4
    assert opaque(render_icon("€644", IconState.OK, "dark", size), label_box(size)) >= 6
    assert (
        render_icon("￥632", IconState.OK, "dark", size).tobytes()
        == render_icon("¥632", IconState.OK, "dark", size).tobytes()
    )


# --- rendering ------------------------------------------------------------------
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("theme", THEMES)
def test_every_state_renders_and_the_states_differ(size, theme):
    images = {s: render_icon("4.21", s, theme, size) for s in IconState}
    for image in images.values():
        assert image.mode == "RGBA" and image.size == (size, size)
        assert opaque(image) >= size, "an almost empty icon"
    for a, b in itertools.combinations(IconState, 2):
        diff = ImageChops.difference(images[a], images[b])
        changed = sum(1 for px in pixels(diff) if max(px) > 64)
        assert changed >= size // 2, f"{a.name} and {b.name} look alike at {size}px"


@pytest.mark.parametrize("size", SIZES)
def test_warn_is_amber_and_over_is_red(size):
    area = size * size
    label = lambda s: render_icon("12", s, "dark", size).crop(label_box(size))  # noqa: E731
    assert count(label(IconState.WARN), is_amber) > area * 0.25
    assert count(label(IconState.OVER), is_red) > area * 0.25
    assert count(label(IconState.OK), is_amber) == 0 and count(label(IconState.OK), is_red) == 0


@pytest.mark.parametrize("size", (16, 22, 32, 64))
def test_the_bare_mark_carries_the_budget_as_a_dot_and_staleness_as_grey(size):
    """Where the host draws the label (GNOME), the label is plain text: the budget's state is on the mark."""
    corner = (size // 2, size // 2, size, size)
    ok = draw.render_mark(size)
    warn, over = draw.render_mark(size, IconState.WARN), draw.render_mark(size, IconState.OVER)
    dot = size * size * 0.05  # the flame's own edge blends to a few amber-like pixels at 16 px: a dot is more
    assert count(warn.crop(corner), is_amber) > count(ok.crop(corner), is_amber) + dot
    assert count(over.crop(corner), is_red) > count(ok.crop(corner), is_red) + dot
    assert count(ok, is_red) == 0 and count(warn, is_red) == 0
    stale = draw.render_mark(size, stale=True)
    saturated = count(stale, lambda px: max(px[:3]) - min(px[:3]) > 40)
    assert saturated == 0 and count(ok, lambda px: max(px[:3]) - min(px[:3]) > 40) > 0


@pytest.mark.parametrize("size", SIZES)
def test_problem_shows_a_red_badge_and_no_data_is_grey(size):
    problem = render_icon("4.21", IconState.PROBLEM, "dark", size)
    top = problem.crop((0, 0, size, size // 2))
    assert count(top, is_red) > size * size * 0.08
    no_data = render_icon(format_cost(None), IconState.NO_DATA, "dark", size)
    saturated = count(no_data, lambda px: max(px[:3]) - min(px[:3]) > 40)
    assert saturated == 0, "NO_DATA should be greyed out"


@pytest.mark.parametrize("size", SIZES)
def test_the_label_is_really_drawn(size):
    a = render_icon("4.21", IconState.OK, "dark", size)
    b = render_icon("9.99", IconState.OK, "dark", size)
    assert a.tobytes() != b.tobytes()
    assert ImageChops.difference(a, b).crop(label_box(size)).getbbox() is not None
    # 16 px with the 3x5 digits is ~30 pixels of ink; larger sizes more.
    assert opaque(a, label_box(size)) >= 25


def test_the_no_data_dash_is_a_bar_not_a_missing_glyph_box():
    # Pillow's bundled font has no en dash: it would draw an empty rectangle.
    size = 24
    image = render_icon("\u2013", IconState.NO_DATA, "dark", size)
    alpha = image.getchannel("A").crop(label_box(size))
    bbox = alpha.point(lambda a: 255 if a > 128 else 0).getbbox()
    assert bbox is not None
    width, height = bbox[2] - bbox[0], bbox[3] - bbox[1]
    assert width >= 3 * height, f"expected a horizontal bar, ink is {width}x{height}"
    ink = image.crop(label_box(size))
    assert opaque(ink) == width * height, "the dash should be a solid bar"


@pytest.mark.parametrize("size", (16, 22))
def test_small_four_character_labels_are_crisp(size):
    image = render_icon("9.99", IconState.OK, "dark", size)
    alphas = [a for a in pixels(image.getchannel("A").crop(label_box(size))) if a]
    soft = sum(1 for a in alphas if a < 200)
    assert soft <= len(alphas) * 0.1, "blurry digits at a size where every pixel counts"


@pytest.mark.parametrize("size", SIZES)
def test_dark_and_light_themes_differ_in_the_right_direction(size):
    light = render_icon("4.21", IconState.OK, "light", size)
    dark = render_icon("4.21", IconState.OK, "dark", size)
    assert light.tobytes() != dark.tobytes()
    ink = lambda im: [px for px in pixels(im.crop(label_box(size))) if px[3] > 200]  # noqa: E731
    assert max(sum(px[:3]) / 3 for px in ink(light)) < 90, "light panel needs dark text"
    assert min(sum(px[:3]) / 3 for px in ink(dark)) > 160, "dark panel needs light text"


def test_the_cache_returns_the_same_image():
    first = render_icon("4.21", IconState.WARN, "dark", 22)
    assert render_icon("4.21", IconState.WARN, "dark", 22) is first
    assert render_icon("4.21", IconState.WARN, theme="dark", size=22) is first
    assert render_icon("4.21", IconState.OK) is render_icon("4.21", IconState.OK, "light", 64)
    assert render_icon("4.22", IconState.WARN, "dark", 22) is not first
    assert render_icon("4.21", IconState.OVER, "dark", 22) is not first


@pytest.mark.parametrize(
    "kwargs, error",
    [({"theme": "auto"}, ValueError), ({"size": 4}, ValueError), ({"state": "ok"}, TypeError)],
)
def test_render_icon_rejects_bad_arguments(kwargs, error):
    args = {"label": "1", "state": IconState.OK, "theme": "dark", "size": 16} | kwargs
    with pytest.raises(error):
        render_icon(**args)


@pytest.mark.parametrize("module", [draw, view, shade])
def test_the_drawing_modules_import_only_pillow_and_the_standard_library(module):
    tree = ast.parse(Path(module.__file__).read_text())
    names = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    names |= {
        node.module.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0  # ours are relative
    }
    allowed = set() if module in (view, shade) else {"PIL"}
    assert names - {"__future__"} <= set(sys.stdlib_module_names) | allowed


# --- the panel's theme ----------------------------------------------------------
def runner(answer):
    calls = []

    def run(argv):
        calls.append(argv)
        return answer(argv) if callable(answer) else answer

    run.calls = calls
    return run


def gsettings(color_scheme, gtk_theme="'Adwaita'"):
    """A runner answering gsettings' two questions."""
    return runner(lambda argv: color_scheme if argv[-1] == "color-scheme" else gtk_theme)


@pytest.mark.parametrize("setting", THEMES)
def test_an_explicit_theme_is_kept(setting):
    run = runner("'prefer-dark'")
    assert shade.panel_shade(setting, {}, platform="linux", run=run) == setting
    assert shade.window_shade(setting, {}, platform="linux", run=run) == setting
    assert run.calls == []


@pytest.mark.parametrize(
    "env, scheme, panel, windows",
    [
        ({"GTK_THEME": "Adwaita:dark"}, "'default'", "dark", "dark"),
        ({"XDG_CURRENT_DESKTOP": "XFCE"}, "'prefer-dark'", "dark", "dark"),
        ({}, "'prefer-light'", "light", "light"),
        ({"XDG_CURRENT_DESKTOP": "ubuntu:GNOME"}, "'prefer-light'", "dark", "light"),  # the top bar stays dark
        ({"XDG_CURRENT_DESKTOP": "GNOME"}, "'prefer-dark'", "dark", "dark"),
        ({"XDG_CURRENT_DESKTOP": "GNOME"}, "'default'", "dark", None),
        ({}, "'default'", None, None),  # nothing says: the icon brings its own tile
        ({}, "", None, None),  # gsettings failed
        ({}, None, None, None),  # no gsettings at all
    ],
)
def test_auto_on_linux(env, scheme, panel, windows):
    run = gsettings(scheme)
    assert shade.detect(env, platform="linux", run=run) == shade.Appearance(windows, panel)


def test_a_dark_gtk_theme_name_counts_when_the_colour_scheme_is_silent():
    found = shade.detect({}, platform="linux", run=gsettings("'default'", "'Adwaita-dark'"))
    assert found == shade.Appearance("dark", "dark")


def test_the_icon_and_the_window_agree_on_gnome_preferring_dark():
    run = gsettings("'prefer-dark'")
    env = {"XDG_CURRENT_DESKTOP": "GNOME"}
    assert shade.panel_shade("auto", env, platform="linux", run=run) == "dark"
    assert theme.resolve("auto", env, run=run) is theme.DARK


@pytest.mark.parametrize("background, expected", [("239,240,241", "light"), ("32,35,38", "dark"), ("oops", None)])
def test_kde_reads_its_colour_scheme(tmp_path, background, expected):
    (tmp_path / "kdeglobals").write_text(f"[General]\nName=x\n\n[Colors:Window]\nBackgroundNormal={background}\n")
    env = {"XDG_CURRENT_DESKTOP": "KDE", "XDG_CONFIG_HOME": str(tmp_path)}
    assert shade.detect(env, platform="linux", run=runner(None)) == shade.Appearance(expected, expected)


@pytest.mark.parametrize("answer, expected", [("Dark", "dark"), ("", "light"), (None, None)])
def test_auto_on_macos(answer, expected):
    run = runner(answer)
    assert shade.detect({}, platform="darwin", run=run) == shade.Appearance(expected, expected)
    assert run.calls == [["defaults", "read", "-g", "AppleInterfaceStyle"]]


def fake_winreg(values: dict[str, int]) -> types.ModuleType:
    class Key:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    def query(key, name):
        if name not in values:
            raise FileNotFoundError(name)
        return values[name], 4

    module = types.ModuleType("winreg")
    module.HKEY_CURRENT_USER = object()
    module.OpenKey = lambda root, path: Key()
    module.QueryValueEx = query
    return module


@pytest.mark.parametrize(
    "values, expected",
    [
        ({"SystemUsesLightTheme": 1, "AppsUseLightTheme": 0}, "light"),  # the taskbar decides
        ({"SystemUsesLightTheme": 0, "AppsUseLightTheme": 1}, "dark"),
        ({"AppsUseLightTheme": 1}, "light"),
        ({}, None),
    ],
)
def test_auto_on_windows(monkeypatch, values, expected):
    monkeypatch.setitem(sys.modules, "winreg", fake_winreg(values))
    assert shade.panel_shade("auto", {}, platform="win32", run=runner(None)) == expected


def test_auto_never_raises():
    def broken(argv):
        raise RuntimeError("boom")

    assert shade.detect({}, platform="linux", run=broken) == shade.UNKNOWN
    assert shade.detect({}, platform="darwin", run=broken) == shade.UNKNOWN


def test_the_real_runner_survives_a_missing_command():
    assert shade.run_quiet(["trayburn-no-such-command-xyz"]) is None


# --- assets -----------------------------------------------------------------------
def test_the_ico_holds_every_size_each_drawn_at_that_size():
    with Image.open(ASSETS / "trayburn.ico") as ico:
        expected = {(s, s) for s in (16, 24, 32, 48, 64, 128, 256)}
        assert set(ico.info["sizes"]) == expected
        ico.size = (16, 16)
        ico.load()
        small = ico.convert("RGBA")
    assert small.tobytes() == draw_mark(16).tobytes(), "16 px frame is not draw_mark(16)"


def test_the_pngs_are_current_and_identical():
    png = ASSETS / "trayburn.png"
    packaged = ROOT / "trayburn" / "assets" / "trayburn.png"
    assert png.read_bytes() == packaged.read_bytes()
    with Image.open(png) as image:
        assert image.size == (256, 256) and image.mode == "RGBA"
        assert image.tobytes() == draw_mark(256).tobytes(), "run assets/make_assets.py"


def test_the_icns_opens():
    with Image.open(ASSETS / "trayburn.icns") as icns:
        assert icns.format == "ICNS"
        assert (256, 256, 1) in icns.info["sizes"]


def test_the_svg_is_an_svg_drawn_from_the_same_shapes():
    root = ET.parse(ASSETS / "trayburn.svg").getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert root.get("viewBox") == "0 0 256 256"
    shapes = {el.get("id"): el for el in root.iter() if el.get("id")}

    def hex_of(c):
        return "#{:02X}{:02X}{:02X}".format(*c[:3])

    assert shapes["tile"].get("fill") == hex_of(draw.TILE)
    assert shapes["flame"].get("fill") == hex_of(draw.FLAME)
    assert shapes["core"].get("fill") == hex_of(draw.FLAME_CORE)
    assert shapes["tray"].get("stroke") == hex_of(draw.DISH)

    def numbers(d):
        return [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", d)]

    def flat(path):
        return [float(v) for point in [path[0], *itertools.chain(*path[1:])] for v in point]

    assert numbers(shapes["flame"].get("d")) == flat(draw._FLAME_PATH)
    assert numbers(shapes["core"].get("d")) == flat(draw._CORE_PATH)
    assert numbers(shapes["tray"].get("d")) == [float(v) for p in draw._DISH_POINTS for v in p]


@pytest.mark.skipif(os.name != "posix", reason="a stand-in command on PATH")
def test_asking_gsettings_never_starts_a_session_bus(tmp_path, monkeypatch):
    """With a display but no session bus (a tray started from a bare X session, a test's Xvfb), `gsettings`
    autolaunched a `dbus-launch` that outlived it; asked by trayburn it may not (a stand-in gsettings records
    the bus address it was given; the control: a bus that exists is passed as it is)."""
    seen = tmp_path / "seen"
    fake = tmp_path / "bin" / "gsettings"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\necho "${{DBUS_SESSION_BUS_ADDRESS-unset}}" >> "{seen}"\necho "\'prefer-dark\'"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ['PATH']}")
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    assert shade.run_quiet(["gsettings", "get", "org.gnome.desktop.interface", "color-scheme"]) == "'prefer-dark'"
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus")
    shade.run_quiet(["gsettings", "get", "org.gnome.desktop.interface", "gtk-theme"])
    assert seen.read_text().splitlines() == ["disabled:", "unix:path=/run/user/1000/bus"]
