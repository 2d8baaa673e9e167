"""The summary window on a real X server with real ledgers: calls a plan covered (their API value on
the cost cards of the day, the period and the session, never in the spend) and, with a second machine
sharing one sync folder, the day's spend on all machines and the period's "By machine" tab."""

from __future__ import annotations

import pytest
from helpers.corpus import iso, make_session
from helpers.menus import a_minute_ago_ms, routed
from helpers.sync_machines import boxes
from helpers.window_harness import DAY, display, engine, env, open_window, screenshot  # noqa: F401  (fixtures)

from trayburn.figures import periods
from trayburn.words import plan_text


def cards(view) -> dict[str, tuple[str, str]]:
    return {c[0]: c[1:] for c in view.cards.texts()}


@pytest.fixture
def two_machines(tmp_path):
    """A laptop (this machine: a plan session and a paid one) and a desktop sharing one sync folder."""
    laptop, desktop = boxes(tmp_path, "laptop", "desktop")
    t = a_minute_ago_ms()
    plan = [
        routed(f"p{i}", t + i, "cline-pass/glm-5.2", "cline-pass", input=40_000, output=1_200, cost=0) for i in range(3)
    ]
    make_session(laptop.sessions, f"{t}_plan1", iso(t), plan, provider="cline-pass")
    make_session(laptop.sessions, f"{t}_paid1", iso(t), [routed("l1", t, "claude-sonnet-4-5", "cline", cost=0.2)])
    make_session(desktop.sessions, f"{t}_desk1", iso(t), [routed("d1", t, "claude-sonnet-4-5", "cline", cost=0.5)])
    desktop.engine().refresh()  # the desktop's file, written at once the first time
    e = laptop.engine()
    yield e, f"{t}_plan1"
    e.close()


def test_the_day_card_shows_the_plan_value_and_the_spend_on_all_machines(open_window, two_machines):
    e, _ = two_machines
    today = periods.now_date()
    win = open_window(e, today=lambda: today, day=today)
    day, money = e.day(today), e.money()
    assert day.plan_calls == 3 and day.cost_usd == pytest.approx(0.7), "every machine's calls are counted"
    figure, note = cards(win.day_view)["TODAY"]
    assert figure == money.text(day.cost_usd), "the plan's API value is never in the spend"
    assert plan_text(day, money.cents) in note.splitlines() and day.plans == ["ClinePass"]
    assert "All $0.70 on 2 machines (this one $0.20)" in note.splitlines()
    screenshot(win, "summary-plan-day")


def test_the_period_view_has_a_by_machine_tab_and_the_plan_value(open_window, two_machines):
    e, _ = two_machines
    today = periods.now_date()
    win = open_window(e, today=lambda: today, day=today, kind="week")
    view = win.period_view
    assert view.tabs.tab(view.machines, "state") == "normal"
    rows = [view.machines.rows[i].values for i in view.machines.order()]
    assert rows == [("desktop", "1", "$0.50"), ("laptop (this one)", "4", "$0.20")]
    day = e.day(today)  # every call of the week is today's
    assert day.plan_api_value_usd > 0 and plan_text(day, e.money().cents) in cards(view)["COST"][1].splitlines()
    view.tabs.select(view.machines)
    win.root.update()
    screenshot(win, "summary-by-machine")


def test_the_session_view_labels_what_the_plan_covered(open_window, two_machines):
    e, sid = two_machines
    today = periods.now_date()
    win = open_window(e, today=lambda: today, session_id=sid)
    s = e.session(sid).summary
    figure, note = cards(win.session_view)["COST"]
    assert figure == e.money().text(0.0) and s.plan_api_value_usd > 0
    assert note.splitlines()[-1] == plan_text(s, e.money().cents)
    screenshot(win, "summary-plan-session")


def test_no_other_machine_no_tab_no_plan_line(open_window, engine):
    win = open_window(engine, day=DAY, kind="week")
    view = win.period_view
    assert view.tabs.tab(view.machines, "state") == "hidden"
    assert "API value" not in cards(view)["COST"][1]
    win.show_day(DAY)
    assert "\n" not in cards(win.day_view)["TODAY"][1], "one line: no plan, no other machine"
