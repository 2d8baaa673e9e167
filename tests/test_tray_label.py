"""Today's cost as text on a StatusNotifierItem host: the item's label (XAyatanaLabel, which GNOME's AppIndicator
extension draws in the panel's own font), read back over D-Bus from a real item on a real panel (xfce4-panel's
status tray under Xvfb), and kept live: a call written to the running session changes it within two seconds."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from helpers import desktop as harness
from helpers.corpus import assistant, make_session, user
from helpers.desktop import gtk_available
from helpers.live import SHOWN_WITHIN_S, append_call, now_ms, started_now
from helpers.sni import item_property, items

from trayburn.tray.host import host_draws_labels

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="real-desktop tests run on Linux"),
    pytest.mark.skipif(bool(harness.missing_tools(harness.SNI_TOOLS)), reason="needs xfce4-panel, dunst, dbus-x11"),
]


@pytest.mark.display  # starts an X server of its own
def test_the_items_label_is_todays_cost_and_follows_a_new_call(tmp_path):
    if not gtk_available():
        pytest.skip("the appindicator backend needs PyGObject: pip install 'trayburn[gtk]'")
    sessions = tmp_path / "cline" / "data" / "sessions"
    running = make_session(
        sessions,
        "1796100000000_sni01",
        started_now(),
        [user("u0", now_ms()), assistant("msg_first001", now_ms(), 1000, 10, cost=0.25)],
        status="running",
    )
    config = tmp_path / "settings.toml"
    config.write_text(f'sessions_dir = "{sessions}"\nrefresh_seconds = 300\n')
    desk = harness.start_sni_desktop(tmp_path / "desk", tmp_path / "home")
    try:
        env = {"TRAYBURN_LOG_DIR": str(tmp_path / "logs"), "PYSTRAY_BACKEND": ""}
        argv = [sys.executable, "-P", "-m", "trayburn", "--config", str(config), "--state-dir", str(tmp_path / "s")]
        desk.spawn(argv, log="tray", env=env)
        item = desk.wait_for(lambda: next(iter(items(desk)), None), 30, what="trayburn's item registered")
        desk.wait_for(lambda: item_property(desk, item, "XAyatanaLabel") == "$0.25", 30, what="the label $0.25")
        assert item_property(desk, item, "XAyatanaLabelGuide") == "$00.00"
        assert "trayburn" in item_property(desk, item, "Id")
        start = time.monotonic()
        append_call(running, 0.5)
        desk.wait_for(lambda: item_property(desk, item, "XAyatanaLabel") == "$0.75", SHOWN_WITHIN_S, what="$0.75")
        assert time.monotonic() - start < SHOWN_WITHIN_S
        desk.screenshot(tmp_path / "top.png", harness.Rect(0, 0, 1280, 40))
        log = Path(tmp_path / "logs" / "trayburn.log").read_text()
        assert "tray backend appindicator" in log
    finally:
        desk.close()


@pytest.mark.parametrize(
    "desktop, draws",
    [("ubuntu:GNOME", True), ("GNOME", True), ("Budgie:GNOME", True), ("KDE", False), ("XFCE", False), ("", False)],
)
def test_which_hosts_draw_the_label_beside_a_bare_mark(desktop, draws):
    assert host_draws_labels({"XDG_CURRENT_DESKTOP": desktop}) is draws
