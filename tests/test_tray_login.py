"""The tray at login: *Start at login* runs trayburn while the panel (or GNOME's AppIndicator extension) is still
loading, so the StatusNotifierWatcher comes seconds after the tray. Real Xvfb, a real session bus, the real
xfce4-panel started after the tray, a notification service that records every Notify call
(tests/helpers/notify_recorder.py): the item registers with the watcher when it comes, and nobody is told "cannot be
seen" (the grace period's end is logged, and the test waits for that line before it reads what was notified)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import desktop as harness
from helpers.desktop import gtk_available
from helpers.notices import log_text, notified, record_notices, spawn_tray
from helpers.sni import item_property, items

from trayburn import demo
from trayburn.tray import host

pytestmark = [
    pytest.mark.desktop,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="real-desktop tests run on Linux"),
    pytest.mark.skipif(bool(harness.missing_tools(harness.SNI_TOOLS)), reason="needs xfce4-panel, dbus-x11"),
]
SEEN = "the icon can be seen now"  # logged at the grace period's end when a tray shows the icon


@pytest.fixture
def sni_backend():
    if not gtk_available() or not host.available("appindicator"):
        pytest.skip("the appindicator backend needs PyGObject and gir1.2-ayatanaappindicator3-0.1 (./scripts/setup)")


def desktop_without_panel(tmp_path: Path, tray: tuple[str, ...] | None = None) -> tuple[harness.Desktop, Path]:
    """Xvfb and a session bus whose activated services see the display, an XFCE session's variables, a
    notification recorder; no panel yet (``tray``: trayer's arguments, for an XEmbed tray from the start)."""
    home = tmp_path / "home"
    home.mkdir()
    desk = harness.start_desktop(tmp_path / "desk", tray=tray)
    desk.env |= {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CURRENT_DESKTOP": "XFCE"}
    notices = tmp_path / "notices.jsonl"
    try:
        keys = ("DISPLAY", "HOME", "XDG_CONFIG_HOME", "GDK_BACKEND", "NO_AT_BRIDGE")
        subprocess.run(["dbus-update-activation-environment", *keys], env=desk.env, check=True, timeout=30)
        record_notices(desk, notices)
    except BaseException:
        desk.close()
        raise
    return desk, notices


def start_tray(desk: harness.Desktop, tmp_path: Path) -> subprocess.Popen:
    return spawn_tray(desk, demo.prepare(tmp_path / "demo"), tmp_path / "state", tmp_path / "logs")


def trayburn_item(desk: harness.Desktop) -> str | None:
    return next((i for i in items(desk) if "trayburn" in i), None)


def test_a_tray_started_before_the_panel_registers_its_item_when_the_watcher_comes(sni_backend, tmp_path):
    """The panel comes after the tray's short wait is over (as GNOME's extension did at login): the item
    registers with it then, with its menu; no "cannot be seen" notice."""
    desk, notices = desktop_without_panel(tmp_path)
    try:
        tray = start_tray(desk, tmp_path)
        desk.wait_for(lambda: "the icon is up" in log_text(tmp_path / "logs"), 40, what="the tray up")
        log = log_text(tmp_path / "logs")
        assert "no StatusNotifierWatcher after" in log and "tray backend appindicator" in log, log  # chosen for
        # the watcher that is on its way
        assert not desk.has_sni_watcher()
        desk.spawn(["xfce4-panel", "--disable-wm-check"], log="xfce4-panel")
        item = desk.wait_for(lambda: trayburn_item(desk), 30, what="trayburn's item registered with the panel")
        assert "today" in item_property(desk, item, "Title") or "$" in item_property(desk, item, "Title")
        assert re.search(r"/\w", item_property(desk, item, "Menu") or "/x")  # a menu object to read
        desk.wait_for(lambda: SEEN in log_text(tmp_path / "logs"), 60, what="the grace period's end")
        told = notified(notices)
        assert not [n for n in told if "cannot be seen" in n["body"]], told
        stderr = (tmp_path / "desk" / "tray.log").read_text()
        assert "cannot be seen" not in stderr  # nor said on stderr
        assert "CRITICAL" not in stderr and "Traceback" not in stderr, stderr
        assert tray.poll() is None
    finally:
        desk.close()


def test_the_panel_coming_during_the_wait_gets_the_item_at_once(sni_backend, tmp_path):
    desk, notices = desktop_without_panel(tmp_path)
    try:
        tray = start_tray(desk, tmp_path)
        desk.wait_for(
            lambda: "waiting up to" in log_text(tmp_path / "logs"), 30, what="the tray waiting for the watcher"
        )
        desk.spawn(["xfce4-panel", "--disable-wm-check"], log="xfce4-panel")
        desk.wait_for(lambda: trayburn_item(desk), 30, what="trayburn's item registered with the panel")
        log = log_text(tmp_path / "logs")
        assert "the StatusNotifierWatcher is there" in log and "tray backend appindicator" in log, log
        assert "no tray host yet" not in log
        assert not [n for n in notified(notices) if "cannot be seen" in n["body"]]
        assert tray.poll() is None
    finally:
        desk.close()


def test_a_gtk_icon_in_an_xembed_tray_becomes_an_item_when_a_watcher_comes(sni_backend, tmp_path):
    """An XEmbed tray (trayer) at the start and no watcher within the wait: the gtk icon docks there. The panel's
    watcher comes later: the icon leaves the XEmbed tray and registers as a StatusNotifierItem, no restart."""
    desk, notices = desktop_without_panel(tmp_path, tray=harness.TRAYER_ARGS)
    try:
        tray = start_tray(desk, tmp_path)
        desk.wait_for_tray_icon(timeout=40)
        assert "tray backend gtk" in log_text(tmp_path / "logs")
        desk.spawn(["xfce4-panel", "--disable-wm-check"], log="xfce4-panel")
        desk.wait_for(lambda: trayburn_item(desk), 30, what="trayburn's item registered with the panel")
        desk.wait_for(lambda: not desk.tray_icons(), 15, what="the XEmbed icon gone from trayer")
        log = log_text(tmp_path / "logs")
        assert "becomes a StatusNotifierItem" in log and "now: tray backend appindicator" in log, log
        assert not notified(notices)
        assert tray.poll() is None
    finally:
        desk.close()
