"""The lines under today's in the menu, on pystray's dummy backend with real ledgers: calls a plan
covered (their API value beside the spend, never in it), the spend across machines sharing one
folder, the models with no price, and sharing's own settings and problems."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from helpers.corpus import age_all, iso, make_session
from helpers.menus import Spawned, a_minute_ago_ms, find, plan_and_unpriced_day, routed, texts
from helpers.sync_machines import boxes

from trayburn import settings
from trayburn.engine import Engine
from trayburn.tray import host
from trayburn.tray.app import TrayApp

pystray = host.load_pystray("dummy")
CAPS = host.capabilities("dummy")


def make_app(config: Path, state: Path, env: dict[str, str] | None = None) -> TrayApp:
    return TrayApp(Engine(config, state, env=env), pystray, CAPS, spawn=Spawned())


def test_plan_covered_calls_and_unpriced_models_have_their_lines(tmp_path):
    sessions = tmp_path / "sessions"
    plan_and_unpriced_day(sessions)
    config = tmp_path / "settings.toml"
    config.write_text(f'sessions_dir = "{sessions}"\n')
    app = make_app(config, tmp_path / "state")
    assert app.tick() is True
    day, money = app.engine.day(), app.engine.money()
    assert day.plan_calls == 3 and day.plan_api_value_usd > 0.01 and day.unpriced_models == ["acme-1"]
    assert day.cost_usd == 0.25, "the plan's API value is never in the spend"
    menu = app.icon.menu
    line = texts(menu)
    today = line.index(str(find(menu, "Today: ").text))
    assert str(find(menu, "Today: ").text).startswith("Today: $0.25 · 5 calls")
    plan = f"ClinePass: 3 calls, {money.text(day.plan_api_value_usd)} of API value included"
    assert plan in line and line.index(plan) > today
    assert "1 call unpriced: acme-1 — add a price in settings" in line
    assert find(menu, "1 call unpriced").enabled


def test_the_plan_line_is_in_the_display_currency(tmp_path):
    sessions = tmp_path / "sessions"
    plan_and_unpriced_day(sessions)
    config = tmp_path / "settings.toml"
    config.write_text(f'sessions_dir = "{sessions}"\ncurrency = "EUR"\nusd_rate = 0.5\n')
    app = make_app(config, tmp_path / "state", env={"LC_ALL": "en_US.UTF-8", "HOME": str(tmp_path)})
    app.tick()
    day, money = app.engine.day(), app.engine.money()
    line = str(find(app.icon.menu, "ClinePass: 3 calls").text)
    assert line.endswith(f"{money.text(day.plan_api_value_usd)} of API value included")
    assert "€" in line and "$" not in line


def test_no_plan_no_unpriced_no_machines_no_lines(tmp_path):
    sessions = tmp_path / "sessions"
    t = a_minute_ago_ms()
    make_session(sessions, f"{t}_paid1", iso(t), [routed("a", t, "claude-sonnet-4-5", "cline", cost=0.4)])
    config = tmp_path / "settings.toml"
    config.write_text(f'sessions_dir = "{sessions}"\n')
    app = make_app(config, tmp_path / "state")
    app.tick()
    line = " | ".join(texts(app.icon.menu))
    assert "API value" not in line and "unpriced" not in line and "machines" not in line
    settings = texts(find(app.icon.menu, "Settings").submenu)
    assert "Share across machines…" in settings and "Stop sharing" not in settings


def machines(tmp_path):
    laptop, desktop = boxes(tmp_path, "laptop", "desktop")
    t = a_minute_ago_ms()
    for box, cost in ((laptop, 0.2), (desktop, 0.5)):
        sid = f"{t}_{box.name}"
        make_session(box.sessions, sid, iso(t), [routed(f"{box.name}-1", t, "claude-sonnet-4-5", "cline", cost=cost)])
    desktop.engine().refresh()  # the desktop writes its file at once the first time
    return laptop, desktop


def test_the_menu_says_todays_spend_across_machines(tmp_path):
    laptop, desktop = machines(tmp_path)
    app = TrayApp(laptop.engine(), pystray, CAPS, spawn=Spawned())
    app.tick()
    report = app.engine.machines()
    assert [(m.name, m.this, m.cost_usd) for m in report.machines] == [("laptop", True, 0.2), ("desktop", False, 0.5)]
    line = "Today $0.70 on 2 machines (this one $0.20)"
    menu = texts(app.icon.menu)
    assert line in menu and menu.index(line) == menu.index(app.view.today) + 1
    assert app.view.problem is None


@pytest.mark.parametrize("fault", ["garbage", "symlink", "unwritable"])
def test_a_sharing_problem_is_named_in_the_problem_area_as_doctor_names_it(tmp_path, fault):
    laptop, desktop = machines(tmp_path)
    folder = desktop.file().parent
    if fault == "garbage":
        (folder / f"{'ab' * 8}.json.gz").write_bytes(b"\x00garbage" * 100)
    elif fault == "symlink":
        (folder / f"{'cd' * 8}.json.gz").symlink_to(desktop.file())
    else:  # a sync folder where this machine cannot write its file (even as root): trayburn/ is a file
        blocked = tmp_path / "Blocked"
        blocked.mkdir()
        (blocked / "trayburn").write_text("not a folder")
        laptop.configure(sync_dir=str(blocked))
    app = TrayApp(laptop.engine(), pystray, CAPS, spawn=Spawned())
    app.tick()
    problem = app.engine.sync_health().problem_line
    assert problem and (app.view.problem or "").startswith(problem), "doctor's words (the refresh may say more)"
    assert texts(app.icon.menu)[0] == f"⚠ {app.view.problem}"
    today = "Today: $0.20" if fault == "unwritable" else "Today: $0.70"  # the figures stand
    assert str(find(app.icon.menu, "Today: ").text).startswith(today)


def test_stop_sharing_removes_sync_dir_and_the_item(tmp_path):
    laptop, _ = machines(tmp_path)
    app = TrayApp(laptop.engine(), pystray, CAPS, spawn=Spawned())
    app.tick()
    settings = find(app.icon.menu, "Settings").submenu
    assert str(find(settings, "Share across machines: ").text).endswith("Sync…")
    find(settings, "Stop sharing")(app.icon)
    assert "sync_dir" not in tomllib.loads(laptop.config.read_text())
    app.tick()
    settings = texts(find(app.icon.menu, "Settings").submenu)
    assert "Share across machines…" in settings and "Stop sharing" not in settings


def test_a_no_change_tick_asks_the_ledger_nothing_beyond_the_refresh(tmp_path):
    """The extra lines (machines, sharing, plan) are built with the view: a tick that changed nothing
    runs only statements a bare refresh runs, none of the figures' queries."""
    laptop, _ = machines(tmp_path)
    age_all(tmp_path)  # files not just written (else the racy-timestamp rule reads them again, rightly)
    app = TrayApp(laptop.engine(), pystray, CAPS, spawn=Spawned())
    app.tick()
    app.tick()  # the first ticks settle the checkpoints
    ran: list[str] = []
    app.engine.ledger.db.set_trace_callback(ran.append)
    app.engine.refresh()
    bare, ran[:] = list(ran), []
    assert app.tick() is False
    assert bare and set(ran) <= set(bare), "a no-change tick reads what a refresh reads, nothing more"
    assert not [q for q in ran if "GROUP BY" in q.upper()]
    settings.update(laptop.config, "refresh_seconds", "60")  # a change: the view, with its lines, is rebuilt
    ran[:] = []
    app.tick()
    assert [q for q in ran if "GROUP BY" in q.upper() and "origin" in q], "the machines' split is read then"
    app.engine.ledger.db.set_trace_callback(None)


