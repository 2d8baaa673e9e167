"""The summary window's periods on a real X server (Xvfb), on the real recording: the week and month
views against the engine's own figures, the cost-per-day chart, budgets and the month's projection,
export through the real Tk save dialog (the file read back), and the rough edges of issue 10."""

from __future__ import annotations

import csv
import json
from datetime import date

import pytest
from helpers.window_harness import (  # noqa: F401  (fixtures)
    BY_LABEL,
    DAY,
    EXPECTED,
    cells,
    column,
    display,
    engine,
    env,
    open_window,
    press,
    settle,
    wait_for,
)

from trayburn.engine import Engine
from trayburn.figures import periods
from trayburn.figures.money import usd
from trayburn.window import models, period_rows

WEEK = periods.week_of(DAY)  # Monday 30 November to Sunday 6 December 2026
MONTH = periods.month_of(DAY)
DIALOG = ".__tk_filedialog"  # Tk's own save dialog on X11 (tkfbox.tcl)


@pytest.fixture
def engine_with(env, tmp_path):
    """An engine on the shared ledger with these settings (a real settings file)."""
    made = []

    def make(environ: dict | None = None, **settings) -> Engine:
        path = tmp_path / "settings.toml"
        path.write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in settings.items()))
        e = Engine(config=str(path), env=env | (environ or {}))
        made.append(e)
        return e

    yield make
    for e in made:
        e.close()


def cards(view) -> dict[str, tuple[str, str]]:
    return {c[0]: c[1:] for c in view.cards.texts()}


# ---- week and month ---------------------------------------------------------------------------------


def test_week_view_figures_match_the_engine(open_window, engine):
    win = open_window(engine, day=DAY, kind="week")
    view = win.period_view
    assert win.current is view and view.heading.cget("text") == "Week of 30 November 2026"
    assert "Week of 30 November 2026" in win.root.title()
    tree = view.sessions.tree
    assert sorted(tree.get_children()) == sorted(s["session_id"] for s in EXPECTED["sessions"])
    totals = view.sessions.totals.item("total", "values")
    assert str(totals[1]) == "18 sessions" and str(totals[3]) == str(EXPECTED["totals"]["calls"])
    views = engine.overview(WEEK)
    for by, table in view.groups.items():
        r = views[by]
        assert [table.rows[i].values[0] for i in table.order()] == [g.label for g in r.rows], by
        assert sum(int(v) for v in column(table.tree, "sessions")) >= r.total.sessions
        assert [table.rows[i].keys[2] for i in table.order()] == [g.totals.cost_usd for g in r.rows]
    assert cards(view)["COST"][0] == usd(views["day"].total.totals.cost_usd)
    assert [b.day for b in view.chart.bars] == [
        date(2026, 11, 30 + i) if i == 0 else date(2026, 12, i) for i in range(7)
    ]


def test_the_day_chart_names_the_day_under_the_pointer_and_a_click_opens_it(open_window, engine):
    win = open_window(engine, day=DAY, kind="week")
    chart = win.period_view.chart
    days = engine.history(WEEK, "day")
    assert [b.cost_usd for b in chart.bars] == pytest.approx([g.totals.cost_usd for g in days.rows])
    assert [i for i in range(7) if chart.find_withtag(f"d{i}")] == [0]  # the recording is all on Monday
    assert chart.caption().startswith("Busiest day Mon 30 Nov")
    x, y = chart.bar_center(DAY)
    chart.event_generate("<Motion>", x=x, y=y)
    settle(win.root)
    assert chart.caption().startswith("Mon 30 Nov") and "click" in chart.caption()
    chart.event_generate("<Button-1>", x=x, y=y)
    settle(win.root)
    assert win.current is win.day_view and win.day == DAY


def test_month_with_a_budget_shows_spend_against_it_and_a_marked_projection(open_window, engine_with):
    e = engine_with(monthly_budget=0.5)
    win = open_window(e, day=DAY, kind="month")  # "today" is 30 November: the month is under way
    view = win.period_view
    totals = e.history(MONTH, "day").total.totals
    spent = totals.cost_usd
    c = cards(view)
    assert totals.estimated_usd > 0  # the estimate in words under the spend against the budget, no bare "*"
    assert c["COST"] == (
        usd(spent),
        f"{models.budget_text(spent, 0.5)}\nincl. {usd(totals.estimated_usd)} estimated",
    )
    assert f"({spent / 0.5 * 100:.0f}\u00a0%)" in c["COST"][1]
    assert c["PROJECTED"][0] == usd(spent / 30 * 30)  # the last day: the line ends where it stands
    assert c["PROJECTED"][1].startswith("projection: a straight line from 30 of 30 days")
    assert "projection" in view.zone.cget("text")
    assert view.budget.winfo_ismapped() and view.budget.cget("value") == pytest.approx(spent / 0.5 * 100)
    earlier = open_window(e, day=DAY, kind="month", today=lambda: date(2026, 11, 10))
    assert cards(earlier.period_view)["PROJECTED"] == (
        usd(spent / 10 * 30),  # what the month has so far, along a line from 10 days to 30
        f"projection: a straight line from 10 of 30 days · over the budget by {usd(spent * 3 - 0.5)}",
    )


