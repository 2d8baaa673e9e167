"""A daily budget already passed when the tray starts is notified once the notifier is up (the first tick runs
before it is), and recorded as told only then. The gtk tray in trayer on a real Xvfb and session bus, with a
notification service that records every Notify call (tests/helpers/notify_recorder.py)."""

from __future__ import annotations

import json
import sys
from datetime import date

import pytest
from helpers import desktop as harness
from helpers.corpus import assistant, make_session, user
from helpers.desktop import gtk_available
from helpers.live import now_ms, started_now
from helpers.notices import log_text, notified, record_notices, spawn_tray

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="real-desktop tests run on Linux"),
    pytest.mark.skipif(bool(harness.missing_tools()), reason=f"apt-get install {' '.join(harness.missing_tools())}"),
]


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
    state, notices, logs = tmp_path / "state", tmp_path / "notices.jsonl", tmp_path / "logs"
    desk = harness.start_desktop(tmp_path / "desk")
    try:
        record_notices(desk, notices)
        tray = spawn_tray(desk, config, state, logs)
        desk.wait_for_tray_icon(timeout=30)
        lines = desk.wait_for(lambda: notified(notices), 30, what="the budget notice")
        assert len(lines) == 1 and "passed" in lines[0]["body"] and "$0.10" in lines[0]["body"], lines
        recorded = json.loads((state / "notified.json").read_text())
        assert recorded == {date.today().isoformat(): [100]}
        desk.stop(tray)
        again = spawn_tray(desk, config, state, logs, log="tray-again")  # the same day again: told already, not twice
        desk.wait_for_tray_icon(timeout=30)
        desk.wait_for(lambda: log_text(logs).count("the icon is up") == 2, 30, what="the second start's icon up")
        assert notified(notices) == lines
        assert again.poll() is None
    finally:
        desk.close()
