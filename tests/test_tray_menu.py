"""Menu logic on pystray's dummy backend: the menu's text for a ledger state, and each action's
effect. The engine, the ledger and the files are real; only the tray host is absent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import tomllib
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest
from helpers import desktop
from helpers.menus import Spawned, add_session, find, texts

from trayburn import demo, settings, system
from trayburn.engine import Engine
from trayburn.system import AlreadyRunning, InstanceLock
from trayburn.tray import host, view
from trayburn.tray.app import TrayApp
from trayburn.tray.view import IconState, format_cost

pystray = host.load_pystray("dummy")
CAPS = host.capabilities("dummy")


@pytest.fixture
def env(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    for var in ("CLINE_DIR", "CLINE_DATA_DIR", "CLINE_SESSION_DATA_DIR", "TRAYBURN_CONFIG", "TRAYBURN_STATE_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    return tmp_path


def make_app(config: Path, state: Path) -> tuple[TrayApp, Spawned]:
    spawned = Spawned()
    app = TrayApp(Engine(config, state), pystray, CAPS, spawn=spawned)
    return app, spawned


@pytest.fixture
def replay(env):
    """The recorded sessions replayed as today, with their own settings file."""
    config = demo.prepare(env / "demo")
    return config, env / "state"


def test_menu_shows_todays_cost_top_model_and_sessions(replay):
    config, state = replay
    app, spawned = make_app(config, state)
    assert app.tick() is True
    day = app.engine.day()
    menu = app.icon.menu
    today = find(menu, "Today: ")
    assert f"${day.cost_usd:,.2f}" in str(today.text) and f"{day.calls} calls" in str(today.text)
    assert today.default, "the day's summary is the default (left-click) action"
    assert str(find(menu, "Top model: ").text).startswith(f"Top model: {day.top_model.name} — ")
    sessions = find(menu, "Today's sessions").submenu
    titles = texts(sessions)
    assert day.sessions == 18, "the demo has more sessions than the menu shows"
    assert len(titles) == 11 and titles[-1] == "+8 more… (opens the summary)"
    assert any("[i_long] Run a long session." in t for t in titles)
    ranked = sorted(app.engine.sessions(None, None), key=lambda s: s.cost_usd, reverse=True)
    assert [sid for sid, _ in app.view.sessions] == [s.id for s in ranked[:10]], "most expensive first"
    sessions.items[-1](app.icon)
    assert "summary" in spawned[-1]
    assert app.icon.title == f"trayburn · ${day.cost_usd:,.2f} today · {day.top_model.name} · updated just now"
    assert app.view.label == format_cost(day.cost_usd) and app.view.state is IconState.OK


def test_nothing_changed_means_no_redraw_and_a_new_session_shows_at_next_tick(replay, tmp_path):
    config, state = replay
    app, _ = make_app(config, state)
    app.tick()
    before = app.view
    assert app.tick() is False
    sessions = Path(tomllib.loads(config.read_text())["cline_dir"]) / "data" / "sessions"
    src = next(p for p in sessions.iterdir() if p.name.endswith("_y8q37"))
    copy = sessions / "1796099999999_new01"
    copy.mkdir()
    manifest = json.loads((src / f"{src.name}.json").read_text())
    manifest["session_id"] = copy.name
    (copy / f"{copy.name}.json").write_text(json.dumps(manifest))
    msgs = json.loads((src / f"{src.name}.messages.json").read_text())
    for m in msgs["messages"]:
        m["id"] = "new_" + str(m.get("id"))  # a new session's own calls, not a copy's
    (copy / f"{copy.name}.messages.json").write_text(json.dumps(msgs))
    assert app.tick() is True
    assert app.engine.day().calls > 0 and app.view.today != before.today
    assert app.view.label != before.label or app.view.today != before.today


def test_session_item_opens_that_sessions_summary(replay):
    config, state = replay
    app, spawned = make_app(config, state)
    app.tick()
    item = find(app.icon.menu, "Today's sessions").submenu.items[0]
    item(app.icon)
    sid = app.view.sessions[0][0]
    argv = spawned[-1]
    assert argv[argv.index("summary") + 1] == sid
    assert argv[argv.index("--config") + 1] == str(config) and argv[argv.index("--state-dir") + 1] == str(state)
    find(app.icon.menu, "Open summary")(app.icon)
    assert "summary" in spawned[-1] and sid not in spawned[-1]


def test_week_and_month_lines_open_that_periods_summary(replay):
    config, state = replay
    app, spawned = make_app(config, state)
    app.tick()
    for prefix, kind in (("This week: ", "week"), ("This month: ", "month")):
        item = find(app.icon.menu, prefix)
        assert item.enabled, f"the {kind} line opens the {kind}'s view"
        item(app.icon)
        argv = spawned[-1]
        assert argv[argv.index("summary") :] == [
            "summary",
            "--period",
            kind,
            "--config",
            str(config),
            "--state-dir",
            str(state),
        ]
        assert argv[: argv.index("summary")] == system.command()


def test_refresh_interval_theme_and_reset_write_the_settings_file(replay):
    config, state = replay
    app, _ = make_app(config, state)
    app.tick()
    settings = find(app.icon.menu, "Settings").submenu
    find(find(settings, "Refresh every").submenu, "15 s")(app.icon)
    find(find(settings, "Panel: auto").submenu, "dark")(app.icon)
    saved = tomllib.loads(config.read_text())
    assert saved["refresh_seconds"] == 15 and saved["theme"] == "dark"
    app.tick()
    settings = find(app.icon.menu, "Settings").submenu
    assert find(find(settings, "Refresh every").submenu, "15 s").checked
    assert "    set in settings" in texts(settings)
    find(settings, "Use environment and defaults")(app.icon)
    assert "cline_dir" not in tomllib.loads(config.read_text())


def test_first_run_without_cline_data_offers_a_folder_and_the_demo(env):
    app, spawned = make_app(env / "settings.toml", env / "state")
    app.tick()
    items = texts(app.icon.menu)
    assert items[0] == "No Cline CLI data found yet"
    assert "Choose Cline folder…" in items and "Open the demo" in items
    assert app.view.state is IconState.NO_DATA and app.view.label == format_cost(None)
    find(app.icon.menu, "Open the demo")(app.icon)
    assert spawned[-1][-2:] == ["demo", "--window"]


def test_override_pointing_nowhere_is_the_first_line(env, monkeypatch):
    monkeypatch.setenv("CLINE_SESSION_DATA_DIR", str(env / "nowhere"))
    app, _ = make_app(env / "settings.toml", env / "state")
    app.tick()
    first = texts(app.icon.menu)[0]
    assert "CLINE_SESSION_DATA_DIR points to" in first and "nowhere" in first
    assert app.view.state is IconState.PROBLEM


def test_broken_settings_file_is_reported_and_kept(replay):
    config, state = replay
    app, _ = make_app(config, state)
    app.tick()
    config.write_text(config.read_text() + "\nrefresh_seconds = = 3\n")
    app.tick()
    line = len(config.read_text().splitlines())
    assert texts(app.icon.menu)[0].startswith(f"⚠ Settings file is broken at line {line}: ")
    assert "= = 3" in config.read_text()


@pytest.mark.parametrize("currency, rate, symbol", [("EUR", "0.92", "€"), ("JPY", "150", "¥")])
def test_menu_and_icon_label_in_the_display_currency(replay, monkeypatch, currency, rate, symbol):
    monkeypatch.setenv("LC_ALL", "en_US.UTF-8")
    config, state = replay
    settings.update(config, "currency", currency)
    settings.update(config, "usd_rate", rate)
    app, _ = make_app(config, state)
    app.tick()
    money, day = app.engine.money(), app.engine.day()
    assert money.shown == currency and day.cost_usd > 0
    shown = day.cost_usd * float(rate)
    menu = app.icon.menu
    today = str(find(menu, "Today: ").text)
    assert today.startswith(f"Today: {money.text(day.cost_usd)} · ") and today.startswith(f"Today: {symbol}")
    for prefix in ("This week: ", "This month: ", "Last hour: ", "Top model: "):
        line = str(find(menu, prefix).text)
        assert "$" not in line and (symbol in line or "unpriced" in line), line
    assert all("$" not in text for text in texts(find(menu, "Today's sessions").submenu))
    assert app.view.label == view.format_money(shown, symbol) and app.view.label.startswith(symbol)
    assert len(app.view.label) <= 5
    assert app.icon.title.startswith(f"trayburn · {money.text(day.cost_usd)} today")
    settings.update(config, "daily_budget", str(day.cost_usd / 0.9))
    app.tick()
    budget = money.text(day.cost_usd / 0.9)
    assert app.icon.notified[-1][0].endswith(f" today: reached 80 % of your {budget} daily budget (90 %)")
    setting = find(find(app.icon.menu, "Settings").submenu, "Daily budget: ")
    assert str(setting.text).startswith("Daily budget: $"), "the setting itself is in US dollars"


def test_budget_thresholds_notify_once_per_day(replay):
    config, state = replay
    app, _ = make_app(config, state)
    app.tick()
    cost = app.engine.day().cost_usd
    settings.update(
        config, "daily_budget", str(cost / 0.9)
    )  # as by hand or by the budget dialog  # 90 %: past 80 %, below 100 %
    app.tick()
    assert app.view.state is IconState.WARN
    budget = f"${cost / 0.9:,.2f}"
    assert app.icon.notified == [(f"${cost:,.2f} today: reached 80 % of your {budget} daily budget (90 %)", "trayburn")]
    assert find(app.icon.menu, "Today: ").text.startswith(f"Today: ${cost:,.2f} of {budget} budget (90 %) · ")
    settings.update(config, "daily_budget", str(cost / 2))
    app.tick()
    app.tick()
    assert app.view.state is IconState.OVER
    assert len(app.icon.notified) == 2 and "passed" in app.icon.notified[1][0]
    again, _ = make_app(config, state)  # a restart does not notify again the same day
    again.tick()
    assert again.icon.notified == []


def test_quit_stops_the_icon(replay):
    config, state = replay
    app, _ = make_app(config, state)
    app.tick()
    find(app.icon.menu, "Quit trayburn")(app.icon)
    assert app._stop.is_set()


def test_one_tray_per_user(tmp_path):
    first = InstanceLock(tmp_path / "tray.lock").acquire()
    with pytest.raises(AlreadyRunning, match=str(os.getpid())):
        InstanceLock(tmp_path / "tray.lock").acquire()
    first.release()
    InstanceLock(tmp_path / "tray.lock").acquire().release()


def test_second_tray_process_exits_with_its_own_code(replay):
    config, state = replay
    env = dict(os.environ, PYSTRAY_BACKEND="dummy", TRAYBURN_LOG_DIR=str(state / "logs"))
    cmd = [sys.executable, "-m", "trayburn", "--config", str(config), "--state-dir", str(state)]
    first = subprocess.Popen(cmd, env=env)
    try:
        lock = state / "tray.lock"
        desktop.wait_for(
            lambda: lock.exists() and lock.read_text().strip() == str(first.pid),
            20,
            what="the first tray to hold the lock",
        )
        second = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=30)
        assert second.returncode == 3
        assert "already running" in second.stderr
    finally:
        first.terminate()
        first.wait(10)


def test_cline_installed_but_no_session_yet_is_a_first_run_not_a_problem(env):
    (env / "home" / ".cline" / "data").mkdir(parents=True)
    app, _ = make_app(env / "settings.toml", env / "state")
    app.tick()
    items = texts(app.icon.menu)
    assert items[0] == "No Cline CLI data found yet"
    assert not any("could not be read" in t for t in items)
    assert app.engine.health().problems == []


def test_a_file_caught_mid_write_is_not_a_problem_until_it_stays_broken(replay):
    config, state = replay
    app, _ = make_app(config, state)
    app.tick()
    sessions = Path(tomllib.loads(config.read_text())["cline_dir"]) / "data" / "sessions"
    folder = next(p for p in sessions.iterdir() if p.name.endswith("_y8q37"))
    lead = folder / f"{folder.name}.messages.json"
    lead.write_bytes(lead.read_bytes()[:5000])  # as Cline's in-place rewrite can be caught
    app.tick()
    assert app.view.state is IconState.OK and app.view.problem is None
    old = os.stat(lead).st_mtime - 300
    os.utime(lead, (old, old))
    app.tick()
    assert app.view.state is IconState.PROBLEM
    assert texts(app.icon.menu)[0] == "⚠ 1 file could not be read (see trayburn doctor)"


def test_a_failing_notification_never_stops_the_tray(replay):
    config, state = replay
    app, _ = make_app(config, state)
    app.tick()
    (state / "notified.json").mkdir()  # cannot be written
    settings.update(config, "daily_budget", str(app.engine.day().cost_usd / 2))
    assert app.tick() is True
    assert app.view.state is IconState.OVER


def test_a_day_of_unpriced_calls_is_never_shown_as_zero(env, monkeypatch):
    sessions = env / "cline" / "data" / "sessions"
    src = Path(__file__).parent / "data" / "real-cline-v1" / "data" / "sessions" / "1796026733097_tvgzu"
    dst = sessions / src.name
    dst.mkdir(parents=True)
    config = demo.prepare(env / "demo")  # a day of replayed calls: take one, rename its model
    replayed = Path(tomllib.loads(config.read_text())["sessions_dir"]) / src.name
    for f in replayed.iterdir():
        (dst / f.name).write_text(f.read_text().replace('"gpt-4o"', '"no-such-model-9"'))
    monkeypatch.setenv("CLINE_DIR", str(env / "cline"))
    app, _ = make_app(env / "settings.toml", env / "state")
    app.tick()
    day = app.engine.day()
    assert day.calls == 1 and day.unpriced_calls == 1
    assert app.view.label == "?" and app.view.today.startswith("Today: unpriced · 1 call")
    assert "$0" not in app.icon.title


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_refreshes_that_keep_failing_mark_the_figures_stale(replay):
    """Another process holds the ledger: the panel keeps the last figure (no "!"), the menu says in a few words
    that the figures are paused (the detail, with the ledger's path, goes to the log), then stale."""
    import sqlite3

    from trayburn.tray.app import PAUSED, panel_label

    config, state = replay
    clock = Clock()
    app = TrayApp(Engine(config, state, busy_timeout_s=0.05), pystray, CAPS, spawn=Spawned(), clock=clock)
    app.tick()
    assert app.view.updated == "Updated just now" and not app.view.stale
    figure = panel_label(app.view)
    holder = sqlite3.connect(state / "ledger.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process holds the ledger: every refresh fails
    try:
        clock.now += 40
        add_session(Path(tomllib.loads(config.read_text())["cline_dir"]) / "data" / "sessions", "1796099999999_zzbsy")
        app.tick()
        assert app.view.state is not IconState.PROBLEM and panel_label(app.view) == figure != "!"
        assert app.view.problem == PAUSED and len(PAUSED) < 70 and str(state) not in texts(app.icon.menu)[0]
        assert app.view.updated == "Updated just now — refresh failing" and not app.view.stale
        clock.now += 200
        assert app.tick() is True
        assert app.view.updated == "Updated 4 min ago — refresh failing" and app.view.stale
        assert "⚠ Updated 4 min ago — refresh failing" in texts(app.icon.menu)
        assert app.icon.title.endswith("· updated 4 min ago — refresh failing")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    clock.now += 30
    app.tick()
    assert app.view.updated == "Updated just now" and not app.view.stale and app.view.problem is None


def test_a_day_without_calls_says_yesterday(env):
    """The demo replayed as yesterday: today has no calls yet, the menu says what yesterday cost."""
    import time as clock

    config = demo.prepare(env / "demo", now_ms=int((clock.time() - 86400) * 1000))
    app = TrayApp(Engine(config, env / "state"), pystray, CAPS, spawn=Spawned())
    app.tick()
    assert app.engine.day().calls == 0
    line = next(t for t in texts(app.icon.menu) if t.startswith("Yesterday: "))
    from datetime import timedelta

    from trayburn.figures import periods

    before = app.engine.day(periods.now_date() - timedelta(days=1))
    assert before.calls > 0 and line == f"Yesterday: ${before.cost_usd:,.2f}"


def all_texts(menu) -> list[str]:
    out = []
    for item in menu.items:
        out.append(str(item.text))
        if item.submenu:
            out += all_texts(item.submenu)
    return out


@pytest.mark.parametrize("has_default_action", [True, False])
def test_one_open_summary_item_first_where_a_click_opens_the_menu(replay, has_default_action):
    config, state = replay
    from dataclasses import replace

    app = TrayApp(Engine(config, state), pystray, replace(CAPS, has_default_action=has_default_action))
    app.tick()
    items = texts(app.icon.menu)
    assert items.count("Open summary") == 1 and not any(t.startswith("Summary") for t in items)
    menu_items = [t for t in items if not t.startswith("Demo")]
    assert (menu_items[0] == "Open summary") is (not has_default_action)


def test_settings_lines_are_short_say_where_each_folder_came_from_and_use_tilde(env, monkeypatch):
    deep = Path.home() / "work" / "clients" / "a-very-long-client-name" / "tooling" / "cline-home"
    (deep / "data" / "sessions").mkdir(parents=True)
    config = env / "settings.toml"
    config.write_text(f'cline_dir = "{deep}"\n')
    monkeypatch.setenv("CLINE_SESSION_DATA_DIR", str(deep / "data" / "sessions"))
    app, _ = make_app(config, env / "state")
    app.tick()
    settings = texts(find(app.icon.menu, "Settings").submenu)
    assert all(len(t) <= 45 for t in settings), [t for t in settings if len(t) > 45]
    cline = next(i for i, t in enumerate(settings) if t.startswith("Cline folder: ~/work/"))
    assert settings[cline + 1].strip() == "set in settings"
    sessions = next(i for i, t in enumerate(settings) if t.startswith("Sessions folder: ~/"))
    assert settings[sessions + 1].strip() == "from CLINE_SESSION_DATA_DIR"
    assert not any(str(Path.home()) in t or "(settings" in t for t in settings)


def test_amounts_have_one_precision_and_estimates_are_said_in_words(env):
    from helpers.corpus import assistant, make_session, user

    sessions = env / "cline" / "data" / "sessions"
    now = int(__import__("time").time() * 1000)
    started = __import__("time").strftime("%Y-%m-%dT%H:%M:%S.000Z", __import__("time").gmtime())
    make_session(
        sessions, "1796100000000_tiny1", started, [user("u0", now), assistant("msg_tiny", now, 10, 1, cost=0.0084)]
    )
    # no cost reported: priced from its tokens (gpt-4o's list price): an estimate
    make_session(sessions, "1796100000001_est01", started, [user("u1", now), assistant("msg_est1", now, 20000, 2000)])
    config = env / "settings.toml"
    config.write_text(f'sessions_dir = "{sessions}"\ndaily_budget = 0.006\n')  # shown as $0.01: a cent at least
    app, _ = make_app(config, env / "state")
    app.tick()
    lines = all_texts(app.icon.menu)
    day = app.engine.day()
    assert day.estimated_cost_usd > 0
    today = next(t for t in lines if t.startswith("Today: "))
    assert f"incl. ${day.estimated_cost_usd:,.2f} estimated" in today and "over 10×" in today, today
    assert any(t.endswith("— <$0.01") for t in lines), lines  # the $0.0084 session
    assert not any("*" in t or "$0.008" in t for t in lines), lines
    assert any(t.endswith(f"— ${day.estimated_cost_usd:,.2f} estimated") for t in lines), lines  # all estimated
    assert "Top model: GPT-4o — $0.08 (incl. $0.07 estimated)" in lines


def test_with_calls_in_the_last_hour_the_clock_rebuilds_the_glance_at_most_once_a_minute(env):
    """With calls in the last hour the "Last hour" line is live and the burn rate fades with the clock, yet an
    idle tick within the minute builds no view and sets no menu; a minute on, the glance is built again, reading
    only what the clock changes (the wall clock here is the tray's own, moved by the test; the ledger's figures
    keep the real time)."""
    from helpers.corpus import age_all, assistant, iso, make_session, user, write_in_place

    cline = env / "cline-home"
    sessions = cline / "data" / "sessions"
    t = int(time.time() * 1000) - 10 * 60_000  # ten minutes ago
    calls = [user("u1", t), assistant("a1", t + 1000, cost=0.5), assistant("a2", t + 2000, cost=0.25)]
    folder = make_session(sessions, f"{t}_hour1", iso(t), calls)
    age_all(cline)  # written ten minutes ago, as Cline left them
    config = env / "settings.toml"
    config.write_text(f'cline_dir = "{cline}"\n')
    wall = Clock()
    wall.now = time.time()
    spawned = Spawned()
    app = TrayApp(Engine(config, env / "state"), pystray, CAPS, spawn=spawned, wall=wall)
    assert app.tick() is True
    assert app.view.hour_live and app.view.rate == "Last hour: $0.75/h"
    assert app.view.pace is not None and "/h now" in app.view.pace
    hour = find(app.icon.menu, "Last hour: ")
    assert hour.enabled, "greyed, it looks disabled on every host"
    hour(app.icon)  # like the other figures, it opens the summary
    assert "summary" in spawned[-1], spawned
    menu, builds, updates = app.icon.menu, app.builds, len(app.icon.updates)
    start = wall.now
    midnight = datetime.combine(date.fromtimestamp(start) + timedelta(days=1), datetime.min.time()).timestamp()
    for seconds in (1, 20, 50):  # within the minute: no view, no menu
        wall.now = start + seconds
        assert app.tick() is False
    assert app.builds == builds and app.icon.menu is menu and app.icon.updates[updates:] == []
    kept = app.glance
    wall.now = start + 61  # a minute on: the glance is built again
    app.tick()
    assert app.builds == builds + 1
    if start + 61 < midnight:  # only the clock moved: what it cannot change is not read again
        assert app.glance.week is kept.week and app.glance.day.report is kept.day.report
    wall.now = app.glance.stale_at_ms / 1000 - 1  # and not again within that minute (a minute of its clock)
    app.tick()
    assert app.builds == builds + 1
    kept = app.glance

    now = int(time.time() * 1000)  # a new call: built and shown at the next tick, whatever the clock says
    write_in_place(folder / f"{folder.name}.messages.json", dumps_messages(folder.name, calls, now))
    assert app.tick() is True
    assert app.builds == builds + 2 and app.icon.menu is not menu and app.view.rate == "Last hour: $1.75/h"
    assert app.glance.day.report.calls == kept.day.report.calls + 1 and app.glance.week.calls == kept.week.calls + 1


def dumps_messages(sid: str, calls: list, now_ms: int) -> bytes:
    from helpers.corpus import assistant, dumps, messages_doc

    return dumps(messages_doc(sid, [*calls, assistant("a3", now_ms - 1000, cost=1.0)]))


def test_a_glance_says_when_the_clock_alone_changes_it():
    """`changes_at`: a call leaving the last hour (the burn rate fading: a minute on), a running session falling
    silent (its "●" goes), a file caught mid-write no longer retried as one; never sooner than a minute, except
    midnight, which is never passed (the day, the week and the month turn then)."""
    from trayburn.figures.costs import Tokens
    from trayburn.figures.day import STALE_AFTER_MS, SessionSummary
    from trayburn.figures.glance import CLOCK_REBUILD_MS, HOUR_MS, changes_at

    today = date(2027, 1, 14)
    midnight = int(datetime(2027, 1, 15).timestamp() * 1000)  # local time, as the menu's day is
    now = midnight - 3 * HOUR_MS  # 21:00

    def session(state: str, last: int) -> SessionSummary:
        return SessionSummary(
            "s",
            "t",
            None,
            None,
            state,
            state,
            None,
            None,
            [],
            1,
            Tokens(),
            0.0,
            0.0,
            0,
            [],
            False,
            last_activity_ms=last,
        )

    assert changes_at(now, today, None, []) == midnight
    assert changes_at(now, today, None, [session("completed", now - 1000)]) == midnight
    # a call in the last hour: the burn rate fades with the clock, so the glance is rebuilt a minute on
    assert changes_at(now, today, now - 50 * 60_000, []) == now + CLOCK_REBUILD_MS
    running = session("running", now - 25 * 60_000)
    assert changes_at(now, today, None, [running]) == now - 25 * 60_000 + STALE_AFTER_MS
    assert changes_at(now, today, now - HOUR_MS + 10, [running]) == now + CLOCK_REBUILD_MS  # at most once a minute
    assert changes_at(now, today, None, [], settling=[("a.json", "truncated")]) == now + CLOCK_REBUILD_MS
    late = midnight - 20_000  # 23:59:40: a call leaving the hour after midnight, the one-minute floor past it
    assert changes_at(late, today, late - 50 * 60_000, []) == midnight
    assert changes_at(late, today, late - HOUR_MS + 10, []) == midnight