def test_a_past_month_has_no_projection(open_window, engine_with):
    win = open_window(engine_with(monthly_budget=0.5), day=DAY, kind="month", today=lambda: date(2026, 12, 20))
    c = cards(win.period_view)
    assert "PROJECTED" not in c and c["PER DAY"][1] == "over 30 days"


def test_kind_buttons_prev_next_and_the_typed_range(open_window, engine):
    win = open_window(engine, day=DAY)
    nav = win.day_view.nav
    nav.kind_buttons["week"].invoke()
    assert win.current is win.period_view and win.period == WEEK
    win.period_view.nav.kind_buttons["month"].invoke()
    assert win.period == MONTH and win.period_view.nav.next.instate(["disabled"])  # November holds "today"
    press(win, win.period_view.sessions.tree, "<Left>")
    assert win.period == periods.month_of(date(2026, 10, 1))
    assert win.period_view.sessions.order() == [] and win.period_view.chart.caption() == "No spend in this period"
    entry = win.period_view.nav.entry
    entry.delete(0, "end")
    entry.insert(0, "2026-11-23..2026-11-30")
    press(win, entry, "<Return>")
    assert win.period == periods.Period(date(2026, 11, 23), DAY, "range") and len(win.period_view.chart.bars) == 8
    entry.delete(0, "end")
    entry.insert(0, "next fortnight")
    press(win, entry, "<Return>")
    assert "not a date or a period" in win.period_view.problem.cget("text")
    win.period_view.nav.kind_buttons["range"].invoke()  # the range in view, to edit in the field
    assert win.period.kind == "range" and win.root.focus_get() is win.period_view.nav.entry
    win.period_view.nav.now.invoke()
    assert win.period == periods.Period(date(2026, 11, 1), DAY, "range")  # the last 30 days
    win.period_view.nav.kind_buttons["day"].invoke()
    assert win.current is win.day_view and win.day == DAY


def test_a_session_opened_from_a_period_goes_back_to_it(open_window, engine):
    win = open_window(engine, day=DAY, kind="week")
    sid = BY_LABEL["c_subagent"]["session_id"]
    tree = win.period_view.sessions.tree
    tree.selection_set(sid)
    tree.focus(sid)
    press(win, tree, "<Return>")
    assert win.current is win.session_view
    assert win.session_view.back.cget("text") == "◀ Week of 30 November 2026"
    win.session_view.back.invoke()
    assert win.current is win.period_view and win.period == WEEK


# ---- export through the real save dialog ----------------------------------------------------------


def answer_save_dialog(win, path) -> None:
    """When Tk's save dialog is up, type the file name and press Save, as a person would."""

    def fill():
        if not win.root.tk.call("winfo", "exists", DIALOG):
            win.root.after(50, fill)
            return
        entry = f"{DIALOG}.contents.f2.ent"
        win.root.tk.call(entry, "delete", 0, "end")
        win.root.tk.call(entry, "insert", 0, str(path))
        win.root.tk.call(f"{DIALOG}.contents.f2.ok", "invoke")

    win.root.after(50, fill)


@pytest.mark.parametrize("name", ["week.csv", "week.json"])
def test_export_writes_the_period_through_the_save_dialog(open_window, engine, tmp_path, name, monkeypatch):
    monkeypatch.setenv("TRAYBURN_TK_DIALOGS", "1")  # Tk's own dialog (where GTK is not): its entry filled here
    win = open_window(engine, day=DAY, kind="week")
    target = tmp_path / name
    answer_save_dialog(win, target)
    win.period_view.nav.export.invoke()  # returns when the dialog is answered
    wait_for(target.exists, f"{name} to be written")
    if name.endswith(".csv"):
        rows = list(csv.DictReader(target.open(encoding="utf-8", newline="")))
    else:
        rows = json.loads(target.read_text(encoding="utf-8"))
    t = EXPECTED["totals"]
    assert len(rows) == t["calls"]
    assert sum(int(r["input_tokens"]) for r in rows) == t["inputTokens"]
    assert sum(int(r["cache_write_tokens"]) for r in rows) == t["cacheWriteTokens"]
    assert "Exported 94 calls" in win.status.cget("text")


