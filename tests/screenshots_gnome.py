"""Regenerate docs/screenshots/gnome-*.png from the current code, on a real GNOME Shell with the AppIndicator
extension under Xvfb (tests/helpers/gnome.py's tray_on_gnome; the same desktop tests/test_gnome.py runs):

    .venv/bin/python tests/screenshots_gnome.py

- gnome-bar.png: the right of GNOME's top bar with trayburn's item (the mark and the label "$0.33"), shown 2×;
- gnome-bar-over-budget.png: the same with a daily budget of $0.30, passed: a red dot on the mark;
- gnome-bar-200.png: the same on GNOME at 200 % (scaling-factor 2: a 64 px bar), 1×;
- gnome-menu.png: the menu a left click on the item opens, 1×;
- gnome-notice.png: the message list under the clock, with the notice of that budget passed, 1×.

The tray runs on the demo (sessions recorded from the real Cline CLI, replayed as today). Every image is looked at
before it is committed; this script only takes them.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
OUT = ROOT / "docs" / "screenshots"

from helpers import desktop as harness  # noqa: E402
from helpers.gnome import Gnome, tray_on_gnome, wait_for_label_in_bar  # noqa: E402
from helpers.ocr import ocr_lines  # noqa: E402
from PIL import Image, ImageChops  # noqa: E402
from screenshots import scaled, settled  # noqa: E402

from trayburn import demo  # noqa: E402


def bar_strip(g: Gnome, name: str) -> harness.Rect:
    """The item, with the bar's right end beside it: where a person looks."""
    label = wait_for_label_in_bar(g, g.expected_label(), f"{name}-probe.png")
    width = harness.screen_width(g.desk)
    left = width // 2 + label.x - 60 * g.scale
    return harness.Rect(left, 0, width - left, harness.GNOME_BAR * g.scale)


def bars(work: Path) -> None:
    for name, extra, scale in (
        ("gnome-bar", "", 1),
        ("gnome-bar-over-budget", "daily_budget = 0.30\n", 1),
        ("gnome-bar-200", "", 2),
    ):
        config = demo.prepare(work / name / "demo")
        config.write_text(config.read_text() + extra)
        with tray_on_gnome(work / name, work / name, config, scale=scale) as g:
            strip = bar_strip(g, name)
            scaled(settled(g.desk, strip, work / f"{name}.png"), OUT / f"{name}.png", 2 // scale)


def menu(work: Path) -> None:
    with tray_on_gnome(work / "menu", work / "menu") as g:
        strip = bar_strip(g, "menu")
        width = harness.screen_width(g.desk)
        label = wait_for_label_in_bar(g, g.expected_label(), "menu-probe.png")
        g.desk.click(width // 2 + label.center[0], label.center[1], button=1)
        below = harness.Rect(width // 2, harness.GNOME_BAR, width // 2, 600)
        g.desk.wait_for(
            lambda: "Open summary" in ocr_lines(g.desk.screenshot(work / "menu-area.png", below)), 30, what="the menu"
        )
        with Image.open(settled(g.desk, below, work / "menu-area.png")) as shot:
            area = shot.convert("RGB")
            wallpaper = Image.new("RGB", area.size, area.getpixel((area.width - 1, area.height - 1)))
            box = ImageChops.difference(area, wallpaper).getbbox() or (0, 0, area.width, area.height)
        left = min(strip.x, below.x + box[0]) - 8
        region = harness.Rect(left, 0, width - left, below.y + box[3] + 8)
        scaled(settled(g.desk, region, work / "menu.png"), OUT / "gnome-menu.png", 1)
        g.desk.key("Escape")


def notice(work: Path) -> None:
    """The message list under the clock with the notice of a daily budget passed before the tray started."""
    config = demo.prepare(work / "notice" / "demo")
    config.write_text(config.read_text() + "daily_budget = 0.30\n")
    with tray_on_gnome(work / "notice", work / "notice", config) as g:
        log = work / "notice" / "logs" / "trayburn.log"
        g.desk.wait_for(lambda: "the icon is up" in log.read_text(), 30, what="the tray up")
        width = harness.screen_width(g.desk)
        g.desk.click(width // 2, harness.GNOME_BAR // 2, button=1)
        area = harness.Rect(width // 4 - 40, 0, width // 2 + 80, 420)
        g.desk.wait_for(
            lambda: "passed your" in ocr_lines(g.desk.screenshot(work / "notice-probe.png", area)),
            30,
            what="the notice",
        )
        scaled(settled(g.desk, area, work / "notice.png"), OUT / "gnome-notice.png", 1)
        g.desk.key("Escape")


def main() -> int:
    if harness.missing_gnome():
        print(f"needs: apt-get install {' '.join(harness.missing_gnome())}", file=sys.stderr)
        return 2
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="trayburn-gnome-shots-") as tmp:
        bars(Path(tmp))
        menu(Path(tmp))
        notice(Path(tmp))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
