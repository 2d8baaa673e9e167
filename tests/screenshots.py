"""Regenerate docs/screenshots/ from the current code, on real desktops under Xvfb (the tests' harness):

    .venv/bin/python tests/screenshots.py [--only tray|menu|sni|window]

- tray-{light,dark}-{16,22,24,32}.png: the right 64 px of trayer's panel with the demo's icon, shown 4×;
- tray-menu.png, tray-menu-budget.png: the right-click menu on a dark 24 px trayer (the second with a daily
  budget of $0.40);
- tray-sni-xfce4-panel.png: the right of xfce4-panel's top bar with trayburn's StatusNotifierItem, shown 2×;
- summary-{day,week,month,session}.png: `trayburn summary` on the demo, 1000×640;
- summary-by-tool.png: the demo's week on its Tool tab (a window opened in a child process, the tab chosen there).

The window tests take summary-by-machine, summary-plan-day and summary-plan-session (tests/test_window_machines.py)
and the panel test tray-menu-lines (tests/test_tray_panels.py) into tests/_artifacts/; GNOME's are
tests/screenshots_gnome.py's.

Every image is looked at before it is committed; this script only takes them.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
OUT = ROOT / "docs" / "screenshots"

from helpers import desktop as harness  # noqa: E402
from PIL import Image  # noqa: E402

from trayburn import demo  # noqa: E402


def tray_argv(config: Path, state: Path) -> list[str]:
    return [sys.executable, "-P", "-m", "trayburn", "--config", str(config), "--state-dir", str(state)]


def start_tray(desk: harness.Desktop, work: Path, extra: str = "") -> Path:
    config = demo.prepare(work / "demo")
    if extra:
        config.write_text(config.read_text() + extra)
    env = {"TRAYBURN_LOG_DIR": str(work / "logs"), "PYSTRAY_BACKEND": ""}
    desk.spawn(tray_argv(config, work / "state"), log="tray", env=env)
    return config


def settled(desk: harness.Desktop, rect: harness.Rect, path: Path) -> Path:
    """A screenshot once two in a row are the same (the icon redrawn at the tray's size, the menu drawn)."""
    last = b""
    for _ in range(40):
        desk.screenshot(path, rect)
        now = Image.open(path).convert("RGB").tobytes()
        if now == last:
            return path
        last = now
        time.sleep(0.25)  # a screenshot tool may wait: it synchronises nothing
    return path


def scaled(src: Path, dst: Path, factor: int) -> None:
    with Image.open(src) as image:
        image.convert("RGB").resize((image.width * factor, image.height * factor), Image.Resampling.NEAREST).save(dst)
    print("wrote", dst.relative_to(ROOT))


def trays(work: Path) -> None:
    for shade in ("light", "dark"):
        for height in (16, 22, 24, 32):
            run = work / f"tray-{shade}-{height}"
            desk = harness.start_desktop(run / "desk", tray=harness.trayer_args(height, light=shade == "light"))
            try:
                start_tray(desk, run)
                desk.wait_for_tray_icon(timeout=30)
                time.sleep(1.0)  # the 0.4 s fit check (icons.FIT_CHECK_MS) may redraw it once
                panel = desk.tray_geometry()
                strip = harness.Rect(panel.x + panel.width - 64, panel.y, 64, panel.height)
                scaled(settled(desk, strip, run / "strip.png"), OUT / f"tray-{shade}-{height}.png", 4)
            finally:
                desk.close()


def menus(work: Path) -> None:
    for name, extra in (("tray-menu", ""), ("tray-menu-budget", "daily_budget = 0.40\n")):
        run = work / name
        desk = harness.start_desktop(run / "desk", tray=harness.trayer_args(24))
        try:
            start_tray(desk, run, extra)
            icon = desk.wait_for_tray_icon(timeout=30)
            time.sleep(1.0)
            desk.click(*icon.rect.center, button=3)
            menu = desk.wait_for_menu()
            time.sleep(0.5)
            panel = desk.tray_geometry()
            left = min(menu.rect.x, panel.x + panel.width - 64)
            right = max(menu.rect.x + menu.rect.width, panel.x + panel.width)
            region = harness.Rect(left, panel.y, right - left, menu.rect.y + menu.rect.height - panel.y)
            shot = settled(desk, region, run / "menu.png")
            scaled(shot, OUT / f"{name}.png", 1)
            desk.key("Escape")
        finally:
            desk.close()


def sni(work: Path) -> None:
    desk = harness.start_sni_desktop(work / "sni" / "desk", work / "sni" / "home")
    try:
        start_tray(desk, work / "sni")
        top = harness.Rect(0, 0, 1280, 40)

        def flame():
            colours = harness.image_colours(desk.screenshot(work / "top.png", top))
            return harness.has_colour_near(colours, (255, 122, 26), 30)

        desk.wait_for(flame, 30, what="trayburn's item in xfce4-panel")
        time.sleep(1.0)
        with Image.open(desk.screenshot(work / "top.png", top)) as image:
            bar = image.convert("RGB")
            height = next((y for y in range(bar.height) if bar.getpixel((bar.width - 5, y)) == (0, 0, 0)), 28)
            flames = [x for x in range(bar.width) for y in range(height) if bar.getpixel((x, y)) == (255, 122, 26)]
        middle = (min(flames) + max(flames)) // 2 if flames else 1280 - 200
        region = harness.Rect(max(0, middle - 90), 0, 180, max(20, height))  # the tray and the clock beside it
        scaled(settled(desk, region, work / "sni.png"), OUT / "tray-sni-xfce4-panel.png", 2)
    finally:
        desk.close()


ON_TAB = """
import sys, tkinter as tk
from trayburn.window import open_engine
from trayburn.window.app import APP_TITLE, SummaryWindow
config, state, kind, tab = sys.argv[1:]
root = tk.Tk(className=APP_TITLE)
root.withdraw()
win = SummaryWindow(root, open_engine(config, state)[0], kind=kind)
win.start()
tabs = win.period_view.tabs
tabs.select(next(t for t in tabs.tabs() if tabs.tab(t, "text") == tab))
root.mainloop()
"""  # a period's window on one of its tabs (`trayburn summary` opens on the first)


def windows(work: Path) -> None:
    desk = harness.start_desktop(work / "win" / "desk", tray=None)
    try:
        config = demo.prepare(work / "win" / "demo")
        env = {"TRAYBURN_LOG_DIR": str(work / "win" / "logs")}
        base = [
            sys.executable,
            "-P",
            "-m",
            "trayburn",
            "--config",
            str(config),
            "--state-dir",
            str(work / "win" / "st"),
        ]
        subprocess.run([*base, "today"], env={**desk.env, **env}, check=True, capture_output=True)  # the ledger
        sid = next(
            p.name for p in (work / "win" / "demo" / "cline" / "data" / "sessions").iterdir() if "y8q37" in p.name
        )
        on_tab = [sys.executable, "-P", "-c", ON_TAB, str(config), str(work / "win" / "st"), "week", "Tool"]
        for name, argv in (
            ("summary-day", [*base, "summary"]),
            ("summary-week", [*base, "summary", "--period", "week"]),
            ("summary-month", [*base, "summary", "--period", "month"]),
            ("summary-session", [*base, "summary", sid]),
            ("summary-by-tool", on_tab),
        ):
            proc = desk.spawn(argv, log=name, env={**env, "PYTHONPATH": str(ROOT)})
            window = desk.wait_for(
                lambda: next((w for w in desk.find_windows(viewable=True) if w.name.startswith("trayburn")), None),
                30,
                what="the summary window",
            )
            time.sleep(2.0)  # its first refresh and chart
            scaled(settled(desk, window.rect, work / f"{name}.png"), OUT / f"{name}.png", 1)
            desk.stop(proc)
            desk.wait_for(lambda: not desk.find_windows(viewable=True, cls="trayburn"), 10, what="the window closed")
    finally:
        desk.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("tray", "menu", "sni", "window"))
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="trayburn-shots-"))
    for name, make in (("tray", trays), ("menu", menus), ("sni", sni), ("window", windows)):
        if args.only in (None, name):
            make(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