def test_export_on_linux_is_gtks_native_chooser_in_documents_with_the_name_filled(
    open_window, engine, display, monkeypatch
):
    """The real GTK save chooser (a child process) on the test display; pressing Enter saves what it offers:
    the file name filled in, in ~/Documents."""
    import os
    import shutil
    import subprocess
    from pathlib import Path

    from helpers.desktop import gtk_available

    if not gtk_available() or not shutil.which("xdotool"):
        pytest.skip("GTK's chooser needs PyGObject (pip install 'trayburn[gtk]') and xdotool to answer it")
    documents = Path.home() / "Documents"
    documents.mkdir(exist_ok=True)
    monkeypatch.setenv("DISPLAY", display)
    monkeypatch.delenv("TRAYBURN_TK_DIALOGS", raising=False)
    win = open_window(engine, day=DAY, kind="week")
    win.period_view.nav.export.invoke()  # the chooser opens in a child; the window goes on drawing
    env = {**os.environ, "DISPLAY": display}

    def dialog():
        win.root.update()
        found = subprocess.run(
            ["xdotool", "search", "--onlyvisible", "--name", "^Export the calls of "], env=env, capture_output=True
        )
        return found.stdout.split()[:1]

    [wid] = wait_for(dialog, "GTK's save chooser")
    subprocess.run(["xdotool", "windowfocus", "--sync", wid], env=env, check=True)  # (no window manager here)
    subprocess.run(["xdotool", "key", "Return"], env=env, check=True)
    target = documents / f"trayburn-{WEEK.since}-to-{WEEK.until}.csv"
    wait_for(lambda: (win.root.update(), target.exists() and "Exported" in str(win.status.cget("text")))[1], "the file")
    assert len(list(csv.DictReader(target.open(encoding="utf-8", newline="")))) == EXPECTED["totals"]["calls"]


def test_export_of_a_day_and_a_failed_export_say_so(open_window, engine, tmp_path):
    win = open_window(engine, day=DAY)
    assert win.export_to(str(tmp_path / "day.csv")).startswith("Exported 94 calls")
    said = win.export_to(str(tmp_path / "no" / "such" / "folder.csv"))
    assert said.startswith("Could not export") and not (tmp_path / "no").exists()


# ---- budget, currency, demo ------------------------------------------------------------------------


def test_daily_budget_on_the_cost_card(open_window, engine_with):
    e = engine_with(daily_budget=0.4)
    win = open_window(e, day=DAY)
    day = e.day(DAY)
    spent = day.cost_usd
    c = cards(win.day_view)
    assert c["TODAY"] == (
        usd(spent),
        f"of $0.40 budget ({spent / 0.4 * 100:.0f}\u00a0%)\nincl. {usd(day.estimated_cost_usd)} estimated",
    )
    assert win.day_view.budget.winfo_ismapped() and win.day_view.budget.share == pytest.approx(spent / 0.4)


def test_amounts_in_the_chosen_currency(open_window, engine_with):
    e = engine_with({"LANG": "de_DE.UTF-8"}, currency="EUR", usd_rate=0.5)
    win = open_window(e, day=DAY, kind="week")
    spent = e.history(WEEK, "day").total.totals.cost_usd
    assert cards(win.period_view)["COST"][0] == e.money().text(spent)
    assert cards(win.period_view)["COST"][0].endswith("€") and "," in cards(win.period_view)["COST"][0]
    assert all(c.rstrip("?").endswith("€") for c in column(win.period_view.sessions.tree, "cost"))
    win.show_day(DAY)  # the hour chart's caption too
    peak = max(e.hourly(DAY))
    assert (
        win.day_view.chart.caption().endswith("   " + e.money().text(peak)) and "$" not in win.day_view.chart.caption()
    )


def test_the_demo_says_it_is_a_demo(open_window, tmp_path, env):
    from trayburn import demo

    config = demo.prepare(tmp_path / "demo")
    e = Engine(config=str(config), state_dir=str(tmp_path / "demo" / "state"), env={"TZ": "UTC"})
    try:
        win = open_window(e, today=lambda: date.today())
        assert win.demo and win.root.title().endswith("— demo")
        win.refresh()
        assert win.status.cget("text").startswith("Demo: recorded sessions replayed as today")
    finally:
        e.close()


# ---- rough edges ------------------------------------------------------------------------------------


