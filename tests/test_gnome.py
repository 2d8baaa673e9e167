"""GNOME Shell with the AppIndicator extension (Ubuntu's default desktop), for real: `gnome-shell --x11 --replace`
under Xvfb with a private system bus, the extension enabled, and the tray started on sessions recorded from the
real Cline CLI (the demo's, replayed as today). What a person sees is checked where they see it: the item's label
(XAyatanaLabel) is today's cost as the engine computes it, the bar draws it in the panel's font (read back with
tesseract) beside the bare mark, a left click opens the menu and a middle click the summary, a call written to a
session changes the label within two seconds, and a budget passed before the start is in GNOME's own notification
list. Screenshots and measured figures land in tests/_artifacts/gnome/.

Skipped where GNOME Shell or the extension is not installed (CI machines): see the skip reason.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import time
from pathlib import Path

import pytest
from helpers import desktop as harness
from helpers.desktop import gtk_available
from helpers.gnome import ITEM, Gnome, split_item, todays_cost, tray_on_gnome, wait_for_label_in_bar
from helpers.live import SHOWN_WITHIN_S, append_call
from helpers.ocr import find_word, ocr_lines, ocr_words
from PIL import Image

from trayburn import demo
from trayburn.tray import host

pytestmark = [
    pytest.mark.desktop,  # a real display: `-m "not desktop"` leaves these out like the other desktop tests
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="real-desktop tests run on Linux"),
    pytest.mark.skipif(
        bool(harness.missing_gnome()),
        # Optional, so not worded as a missing install (which ./scripts/test counts as a failure): GNOME Shell is
        # not part of ./scripts/setup (about 170 packages); these run where someone put it on the machine.
        reason=f"optional GNOME Shell desktop not here (Debian packages: {' '.join(harness.missing_gnome())})",
    ),
    pytest.mark.skipif(
        shutil.which("tesseract") is None, reason="reading the bar needs: apt-get install tesseract-ocr"
    ),
]
FLAME = (255, 122, 26)  # the mark's flame (trayburn/tray/draw.py), as the extension shows it scaled down
RED = (214, 40, 40)  # the dot on the mark once the daily budget is passed (trayburn/tray/draw.py)


@pytest.fixture
def out(artifacts, request) -> Path:
    if not gtk_available() or not host._available("appindicator"):
        pytest.skip(
            "the appindicator backend needs PyGObject and gir1.2-ayatanaappindicator3-0.1 (./scripts/setup installs)"
        )
    folder = artifacts / "gnome" / request.node.name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


@pytest.fixture
def gnome(tmp_path, out):
    with tray_on_gnome(tmp_path, out) as g:
        yield g


def test_the_bar_shows_todays_cost_in_the_panels_font_beside_the_bare_mark(gnome):
    g = gnome
    expected = g.expected_label()
    assert re.fullmatch(r"\$\d+\.\d\d", expected), expected  # the demo has priced calls today
    g.desk.wait_for(lambda: g.prop("XAyatanaLabel") == expected, 30, what=f"the item's label {expected}")
    assert g.prop("XAyatanaLabelGuide") == "$00.00"  # the width the bar keeps for it
    word = wait_for_label_in_bar(g, expected, "bar.png")

    measured = measure_item(g.out / "bar.png", word) | {"label": expected, "bar_height_px": harness.GNOME_BAR}
    (g.out / "measured.json").write_text(json.dumps(measured, indent=1))
    assert measured["contrast"] >= 4.5, measured  # WCAG AA for text
    assert measured["label_height_px"] >= 10, measured  # the panel's font: taller than a 16 px icon's 7 px digits
    assert 12 <= measured["icon_width_px"] <= 20, measured  # the extension's ~16 px icon slot, beside the label
    assert measured["flame"], measured  # the mark's flame
    assert not measured["red_dot"], measured  # no budget: no dot on the mark
    assert not [w for w, rect in ocr_words(g.out / "bar.png") if rect.x < word.x - 4 and "$" in w], (
        "a second figure in the bar: the icon should be the bare mark where the label is drawn"
    )


def measure_item(bar_png: Path, word: harness.Rect) -> dict:
    """The label's contrast and ink height, and the icon's width left of it, in a screenshot of the bar."""
    with Image.open(bar_png) as shot:
        bar = shot.convert("RGB")
        box = (max(0, word.x - 2), 0, min(bar.width, word.x + word.width + 2), bar.height)
        ratio, ink, background = harness.text_contrast(bar, box)
        height = harness.ink_height(bar, box, ink, background)
        # the icon: the non-background columns just left of the label, up to the first gap of 3 columns
        reach = 40 * bar.height // harness.GNOME_BAR
        columns = [x for x in range(box[0] - 1, max(0, box[0] - reach), -1) if _column_inked(bar, x, background)]
        icon = _first_run(columns)
        icon_box = (min(icon), 0, max(icon) + 1, bar.height) if icon else (0, 0, 1, 1)
        icon_colours = {rgb for _, rgb in bar.crop(icon_box).getcolors(1 << 16)}
    return {
        "contrast": round(ratio, 2),
        "ink": ink,
        "panel": background,
        "label_height_px": height,
        "icon_width_px": len(icon),
        "flame": harness.has_colour_near(icon_colours, FLAME, 60),
        "red_dot": harness.has_colour_near(icon_colours, RED, 40),
    }


def _column_inked(image: Image.Image, x: int, background: tuple[int, int, int]) -> bool:
    return any(harness.contrast(image.getpixel((x, y)), background) > 1.05 for y in range(image.height))


def _first_run(columns: list[int]) -> list[int]:
    """The first run of columns (right to left) with gaps of at most 3 px, once the label's gap is passed."""
    run: list[int] = []
    for x in columns:
        if run and run[-1] - x > 3:
            break
        run.append(x)
    return run


