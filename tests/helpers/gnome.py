"""The tray on a real GNOME Shell with the AppIndicator extension under Xvfb (desktop.start_gnome_desktop): the
item as the StatusNotifierWatcher lists it, its properties, and its label as tesseract reads it in the top bar."""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from trayburn import demo
from trayburn.engine import Engine
from trayburn.tray import view

from . import desktop as harness
from .ocr import find_word, ocr_words

ITEM = "org.kde.StatusNotifierItem"
WATCHER = ("org.kde.StatusNotifierWatcher", "/StatusNotifierWatcher", "org.kde.StatusNotifierWatcher")


@dataclass
class Gnome:
    desk: harness.Desktop
    config: Path
    sessions: Path
    item: str  # "<bus name>/<object path>"
    work: Path
    out: Path
    scale: int = 1  # the desktop's scale factor (2: GNOME at 200 %)

    def prop(self, name: str) -> str:
        """One of the item's properties, unquoted ("$0.33"); "" when it cannot be read."""
        bus, path = split_item(self.item)
        found = re.search(r"<'(.*)'>", harness.dbus_property(self.desk, bus, path, ITEM, name))
        return found.group(1) if found else ""

    def expected_label(self) -> str:
        """Today's cost as the engine computes it from the same files, in a ledger of its own: what the tray's
        label must say (the menu's and the label's amount rule, trayburn/tray/view.py's day_cost)."""
        return todays_cost(self.config, self.work)[0]

    def bar(self, name: str) -> Path:
        """The right half of the top bar (where the extension puts the item), as a screenshot."""
        width = harness.screen_width(self.desk)
        height = harness.GNOME_BAR * self.scale
        return self.desk.screenshot(self.out / name, harness.Rect(width // 2, 0, width // 2, height))


def todays_cost(config: Path, work: Path) -> tuple[str, float]:
    """(the label, the USD) of today's cost, as an engine of its own computes it from the files ``config`` names."""
    engine = Engine(config, work / f"check-{time.monotonic_ns()}")
    try:
        engine.refresh()
        day = engine.day()
        return view.day_cost(day, engine.money()), day.cost_usd
    finally:
        engine.close()


def split_item(item: str) -> tuple[str, str]:
    """The watcher's entry for an item as (bus name, object path): GNOME's extension lists ":1.5@/path",
    xfce4-panel ":1.5/path"."""
    bus, _, path = item.partition("/")
    return bus.rstrip("@"), "/" + path


def registered_items(desk: harness.Desktop) -> list[str]:
    return re.findall(r"'([^']+)'", harness.dbus_property(desk, *WATCHER, "RegisteredStatusNotifierItems"))


@contextmanager
def tray_on_gnome(
    work: Path, out: Path, config: Path | None = None, *, scale: int = 1, tray_first: bool = False
) -> Iterator[Gnome]:
    """GNOME Shell with the extension, and the tray on ``config`` (by default the demo's sessions: recorded from
    the real Cline CLI, replayed so that they end a minute ago); once the tray's item is registered.
    ``tray_first``: the tray starts before the shell (as *Start at login* may run it)."""
    config = config or demo.prepare(work / "demo")
    settings = f"[org/gnome/desktop/interface]\nscaling-factor=uint32 {scale}\n" if scale != 1 else ""

    def start_tray(desk: harness.Desktop) -> None:
        env = {k: v for k, v in desk.env.items() if not k.startswith(("CLINE_", "TRAYBURN_"))}
        env |= {"TRAYBURN_LOG_DIR": str(work / "logs"), "PYSTRAY_BACKEND": ""}
        argv = [sys.executable, "-P", "-m", "trayburn", "--config", str(config), "--state-dir", str(work / "st")]
        desk.spawn(argv, log="tray", exact_env=env)

    first = start_tray if tray_first else None
    desk = harness.start_gnome_desktop(out / "desk", work / "home", settings=settings, before_shell=first)
    try:
        if not tray_first:
            start_tray(desk)
        item = desk.wait_for(
            lambda: next((i for i in registered_items(desk) if "trayburn" in i), None), 60, what="trayburn's item"
        )
        yield Gnome(desk, config, config.parent / "cline" / "data" / "sessions", item, work, out, scale)
        log = work / "logs" / "trayburn.log"
        assert "tray backend appindicator" in (log.read_text() if log.exists() else ""), "not the appindicator backend"
    finally:
        desk.close()


def wait_for_label_in_bar(g: Gnome, label: str, name: str, timeout: float = 30) -> harness.Rect:
    """Where the bar draws ``label`` (tesseract's box of it, in the bar's pixels), once it does."""
    seen: list[str] = []

    def drawn():
        words = ocr_words(g.bar(name))
        seen[:] = [w for w, _ in words]
        return find_word(words, label)

    try:
        return g.desk.wait_for(drawn, timeout, what=f"{label} drawn in the top bar")
    except harness.DesktopError as exc:
        raise AssertionError(f"{exc}; tesseract read {seen!r} in {g.out / name}") from None
