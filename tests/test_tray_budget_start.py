"""A daily budget already passed when the tray starts is notified once the notifier is up (the first tick runs
before it is), and recorded as told only then. The gtk tray in trayer on a real Xvfb and session bus, with a
notification service that records every Notify call (tests/helpers/notify_recorder.py)."""

from __future__ import annotations

import json
import sys
from datetime import date
from pathlib import Path

import pytest
from helpers import desktop as harness
from helpers.corpus import assistant, make_session, user
from helpers.desktop import gtk_available
from helpers.live import now_ms, started_now

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="real-desktop tests run on Linux"),
    pytest.mark.skipif(bool(harness.missing_tools()), reason=f"apt-get install {' '.join(harness.missing_tools())}"),
]
RECORDER = Path(__file__).parent / "helpers" / "notify_recorder.py"


@pytest.mark.display  # starts an X server of its own
def test_a_budget_passed_before_the_start_is_notified_once_the_notifier_is_up(tmp_path):
    if not gtk_available():
        pytest.skip("the gtk tray backend needs PyGObject: pip install 'trayburn[gtk]'")
    sessions = tmp_path / "cline" / "data" / "sessions"
    make_session(
        sessions,
        "1796100000000_bud01",
        started_now(),
        [user("u0", now_ms())] + [assistant("msg_spend001", now_ms(), 1000, 10, cost=0.25)],
    )
    config = tmp_path / "settings.toml"
    config.write_text(f'sessions_dir = "{sessions}"\nrefresh_seconds = 300\ndaily_budget = 0.10\n')
    state, notices = tmp_path / "state", tmp_path / "notices.jsonl"
    desk = harness.start_desktop(tmp_path / "desk")
    try:
        desk.spawn([sys.executable, str(RECORDER), str(notices)], log="recorder")
        ready = tmp_path / "desk" / "recorder.log"
        desk.wait_for(lambda: ready.exists() and "ready" in ready.read_text(), 20, what="the notification service")
        env = {"TRAYBURN_LOG_DIR": str(tmp_path / "logs"), "PYSTRAY_BACKEND": ""}
        argv = [sys.executable, "-P", "-m", "trayburn", "--config", str(config), "--state-dir", str(state)]
        tray = desk.spawn(argv, log="tray", env=env)
        desk.wait_for_tray_icon(timeout=30)
        told = desk.wait_for(lambda: notices.exists() and notices.read_text(), 30, what="the budget notice")
        lines = [json.loads(line) for line in told.splitlines()]
        assert len(lines) == 1 and "passed" in lines[0]["body"] and "$0.10" in lines[0]["body"], lines
        recorded = json.loads((state / "notified.json").read_text())
        assert recorded == {date.today().isoformat(): [100]}
        desk.stop(tray)
        again = desk.spawn(argv, log="tray-again", env=env)  # the same day again: told already, not twice
        desk.wait_for_tray_icon(timeout=30)
        log = tmp_path / "logs" / "trayburn.log"
        desk.wait_for(lambda: log.read_text().count("the icon is up") == 2, 30, what="the second start's icon up")
        assert notices.read_text() == told
        assert again.poll() is None
    finally:
        desk.close()