def test_a_file_that_stays_unreadable_is_no_news_at_every_tick(tmp_path):
    """A session file over max_file_mb is a problem once; the ticks after it rebuild nothing."""
    laptop, _ = machines(tmp_path)
    t = a_minute_ago_ms()
    big = make_session(laptop.sessions, f"{t}_big", iso(t), [routed("big-1", t, "claude-sonnet-4-5", "cline")])
    (big / f"{t}_big.messages.json").write_bytes(b" " * 2_000_000)  # over the limit below
    laptop.configure(max_file_mb=1)
    age_all(tmp_path)
    app = TrayApp(laptop.engine(), pystray, CAPS, spawn=Spawned())
    app.tick()
    assert "could not be read" in (app.view.problem or "")
    ran: list[str] = []
    app.engine.ledger.db.set_trace_callback(ran.append)
    assert app.tick() is False and app.tick() is False
    app.engine.ledger.db.set_trace_callback(None)
    assert not [q for q in ran if "GROUP BY" in q.upper()], "the view was rebuilt for an old problem"


def test_counts_of_calls_have_the_thousands_separator_used_elsewhere():
    """ "Today: $141.03 · 6,280 calls", as the window's and the CLI's tables write counts (it said "6280 calls")."""
    from trayburn.words import plural

    assert plural(6280, "call") == "6,280 calls"
    assert plural(1, "call") == "1 call" and plural(999, "session") == "999 sessions"