def test_at_the_minimum_size_figures_stay_whole_and_titles_end_in_an_ellipsis(open_window, engine):
    win = open_window(engine, day=DAY)
    win.root.geometry("{}x{}".format(*win.root.minsize()))
    wait_for(lambda: (settle(win.root), win.root.winfo_width())[1] == win.root.minsize()[0], "the minimum size")
    table = win.day_view.sessions
    settle(win.root)
    for c in models.DAY_COLUMNS:
        if c.fixed:
            assert table.tree.column(c.key, "width") == table._natural(c), c.key
    shown = [table.shown(i) for i in table.order()]
    assert [s["cost"] for s in shown] == [table.rows[i].values[-1] for i in table.order()]  # whole
    titles = [(table.shown(i)["title"], table.rows[i].values[1]) for i in table.order()]
    assert any(shown_t.endswith("…") and full.startswith(shown_t[:-1]) for shown_t, full in titles)
    heading = win.day_view.heading  # cut to its room too, and whole again when there is room
    assert heading.cget("text").endswith("…") and heading.full.startswith(heading.cget("text")[:-1])
    win.root.geometry("1000x640")
    wait_for(lambda: (settle(win.root), heading.cget("text"))[1] == "Monday 30 November 2026", "the whole heading")


def test_sorting_by_cost_keeps_the_selected_row_in_view(open_window, engine):
    win = open_window(engine, day=DAY)
    table = win.day_view.sessions
    pick = table.order()[-1]
    table.tree.selection_set(pick)
    table.tree.see(pick)
    settle(win.root)
    for _ in range(2):
        win.root.tk.call(table.tree.heading("cost", "command"))
        settle(win.root)
        assert table.tree.bbox(pick), "the selected row scrolled out of view"


def test_one_precision_per_column_and_helpers_named_by_index(open_window, engine):
    sid = BY_LABEL["c_subagent"]["session_id"]
    win = open_window(engine, session_id=sid)
    view = win.session_view
    names = [str(view.agents.tree.set(i, "name")) for i in view.agents.tree.get_children()]
    assert sorted(names) == ["Lead", "Subagent 1", "Subagent 2"]
    costs = column(view.calls.tree, "cost")
    assert len({len(c.split(".")[1]) for c in costs}) == 1  # a call's cost: one precision for the column
    writes = column(view.calls.tree, "cache_write")
    assert sum(int(w.replace(",", "")) for w in writes) == BY_LABEL["c_subagent"]["totals"]["cacheWriteTokens"]
    team = open_window(engine, session_id=BY_LABEL["d_team"]["session_id"]).session_view.agents
    team_names = [str(team.tree.set(i, "name")) for i in team.tree.get_children()]
    assert sorted(team_names) == ["Lead", "worker"]


def test_period_entry_parsing():
    today = DAY
    assert period_rows.parse_entry("2026-11", "day", today) == MONTH
    assert period_rows.parse_entry("2026-11-04", "week", today) == periods.week_of(date(2026, 11, 4))
    assert period_rows.parse_entry("7d", "day", today) == periods.Period(date(2026, 11, 24), DAY)
    last_month = periods.Period(date(2026, 10, 1), DAY, "range")
    assert period_rows.parse_entry("last-month to today", "day", today) == last_month
    with pytest.raises(periods.BadPeriod):
        period_rows.parse_entry("2026-13", "day", today)


def test_week_by_tool_by_agent_cache_and_what_if(open_window, engine):
    """The period's Tool and Agent tabs hold the engine's attribution (its shares in cents, adding up to the week's
    cost); the line under the tables says what the cache saved, and a model picked there adds its what-if."""
    win = open_window(engine, day=DAY, kind="week")
    view = win.period_view
    by_tool = engine.attribution(WEEK, "tool")
    assert [view.tools.rows[i].values[0] for i in view.tools.order()] == [s.label for s in by_tool.rows]
    assert sum(s.nano for s in by_tool.rows) == round(engine.history(WEEK, "day").total.totals.cost_usd * 1e9)
    programs = view.tools.rows["tool:run_commands"].values[3]
    assert programs.startswith("echo $0.10") and "python3" in programs
    roles = sorted(str(view.agents.tree.set(i, "role")) for i in view.agents.tree.get_children())
    assert roles == ["lead", "subagent", "subagent", "teammate"]
    line = view.cache.full
    assert line.startswith("Cache: 89") and "at list price" in line
    view.reprice_model.set("claude-sonnet-4-5")
    view.reprice.event_generate("<<ComboboxSelected>>")
    settle(win.root)
    w = engine.reprice(WEEK, "claude-sonnet-4-5")
    assert view.cache.full.startswith("What if (not spend): these 94 calls on Claude Sonnet 4.5 would cost")
    assert usd(w.cost_usd) in view.cache.full and view.cache.full.endswith(line)
    assert "claude-sonnet-4-5" in view.reprice.cget("values")
