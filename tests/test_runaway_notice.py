"""A running session that passes `session_alert_usd`, then `rate_alert_usd_per_hour`, is notified once for each,
naming its title, project and model with its spend and rate, and never again after a restart; a session on a
plan's route, however many tokens it burns, never. The gtk tray in trayer on a real Xvfb and session bus, with a
notification service that records every Notify call (tests/helpers/notify_recorder.py). Then, without a display: the
menu names the runaway at the top until it is silenced, and a silenced session is told of no more."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from helpers import desktop as harness
from helpers.corpus import assistant, make_session, user
from helpers.desktop import gtk_available
from helpers.live import append_call, now_ms, started_now
from helpers.notices import log_text, notified, record_notices, spawn_tray

from trayburn.engine import Engine
from trayburn.tray.alerts import Alerts
from trayburn.tray.view import SILENCE, build_view, menu

SETTINGS = "refresh_seconds = 300\nsession_alert_usd = 1.0\nrate_alert_usd_per_hour = 20.0\n"


def plan_call(mid: str, ts: int) -> dict:
    """A call on ClinePass: a plan's route, cost 0 (its tokens' list price is shown beside the spend only)."""
    msg = assistant(mid, ts, 2_000_000, 50_000, cost=0)
    msg["modelInfo"] = {"id": "z-ai/glm-4.6", "provider": "cline-pass"}
    return msg


def sessions_with_a_runaway_and_a_plan(sessions: Path) -> Path:
    """`fix-login-bug` in project `web` at $0.30 (under both alerts), and a plan session far past them in tokens."""
    t = now_ms()
    calls = [user("u0", t - 600_000), assistant("msg_r1", t - 500_000, cost=0.30)]
    folder = make_session(
        sessions, f"{t - 600_000}_run01", started_now(), calls, status="running", workspace_root="/home/me/web",
        metadata={"title": "fix-login-bug"},
    )  # fmt: skip
    plan = [user("p0", t - 300_000)] + [plan_call(f"msg_p{i}", t - 200_000 + i * 1000) for i in range(20)]
    make_session(sessions, f"{t - 300_000}_plan1", started_now(), plan, status="running", provider="cline-pass")
    return folder


@pytest.mark.desktop
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="real-desktop tests run on Linux")
@pytest.mark.skipif(bool(harness.missing_tools()), reason=f"apt-get install {' '.join(harness.missing_tools())}")
def test_a_runaway_is_told_once_per_alert_and_a_plan_session_never(tmp_path):
    if not gtk_available():
        pytest.skip("the gtk tray backend needs PyGObject: pip install 'trayburn[gtk]'")
    sessions = tmp_path / "cline" / "data" / "sessions"
    folder = sessions_with_a_runaway_and_a_plan(sessions)
    config = tmp_path / "settings.toml"
    config.write_text(f'sessions_dir = "{sessions}"\n{SETTINGS}')
    state, notices, logs = tmp_path / "state", tmp_path / "notices.jsonl", tmp_path / "logs"
    desk = harness.start_desktop(tmp_path / "desk")
    try:
        record_notices(desk, notices)
        tray = spawn_tray(desk, config, state, logs)
        desk.wait_for_tray_icon(timeout=30)
        desk.wait_for(lambda: "the icon is up" in log_text(logs), 30, what="the icon up")
        append_call(folder, 0.80)  # $1.10: past the $1.00 session alert (its rate, ~$2.5/h, is not)
        first = desk.wait_for(lambda: notified(notices), 30, what="the session alert")
        assert len(first) == 1, first
        body = first[0]["body"]
        assert body.startswith("$1.10 in ") and " on GPT-4o — fix-login-bug (web), $" in body, body
        assert body.endswith("/h now: past your $1.00 session alert"), body
        append_call(folder, 0.05)  # still past it: nothing new
        append_call(folder, 9.00)  # $9 now: past the $20/h rate alert
        both = desk.wait_for(lambda: len(notified(notices)) >= 2 and notified(notices), 30, what="the rate alert")
        assert both[1]["body"].endswith("/h now: past your $20.00/h rate alert") and "$10.15 in " in both[1]["body"]
        desk.stop(tray)
        again = spawn_tray(desk, config, state, logs, log="tray-again")  # started again: told already, not twice
        desk.wait_for_tray_icon(timeout=30)
        desk.wait_for(lambda: log_text(logs).count("the icon is up") == 2, 30, what="the second start's icon up")
        assert notified(notices) == both and len(both) == 2, notified(notices)
        assert not any("glm" in n["body"].lower() or "plan1" in n["body"] for n in notified(notices))
        assert again.poll() is None
        recorded = json.loads((state / "alerts.json").read_text())
        assert list(recorded["runaways"].values()) == [["spend", "rate"]]
    finally:
        desk.close()


def test_the_menu_names_a_runaway_at_the_top_until_it_is_silenced(tmp_path):
    sessions = tmp_path / "sessions"
    folder = sessions_with_a_runaway_and_a_plan(sessions)
    append_call(folder, 0.80)
    config = tmp_path / "settings.toml"
    config.write_text(f'sessions_dir = "{sessions}"\n{SETTINGS}')
    engine = Engine(config, tmp_path / "state")
    engine.refresh()
    health = engine.health()
    glance = engine.glance(health)
    assert [r.title for r in glance.runaways] == ["fix-login-bug"] and glance.runaways[0].crossed == ("spend",)
    alerts = Alerts(tmp_path / "alerts.json")
    entries = menu(build_view(alerts.shown(glance), engine.settings, health), True, None)
    assert entries[0].text.startswith("⚠ Runaway: $1.10 in ") and entries[0].text.endswith(" — fix-login-bug")
    assert (entries[1].text, entries[1].action) == (SILENCE, "silence_runaway")
    alerts.silence(entries[1].arg)
    again = Alerts(tmp_path / "alerts.json")  # remembered
    entries = menu(build_view(again.shown(glance), engine.settings, health), True, None)
    assert not any("Runaway" in e.text for e in entries)
    sent: list[str] = []
    again.tell(glance, engine.settings, glance.day.day, lambda m: sent.append(m) or True, up=True)
    assert sent == []
    engine.close()