def test_at_200_percent_the_label_and_the_mark_are_drawn_twice_as_big(tmp_path, out):
    """GNOME at 200 % (its scaling-factor 2, as on a HiDPI screen): the bar is 64 px, the label in a font twice as
    tall and the mark in a 32 px slot."""
    with tray_on_gnome(tmp_path, out, scale=2) as g:
        expected = g.expected_label()
        g.desk.wait_for(lambda: g.prop("XAyatanaLabel") == expected, 30, what=f"the item's label {expected}")
        word = wait_for_label_in_bar(g, expected, "bar.png")
        measured = measure_item(g.out / "bar.png", word) | {"label": expected, "bar_height_px": 2 * harness.GNOME_BAR}
        (g.out / "measured.json").write_text(json.dumps(measured, indent=1))
    assert measured["contrast"] >= 4.5, measured
    assert measured["label_height_px"] >= 20, measured  # 13 px at 100 %
    assert 26 <= measured["icon_width_px"] <= 36, measured  # 16 px at 100 %
    assert measured["flame"], measured


def test_a_left_click_opens_the_menu_and_open_summary_opens_the_window(gnome):
    g = gnome
    expected = g.expected_label()
    word = wait_for_label_in_bar(g, expected, "bar.png")
    width = harness.screen_width(g.desk)
    g.desk.click(width // 2 + word.center[0], word.center[1], button=1)
    menu_area = harness.Rect(width // 2, harness.GNOME_BAR, width // 2, 560)
    text: list[str] = []

    def menu_shown():
        text[:] = [ocr_lines(g.desk.screenshot(g.out / "menu.png", menu_area))]
        return "Open summary" in text[0]

    try:
        g.desk.wait_for(menu_shown, 30, what="the menu under the item")
    except harness.DesktopError as exc:
        raise AssertionError(f"{exc}; tesseract read {text!r}") from None
    today = next((line for line in text[0].splitlines() if line.startswith("Today")), "")
    assert expected in today, text[0]  # "Today: $0.33 · 94 calls · incl. $0.07 estimated"
    assert "Quit trayburn" in text[0], text[0]
    entry = find_word(ocr_words(g.out / "menu.png"), "summary")
    assert entry is not None, text[0]
    g.desk.click(menu_area.x + entry.center[0], menu_area.y + entry.center[1], button=1)
    window = g.desk.wait_for(
        lambda: next((w for w in g.desk.find_windows(viewable=True) if w.name.startswith("trayburn —")), None),
        30,
        what="the summary window",
    )
    g.desk.screenshot(g.out / "summary.png")
    assert window.rect.width > 300


def test_a_middle_click_opens_the_summary(gnome):
    """The extension sends SecondaryActivate for a middle click; the tray points it at *Open summary*."""
    g = gnome
    word = wait_for_label_in_bar(g, g.expected_label(), "bar.png")
    width = harness.screen_width(g.desk)
    g.desk.click(width // 2 + word.center[0], word.center[1], button=2)
    window = g.desk.wait_for(
        lambda: next((w for w in g.desk.find_windows(viewable=True) if w.name.startswith("trayburn —")), None),
        30,
        what="the summary window",
    )
    assert window.rect.width > 300


def test_a_call_written_to_a_session_changes_the_label_within_two_seconds(gnome):
    g = gnome
    before = g.expected_label()
    g.desk.wait_for(lambda: g.prop("XAyatanaLabel") == before, 30, what=f"the item's label {before}")
    running = next(p for p in g.sessions.iterdir() if p.name.endswith("_y8q37"))
    start = time.monotonic()
    append_call(running, 0.5)  # one more call, the file rewritten in place as the CLI writes it
    after = g.expected_label()
    assert after != before, (before, after)
    try:
        g.desk.wait_for(lambda: g.prop("XAyatanaLabel") == after, SHOWN_WITHIN_S, what=f"the label {after}")
    except harness.DesktopError as exc:
        raise AssertionError(f"{exc}; the item says {g.prop('XAyatanaLabel')!r}") from None
    assert time.monotonic() - start < SHOWN_WITHIN_S
    wait_for_label_in_bar(g, after, "bar-after.png", timeout=15)


def test_the_mark_is_not_sent_again_when_only_the_figure_changes(gnome):
    g = gnome
    before = g.expected_label()
    g.desk.wait_for(lambda: g.prop("XAyatanaLabel") == before, 30, what=f"the item's label {before}")
    icon = g.prop("IconName")  # pystray writes each icon it is given to a new file and names it here
    running = next(p for p in g.sessions.iterdir() if p.name.endswith("_y8q37"))
    append_call(running, 0.5)
    after = g.expected_label()
    g.desk.wait_for(lambda: g.prop("XAyatanaLabel") == after, 10, what=f"the label {after}")
    assert g.prop("IconName") == icon, "the same mark was sent again as a new icon file"


def test_a_budget_passed_before_the_start_is_in_gnomes_own_notification_list(tmp_path, out):
    """The notice goes to GNOME Shell's own notification service (org.freedesktop.Notifications, run by gjs), and
    a person finds it in the message list under the clock. (Banners are off here: GNOME keeps a banner up until
    the person touches the mouse or keyboard, so a banner would wait for input nobody gives under Xvfb.)"""
    config = demo.prepare(tmp_path / "demo")
    spent = todays_cost(config, tmp_path)[1]
    assert spent > 0.02, spent
    budget = f"{spent / 2:.2f}"
    config.write_text(config.read_text() + f"daily_budget = {budget}\n")
    with tray_on_gnome(tmp_path, out, config) as g:
        owner = harness.gdbus_call(
            g.desk,
            "org.freedesktop.Notifications",
            "/org/freedesktop/Notifications",
            "org.freedesktop.Notifications.GetServerInformation",
        )
        assert "gnome-shell" in owner, owner
        log = tmp_path / "logs" / "trayburn.log"
        g.desk.wait_for(lambda: "the icon is up" in log.read_text(), 30, what="the tray up")
        width = harness.screen_width(g.desk)
        g.desk.click(width // 2, harness.GNOME_BAR // 2, button=1)  # the clock: the message list and calendar
        messages = harness.Rect(width // 4, harness.GNOME_BAR, width // 2, 480)
        text: list[str] = []

        def listed():
            text[:] = [" ".join(ocr_lines(g.desk.screenshot(g.out / "messages.png", messages)).split())]
            return f"passed your ${budget}" in text[0]  # "$0.33 today: passed your $0.16 daily budg…"

        try:
            g.desk.wait_for(listed, 30, what="the budget notice in GNOME's message list")
        except harness.DesktopError as exc:
            raise AssertionError(f"{exc}; tesseract read {text!r}") from None
        assert "trayburn" in text[0], text[0]
        assert f"{spent:.2f} today" in text[0], text[0]  # the figures first: the list's one line shows them
        g.desk.key("Escape")
        word = wait_for_label_in_bar(g, g.expected_label(), "bar-over-budget.png")
        measured = measure_item(g.out / "bar-over-budget.png", word)
        assert measured["red_dot"] and measured["flame"], measured  # the budget passed, on the mark itself


def test_a_tray_started_before_the_shell_registers_with_the_extension_and_nobody_is_told_it_is_unseen(tmp_path, out):
    """*Start at login* may run trayburn before GNOME Shell and its extension are up: the tray waits a little for
    the extension's watcher, chooses the appindicator backend all the same, and its item registers once the
    extension comes; the grace period ends with the icon seen, and no "cannot be seen" notice was sent (every
    notice is logged as it is sent, and said on stderr)."""
    with tray_on_gnome(tmp_path, out, tray_first=True) as g:
        log = tmp_path / "logs" / "trayburn.log"
        assert "waiting up to" in log.read_text()  # it did start before the extension's watcher
        if "no tray host yet" in log.read_text():  # the shell came after the tray's wait: the grace period ran
            g.desk.wait_for(lambda: "the icon can be seen now" in log.read_text(), 60, what="the grace period's end")
        expected = g.expected_label()
        g.desk.wait_for(lambda: g.prop("XAyatanaLabel") == expected, 30, what=f"the item's label {expected}")
        text = log.read_text()
        assert "tray backend appindicator" in text and "tray backend gtk" not in text, text
        assert "cannot be seen" not in text + (g.out / "desk" / "tray.log").read_text()
        wait_for_label_in_bar(g, expected, "bar-tray-first.png")


GNOME_MNEMONIC = re.compile(r"_([^_])")  # the extension's dbusMenu.js: label.replace(/_([^_])/, '$1'), once


def menu_labels(g: Gnome) -> list[str]:
    """Every label of the item's menu (submenus too), as the item sends them over D-Bus (com.canonical.dbusmenu)."""
    bus, _ = split_item(g.item)
    found = re.search(r"objectpath '([^']+)'", harness.dbus_property(g.desk, bus, split_item(g.item)[1], ITEM, "Menu"))
    assert found, "the item has no menu"
    layout = harness.gdbus_call(
        g.desk, bus, found.group(1), "com.canonical.dbusmenu.GetLayout", "--", "0", "-1", "@as []"
    )
    return [a or b for a, b in re.findall(r"'label': <(?:'([^']*)'|\"([^\"]*)\")>", layout)]


def test_session_titles_in_the_menu_show_their_underscores_once_as_gnome_renders_them(gnome):
    """The demo's session titles are snake_case ("b_tools_patch"): read over D-Bus and rendered by GNOME's rule,
    they show each underscore once (they showed "b_tools__patch")."""
    g = gnome
    labels = g.desk.wait_for(
        lambda: (found := menu_labels(g)) and any("tools" in label for label in found) and found,
        30,
        what="the sessions in the item's menu",
    )
    shown = [GNOME_MNEMONIC.sub(r"\1", label, count=1) for label in labels]
    titles = [s for s in shown if "b_tools_" in s]
    assert titles, shown
    assert all("b_tools_patch" in t or "b_tools_editor" in t for t in titles), titles
    assert not [s for s in shown if "__" in s], shown
    assert any(s.startswith("Today") for s in shown), shown  # labels without "_" are sent as they are
