"""The tray where people look: light and dark XEmbed panels at 22, 24 and 32 px, the tooltip, a
StatusNotifierItem panel (xfce4-panel), no tray host, no display, and a start from a folder that
holds a `trayburn/` folder. Real Xvfb, real trayer / xfce4-panel, real clicks; contrast measured
from screenshots. Screenshots and measured figures land in tests/_artifacts/panels/.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import desktop as harness
from helpers.desktop import gtk_available
from helpers.ocr import ocr
from PIL import Image

from trayburn import demo

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="real-desktop tests run on Linux"),
    pytest.mark.skipif(bool(harness.missing_tools()), reason=f"apt-get install {' '.join(harness.missing_tools())}"),
]
SCRIPT = Path(sys.executable).parent / "trayburn"  # the installed entry point (what autostart runs)


@pytest.fixture
def gtk():
    if not gtk_available():
        pytest.skip("the gtk tray backend needs PyGObject: pip install 'trayburn[gtk]' (see README)")


@pytest.fixture(scope="module")
def out(artifacts) -> Path:
    folder = artifacts / "panels"
    folder.mkdir(exist_ok=True)
    return folder


def tray_argv(config: Path, state: Path) -> list[str]:
    return [sys.executable, "-P", "-m", "trayburn", "--config", str(config), "--state-dir", str(state)]


def start_tray(desk: harness.Desktop, tmp_path: Path) -> subprocess.Popen:
    config = demo.prepare(tmp_path / "demo")
    env = {"TRAYBURN_LOG_DIR": str(tmp_path / "logs"), "PYSTRAY_BACKEND": ""}
    return desk.spawn(tray_argv(config, tmp_path / "state"), log="tray", env=env)


def log_text(tmp_path: Path) -> str:
    path = tmp_path / "logs" / "trayburn.log"
    return path.read_text() if path.exists() else ""


def label_box(rect: harness.Rect) -> tuple[int, int, int, int]:
    """Where the cost is, in the icon window's own screenshot: the lower 55 % of the square icon
    centred in it (trayer's icon windows are 16 px wide, and as tall as the panel allows)."""
    side = min(rect.width, rect.height)
    left, top = (rect.width - side) // 2, (rect.height - side) // 2
    return (left, top + round(side * 0.45), left + side, top + side)


# trayer's panel height -> the least digit height (px) the docked icon must show: 3x5 pixel digits in the 14 px
# icon of a 16 px panel, 4x7 in the 16 and 22 px icons, the smooth font at 30 px (drawn at 30, not 16)
DIGITS = {16: 5, 22: 7, 24: 7, 32: 10}


@pytest.mark.display  # starts an X server of its own
@pytest.mark.parametrize("height", sorted(DIGITS))
@pytest.mark.parametrize("shade", ["light", "dark"])
def test_the_docked_cost_reads_on_light_and_dark_panels(gtk, tmp_path, out, shade, height):
    desk = harness.start_desktop(tmp_path / "desk", tray=harness.trayer_args(height, light=shade == "light"))
    try:
        start_tray(desk, tmp_path)
        icon = desk.wait_for_tray_icon(timeout=30)
        if height == 32:  # the icon asks for the panel's height; trayer widens its slot to it
            icon = desk.wait_for(
                lambda: next((i for i in desk.tray_icons() if i.rect.width >= height - 4), None), 10, what="a wide slot"
            )
        measured: dict = {}
        panel = desk.tray_geometry()
        panel_rgb = Image.open(desk.screenshot(tmp_path / "panel.png", panel)).convert("RGB").getpixel((2, 2))

        def readable():
            shot = desk.screenshot(tmp_path / "icon.png", icon.rect)
            with Image.open(shot) as image:
                ratio, ink, background = harness.text_contrast(image, label_box(icon.rect), panel_rgb)
                digits = harness.ink_height(image, label_box(icon.rect), ink, background, panel_rgb)
            measured.update(ratio=round(ratio, 2), ink=ink, background=background, digits=digits)
            return ratio >= 4.5 and digits >= DIGITS[height]

        try:
            desk.wait_for(readable, 15, what="the docked cost to have a contrast of 4.5:1")
        finally:
            desk.screenshot(out / f"panel-{shade}-{height}.png", panel)
            desk.screenshot(out / f"icon-{shade}-{height}.png", icon.rect)
            measured |= {"panel": panel_rgb, "icon": [icon.rect.width, icon.rect.height]}
            (out / f"contrast-{shade}-{height}.json").write_text(json.dumps(measured))
        assert measured["ratio"] >= 4.5 and measured["digits"] >= DIGITS[height], measured
        if height == 32:  # drawn at the panel's size: the tray gives it a square slot, not 16 px
            assert min(icon.rect.width, icon.rect.height) >= height - 4, measured
    finally:
        desk.close()


def test_hovering_the_icon_shows_the_tooltip_with_todays_cost(gtk, desktop, desktop_app, tmp_path, out):
    config = demo.prepare(tmp_path / "demo")
    env = {"TRAYBURN_LOG_DIR": str(tmp_path / "logs"), "PYSTRAY_BACKEND": ""}
    desktop_app(tray_argv(config, tmp_path / "state"), log="tray-tooltip", env=env)
    icon = desktop.wait_for_tray_icon(timeout=30)
    desktop.move_pointer(*icon.rect.center)
    tip = desktop.wait_for(lambda: next(iter(desktop.tooltips()), None), 15, what="a tooltip over the icon")
    text = ocr(desktop.screenshot(out / "tooltip.png", tip.rect))
    desktop.park_pointer()
    assert "today" in text and "trayburn" in text, text


def test_a_start_from_a_folder_holding_a_trayburn_folder_still_opens_the_summary(gtk, desktop, desktop_app, tmp_path):
    home = tmp_path / "home"
    (home / "trayburn").mkdir(parents=True)  # a clone, say: `python -m trayburn` here would import it
    (home / "trayburn" / "__init__.py").write_text("raise SystemExit('the clone was imported')\n")
    config = demo.prepare(tmp_path / "demo")
    env = {"TRAYBURN_LOG_DIR": str(tmp_path / "logs"), "PYSTRAY_BACKEND": "", "HOME": str(home)}
    argv = [str(SCRIPT), "--config", str(config), "--state-dir", str(tmp_path / "state")]
    desktop_app(["/bin/sh", "-c", 'cd "$0" && exec "$@"', str(home), *argv], log="tray-shadowed", env=env)
    icon = desktop.wait_for_tray_icon(timeout=30)
    desktop.click(*icon.rect.center, button=1)
    window = desktop.wait_for(
        lambda: next((w for w in desktop.find_windows(viewable=True) if w.name.startswith("trayburn —")), None),
        30,
        what="the summary window",
    )
    assert window.rect.width > 300
    desktop.click(*icon.rect.center, button=1)  # a second click raises the same window
    desktop.wait_for(lambda: "raised the open summary window" in log_text(tmp_path), 10, what="the raise")
    summaries = [w for w in desktop.find_windows(viewable=True) if w.name.startswith("trayburn —")]
    assert len(summaries) == 1


@pytest.mark.display  # starts an X server of its own
def test_with_no_tray_host_the_person_is_told(gtk, tmp_path):
    desk = harness.start_desktop(tmp_path / "desk", tray=None)
    try:
        desk.spawn(["dunst"], log="dunst")
        proc = start_tray(desk, tmp_path)
        log = tmp_path / "desk" / "tray.log"
        desk.wait_for(lambda: log.exists() and "AppIndicator extension" in log.read_text(), 60, what="the line")
        bubble = desk.wait_for(
            lambda: next(iter(desk.find_windows(cls="Dunst", viewable=True)), None), 60, what="a notification"
        )
        desk.screenshot(tmp_path / "no-host.png", bubble.rect)
        assert proc.poll() is None, "the tray keeps running: a panel may come up later"
    finally:
        desk.close()


@pytest.mark.parametrize(
    "case, display",
    [
        ("no DISPLAY", None),
        pytest.param("a dead DISPLAY", ":4242", marks=pytest.mark.display),  # (an X server runs beside it too)
        pytest.param("no session bus", "desktop", marks=pytest.mark.display),  # an X server of its own, no bus
    ],
)
def test_without_a_graphical_session_one_line_and_a_non_zero_exit(tmp_path, case, display):
    desk = harness.start_desktop(tmp_path / "desk", tray=None, bus=False) if display else None  # no tray, no bus
    try:
        env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR")}
        env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        env.pop("PYSTRAY_BACKEND", None)
        if display:
            env["DISPLAY"] = desk.display if display == "desktop" else display
        env["TRAYBURN_LOG_DIR"] = str(tmp_path / "logs")
        (tmp_path / "settings.toml").write_text("")  # an empty settings file (--config must name a file)
        done = subprocess.run(
            tray_argv(tmp_path / "settings.toml", tmp_path / "state"),
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )
    finally:
        if desk:
            desk.close()
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 4 and len(lines) == 1, (case, done.returncode, done.stderr)
    assert lines[0].startswith("trayburn: ") and "trayburn today" in lines[0]
    assert "D-Bus" in lines[0] if display == "desktop" else "no graphical session" in lines[0]


@pytest.mark.display  # starts an X server of its own
def test_without_a_session_bus_the_icon_docks_in_an_xembed_tray_with_notifications_off(gtk, tmp_path):
    desk = harness.start_desktop(tmp_path / "desk", tray=harness.TRAYER_ARGS, bus=False)
    try:
        env = {k: v for k, v in desk.env.items() if k != "DBUS_SESSION_BUS_ADDRESS"}
        env |= {"TRAYBURN_LOG_DIR": str(tmp_path / "logs"), "PYSTRAY_BACKEND": ""}
        config = demo.prepare(tmp_path / "demo")
        proc = desk.spawn(tray_argv(config, tmp_path / "state"), log="tray", exact_env=env)
        icon = desk.wait_for_tray_icon(timeout=30)
        desk.wait_for(lambda: "the icon is up" in log_text(tmp_path), 30, what="the icon up")
        log = log_text(tmp_path)
        assert "tray backend gtk" in log and "the icon is up (notifications off)" in log
        assert log.count("WARNING trayburn.tray.start: no D-Bus session bus, so desktop notifications are off") == 1
        desk.click(*icon.rect.center, button=3)
        desk.wait_for_menu()
        desk.key("Escape")
        assert proc.poll() is None
        doctor = subprocess.run(
            [
                sys.executable,
                "-P",
                "-m",
                "trayburn",
                "doctor",
                "--config",
                str(config),
                "--state-dir",
                str(tmp_path / "s"),
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert "notifications are off" in doctor.stdout, doctor.stdout
    finally:
        desk.close()


@pytest.mark.display  # starts an X server of its own
def test_on_a_status_notifier_panel_the_item_docks_shows_the_cost_and_opens_its_menu(gtk, tmp_path, out):
    if harness.missing_tools(harness.SNI_TOOLS):
        pytest.skip(f"apt-get install {' '.join(harness.missing_tools(harness.SNI_TOOLS))}")
    desk = harness.start_sni_desktop(tmp_path / "desk", tmp_path / "home")
    try:
        start_tray(desk, tmp_path)
        top = harness.Rect(0, 0, 1280, 40)

        def flame():
            colours = harness.image_colours(desk.screenshot(tmp_path / "top.png", top))
            return harness.has_colour_near(colours, (255, 122, 26), 30)

        desk.wait_for(flame, 30, what="trayburn's item in xfce4-panel")
        desk.screenshot(out / "sni-panel.png", top)
        assert "tray backend appindicator" in log_text(tmp_path)
        with Image.open(tmp_path / "top.png") as image:
            spot = _find_colour(image.convert("RGB"), (255, 122, 26))
        desk.move_pointer(*spot)  # xfce4-panel shows the item's title as its tooltip
        tip = desk.wait_for(lambda: next(iter(desk.tooltips()), None), 15, what="the item's tooltip")
        assert "today" in ocr(desk.screenshot(out / "sni-tooltip.png", tip.rect))
        desk.click(*spot, button=1)
        menu = desk.wait_for_menu(15)
        shot = desk.screenshot(out / "sni-menu.png", menu.rect)
        text = ocr(shot)
        assert "Today" in text and "Quit trayburn" in text, text
        desk.key("Escape")
        desk.wait_for_no_menu()
        desk.click(*spot, button=2)  # SecondaryActivate: the default item, the summary
        desk.wait_for(
            lambda: next((w for w in desk.find_windows(viewable=True) if w.name.startswith("trayburn —")), None),
            30,
            what="the summary window after a middle click",
        )
    finally:
        desk.close()


def _find_colour(image: Image.Image, rgb: tuple[int, int, int]) -> tuple[int, int]:
    width, height = image.size
    for x in range(width - 1, -1, -1):  # the tray is on the right
        for y in range(height):
            if all(abs(a - b) <= 30 for a, b in zip(image.getpixel((x, y)), rgb, strict=True)):
                return x, y
    raise AssertionError("colour not found")


def test_the_menu_shows_the_budget_and_how_much_of_it_is_spent(gtk, desktop, desktop_app, tmp_path, out):
    config = demo.prepare(tmp_path / "demo")
    config.write_text(config.read_text() + "daily_budget = 0.40\n")
    env = {"TRAYBURN_LOG_DIR": str(tmp_path / "logs"), "PYSTRAY_BACKEND": ""}
    desktop_app(tray_argv(config, tmp_path / "state"), log="tray-budget", env=env)
    icon = desktop.wait_for_tray_icon(timeout=30)
    desktop.click(*icon.rect.center, button=3)
    menu = desktop.wait_for_menu()
    panel = desktop.tray_geometry()
    whole = harness.Rect(menu.rect.x - 10, 0, panel.x + panel.width - menu.rect.x + 10, menu.rect.y + menu.rect.height)
    desktop.screenshot(out / "menu-budget.png", whole)
    text = ocr(desktop.screenshot(tmp_path / "menu.png", menu.rect))
    desktop.key("Escape")
    desktop.wait_for_no_menu()
    assert "of $0.40 budget (82" in text, text


@pytest.mark.display  # starts an X server of its own
def test_a_notification_service_that_cannot_start_costs_notifications_not_the_tray(gtk, tmp_path):
    desk = harness.start_desktop(tmp_path / "desk", bus_sees_display=False)  # dunst would start blind
    try:
        proc = start_tray(desk, tmp_path)
        icon = desk.wait_for_tray_icon(timeout=30)
        desk.wait_for(lambda: "notifications are unavailable" in log_text(tmp_path), 30, what="the log line")
        desk.click(*icon.rect.center, button=3)
        desk.wait_for_menu()
        desk.key("Escape")
        assert proc.poll() is None
    finally:
        desk.close()


def test_the_menu_shows_plan_value_machines_and_unpriced_models(gtk, desktop, desktop_app, tmp_path, out):
    """The lines under today's, in the real docked tray's menu: what a plan covered, the spend on all
    machines sharing one folder, the models with no price (read back with OCR)."""
    from helpers.corpus import iso, make_session
    from helpers.menus import a_minute_ago_ms, plan_and_unpriced_day, routed
    from helpers.sync_machines import boxes

    laptop, other = boxes(tmp_path, "laptop", "desktop")
    plan_and_unpriced_day(laptop.sessions)
    t = a_minute_ago_ms()
    make_session(other.sessions, f"{t}_desk1", iso(t), [routed("d1", t, "claude-sonnet-4-5", "cline", cost=0.5)])
    other.engine().refresh()
    env = {"TRAYBURN_LOG_DIR": str(tmp_path / "logs"), "PYSTRAY_BACKEND": "", "HOME": str(laptop.root)}
    desktop_app(tray_argv(laptop.config, laptop.state), log="tray-lines", env=env)
    icon = desktop.wait_for_tray_icon(timeout=30)
    desktop.click(*icon.rect.center, button=3)
    menu = desktop.wait_for_menu()
    panel = desktop.tray_geometry()
    whole = harness.Rect(menu.rect.x - 10, 0, panel.x + panel.width - menu.rect.x + 10, menu.rect.y + menu.rect.height)
    desktop.screenshot(out / "menu-lines.png", whole)
    text = ocr(desktop.screenshot(tmp_path / "menu.png", menu.rect))
    desktop.key("Escape")
    desktop.wait_for_no_menu()
    assert "API value" in text and "on 2 machines" in text and "unpriced: acme-1" in text, text


@pytest.mark.display  # starts an X server of its own
def test_without_pygobject_the_tray_says_once_on_stderr_how_to_get_its_menu(tmp_path):
    """`pip install trayburn` without the `gtk` extra: no PyGObject, so the bare X11 icon, which has no menu and
    takes no click. The person is told once, on stderr, with the fix (the extra and the apt line). PyGObject is
    hidden from this one process (a stand-in for an install without it); the rest is real: Xvfb, trayer."""
    desk = harness.start_desktop(tmp_path / "desk")
    try:
        config = demo.prepare(tmp_path / "demo")
        code = "import sys; sys.modules['gi'] = None; from trayburn.cli import main; sys.exit(main(sys.argv[1:]))"
        argv = [sys.executable, "-P", "-c", code, "--config", str(config), "--state-dir", str(tmp_path / "state")]
        env = {"TRAYBURN_LOG_DIR": str(tmp_path / "logs"), "PYSTRAY_BACKEND": ""}
        proc = desk.spawn(argv, log="tray", env=env)
        desk.wait_for(lambda: "the icon is up" in log_text(tmp_path), 30, what="the icon up")
        assert "tray backend xorg" in log_text(tmp_path)
        stderr = (tmp_path / "desk" / "tray.log").read_text()
        assert stderr.count("has no menu") == 1, stderr
        line = next(line for line in stderr.splitlines() if "has no menu" in line)
        assert "pip install 'trayburn[gtk]'" in line and "apt-get install libgirepository1.0-dev" in line, line
        assert proc.poll() is None
    finally:
        desk.close()
