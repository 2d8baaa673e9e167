"""The summary window on a real X server (Xvfb), on sessions recorded from the real Cline CLI.

In-process tests build the window with Tk on the Xvfb display and read the figures back from the
widgets themselves (Treeview rows, labels, the chart's canvas); one test runs `trayburn summary`
as its own process and screenshots it. The pure row-building layer is tested without a display.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import replace
from datetime import date

import pytest

from trayburn import words
from trayburn.engine import Engine
from trayburn.figures import money
from trayburn.figures.money import Money
from trayburn.tray import view
from trayburn.window import models

tk = pytest.importorskip("tkinter", reason="the summary window needs tkinter (apt-get install python3-tk)")
from helpers.window_harness import (  # noqa: E402, F401  (fixtures)
    BY_LABEL,
    CORPUS,
    DAY,
    DEADLINE_S,
    EXPECTED,
    ROOT,
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

from trayburn.window import theme  # noqa: E402  (needs tkinter)

# ---- the rows, without a display -----------------------------------------------------------------


def amount_as_the_menu(usd: float) -> str:
    """What the tray's menu writes for an amount (issue 18's one rule): the window must write the same."""
    return view.amount(Money(), usd)


def test_amounts_are_written_as_the_menu_writes_them():
    written = {0.0: "$0.00", 0.0042: "<$0.01", 0.0099: "<$0.01", 0.01: "$0.01", 0.0786: "$0.08", 1234.567: "$1,234.57"}
    for usd, text in written.items():
        assert models.amount(models.USD, usd) == amount_as_the_menu(usd) == text
    assert models.amount(models.USD, None) == "unpriced"
    assert models.estimate_note(models.USD, 0.42, 0.07) == "incl. $0.07 estimated"  # the menu's words
    assert models.estimate_note(models.USD, 0.42, 0.0) == "all reported by Cline"


def test_clean_makes_one_short_line_of_plain_text():
    assert models.clean("a\n\tb\x00c\u2028d  e") == "a b c d e"
    assert models.clean("x" * 100, 10) == "x" * 9 + "…"
    assert models.clean(None) == ""
    assert models.short_path("/home/me/" + "deep/" * 30 + "project", 40).endswith("/deep/project")
    assert len(models.short_path("/a/" + "b" * 200, 40)) == 40


def test_figures_as_text():
    assert models.cost_text(0.0, 0.0, 3, 3) == "unpriced"  # never $0 when nothing had a price
    assert models.cost_text(1.5, 0.5, 1, 3) == "≈$1.50?"  # about: part estimated; "?": some unpriced (the legend)
    assert models.cost_text(12.4012) == "$12.40" and models.cost_text(0.0084) == "<$0.01"
    assert (
        models.duration(42) == "42 s" and models.duration(125) == "2 min 05 s" and models.duration(3720) == "1 h 02 min"
    )
    assert models.start_text("2026-11-30T08:19:10+00:00", DAY) == "08:19"
    assert models.start_text("2026-11-29T23:50:00+00:00", DAY) == "29 Nov"  # begun the day before
    assert models.parse_day("2026-11-30") == DAY and models.parse_day(DAY) == DAY
    with pytest.raises(models.BadDay, match="not a date"):
        models.parse_day("30/11/2026")


def test_sort_rows_is_stable_and_typed():
    rows = [models.Row("b", (), (2, "x")), models.Row("a", (), (2, "y")), models.Row("c", (), (10, None))]
    assert [r.iid for r in models.sort_rows(rows, 0, descending=False)] == ["a", "b", "c"]
    assert [r.iid for r in models.sort_rows(rows, 0, descending=True)] == ["c", "b", "a"]
    assert [r.iid for r in models.sort_rows(rows, 1, descending=False)] == ["c", "b", "a"]  # None first


# ---- the day ---------------------------------------------------------------------------------------


def test_day_table_holds_every_session_with_expected_calls_and_tokens(open_window, engine):
    win = open_window(engine, day=DAY)
    tree = win.day_view.sessions.tree
    assert win.current is win.day_view
    assert sorted(tree.get_children()) == sorted(s["session_id"] for s in EXPECTED["sessions"])
    for s in EXPECTED["sessions"]:
        row, t = cells(tree, s["session_id"]), s["totals"]
        assert row["calls"] == str(t["calls"]), s["label"]
        assert row["tokens"] == words.tokens(t["inputTokens"] + t["outputTokens"]), s["label"]
        assert row["title"].startswith(f"[{s['label']}]")
        # a session left "running" by a killed process shows as stale once it has been silent for long
        assert row["status"] == s["status"] or (s["status"] == "running" and row["status"] == "stale")
    # costs include estimates: compare with the engine, at the menu's precision (cents; some are below a cent)
    for s in engine.sessions(DAY, DAY):
        marked = ("≈" if s.estimated_cost_usd else "") + amount_as_the_menu(s.cost_usd)
        assert cells(tree, s.id)["cost"] == marked + ("?" if s.unpriced_calls else ""), s.title
    costs = column(tree, "cost")
    assert all(re.fullmatch(r"≈?(\$\d+\.\d\d|<\$0\.01)\??", c) for c in costs), costs
    assert "<$0.01" in costs and "$0.08" in costs  # never "$0.0786" beside "$0.0003"


def test_totals_line_and_cards_match_expected_and_the_engine(open_window, engine):
    win = open_window(engine, day=DAY)
    day = engine.day(DAY)
    totals = win.day_view.sessions.totals.item("total", "values")
    t = EXPECTED["totals"]
    assert str(totals[1]) == f"{EXPECTED['session_count']} sessions"
    assert str(totals[5]) == str(t["calls"])
    assert str(totals[6]) == words.tokens(t["inputTokens"] + t["outputTokens"])
    assert str(totals[7]) == f"≈${day.cost_usd:.2f}"  # cents, as the card; "≈": part of it is estimated
    assert day.cost_usd >= t["cost"] - 1e-9  # reported cost plus estimates
    cards = dict((c[0], c[1:]) for c in win.day_view.cards.texts())
    assert cards["TODAY"][0] == money.usd(day.cost_usd) == str(totals[7]).lstrip("≈")  # today (no budget set)
    assert cards["TODAY"][1] == f"incl. {money.usd(day.estimated_cost_usd)} estimated"
    # the same figure and the same words as the tray's menu
    health = engine.health()
    figures = replace(engine.glance(health), day=engine.day_figures(DAY))  # the menu's words for that day
    menu = view.build_view(figures, engine.settings, health).today
    assert menu.startswith(f"Today: {cards['TODAY'][0]} ") and menu.endswith(" " + cards["TODAY"][1]), menu
    assert not win.day_view.budget.winfo_ismapped()
    assert cards["SESSIONS"][0] == "18" and cards["CALLS"][0] == "94"
    assert "4 failed" in cards["SESSIONS"][1] and "1 cancelled" in cards["SESSIONS"][1]
    assert str(win.day_view.legend.cget("text")).startswith("≈ includes an estimate from token counts")
    assert win.day_view.heading.cget("text") == "Monday 30 November 2026"
    assert "30 November 2026" in win.root.title()


def test_cost_per_model_and_per_hour(open_window, engine):
    win = open_window(engine, day=DAY)
    day = engine.day(DAY)
    models = win.day_view.models.tree
    assert [str(models.set(i, "model")) for i in models.get_children()] == [m.name for m in day.models]
    assert sum(int(c) for c in column(models, "calls")) == EXPECTED["totals"]["calls"]
    chart = win.day_view.chart
    assert chart.values == pytest.approx(engine.hourly(DAY))
    assert sum(chart.values) == pytest.approx(day.cost_usd)
    busy = [h for h, v in enumerate(chart.values) if v > 0]
    assert [h for h in range(24) if chart.find_withtag(f"h{h}")] == busy == [8]  # recorded 08:18-08:23
    assert chart.caption().startswith("Busiest hour 08:00–09:00")


def test_sorting_by_cost_orders_rows_and_keeps_the_totals(open_window, engine):
    win = open_window(engine, day=DAY)
    table = win.day_view.sessions
    cost = {s.id: s.cost_usd for s in engine.sessions(DAY, DAY)}
    win.root.tk.call(table.tree.heading("cost", "command"))  # what a click on the heading runs
    settle(win.root)
    order = [cost[i] for i in table.order()]
    assert order == sorted(order, reverse=True) and order[0] > order[-1]
    assert str(table.tree.heading("cost", "text")).endswith("▼")
    win.root.tk.call(table.tree.heading("cost", "command"))
    order = [cost[i] for i in table.order()]
    assert order == sorted(order)
    assert str(table.totals.item("total", "values")[5]) == "94"
    win.refresh()  # the sort survives a refresh
    assert [cost[i] for i in table.order()] == order


def test_refresh_keeps_selection_and_scroll_position(open_window, engine):
    win = open_window(engine, day=DAY)
    tree = win.day_view.sessions.tree
    assert tree.yview()[1] < 1.0, "the table should need scrolling at the default size"
    pick = tree.get_children()[-3]
    tree.selection_set(pick)
    tree.focus(pick)
    tree.yview_moveto(0.4)
    settle(win.root)
    before_view, before_rows = tree.yview(), tree.get_children()
    win.refresh()
    settle(win.root)
    assert tree.selection() == (pick,) and tree.focus() == pick
    assert tree.yview() == before_view
    assert tree.get_children() == before_rows


def test_the_timer_refreshes_and_new_sessions_appear_in_place(open_window, tmp_path):
    cline = tmp_path / "cline"
    sessions = CORPUS / "data" / "sessions"
    first, second, later = (BY_LABEL[k]["session_id"] for k in ("a_plain", "b_tools_patch", "c_subagent"))
    for sid in (first, second):
        shutil.copytree(sessions / sid, cline / "data" / "sessions" / sid)
    env = {
        "CLINE_DIR": str(cline),
        "TRAYBURN_STATE_DIR": str(tmp_path / "state"),
        "TRAYBURN_CONFIG": str(tmp_path / "none.toml"),
        "TZ": "UTC",
    }
    engine = Engine(env=env)
    try:
        win = open_window(engine, day=DAY, refresh=False)
        assert win.day_view.sessions.order() == [] and win.updated_at is None
        win.start()  # the first refresh comes on a timer, after the first frame
        wait_for(lambda: (win.root.update(), win.updated_at)[1], "the window's first refresh")
        table = win.day_view.sessions
        assert table.order() == [second, first]
        table.tree.selection_set(first)
        shutil.copytree(sessions / later, cline / "data" / "sessions" / later)
        win.refresh()
        assert table.order() == [later, second, first] and table.selected == first
        assert str(table.totals.item("total", "values")[5]) == str(1 + 5 + 7)
    finally:
        engine.close()


def test_arrow_keys_change_the_day_and_the_date_field_goes_to_a_day(open_window, engine):
    win = open_window(engine, day=DAY)
    tree = win.day_view.sessions.tree
    press(win, tree, "<Left>")
    assert win.day == date(2026, 11, 29)
    assert tree.get_children() == () and win.day_view.sessions.empty.winfo_ismapped()
    assert str(win.day_view.sessions.totals.item("total", "values")[5]) == "0"
    press(win, tree, "<Alt-Right>")
    assert win.day == DAY and len(tree.get_children()) == 18
    press(win, tree, "<Right>")
    assert win.day == DAY, "never past today"
    assert win.day_view.next.instate(["disabled"])
    entry = win.day_view.entry
    entry.delete(0, "end")
    entry.insert(0, "2026-11-01")
    press(win, entry, "<Return>")
    assert win.day == date(2026, 11, 1)
    entry.delete(0, "end")
    entry.insert(0, "next tuesday")
    press(win, entry, "<Return>")
    assert win.day == date(2026, 11, 1)
    assert "is not a date" in str(win.day_view.problem.cget("text")) and win.day_view.problem.winfo_ismapped()


# ---- one session -----------------------------------------------------------------------------------


def test_enter_opens_a_session_and_escape_comes_back(open_window, engine):
    win = open_window(engine, day=DAY)
    sid = BY_LABEL["c_subagent"]["session_id"]
    tree = win.day_view.sessions.tree
    tree.selection_set(sid)
    tree.focus(sid)
    press(win, tree, "<Return>")
    view = win.session_view
    assert win.current is view
    calls = view.calls.tree
    assert len(calls.get_children()) == BY_LABEL["c_subagent"]["totals"]["calls"] == 7
    assert (
        sum(int(c.replace(",", "")) for c in column(calls, "input")) == BY_LABEL["c_subagent"]["totals"]["inputTokens"]
    )
    assert column(calls, "tools")[:3] == ["subagent", "shell", "read"]  # spawn_agent, run_commands, read_files
    agents = view.agents.tree  # the lead and each helper, by name, role, models and spend
    detail = engine.session(sid)
    rows = {str(agents.set(i, "name")): cells(agents, i) for i in agents.get_children()}
    assert sorted(rows) == ["Lead", "Subagent 1", "Subagent 2"] and len(detail.summary.subagents) == 2
    for n, a in enumerate(detail.summary.subagents, 1):  # numbered in the order their files sort (started)
        assert (rows[f"Subagent {n}"]["role"], rows[f"Subagent {n}"]["cost"]) == ("subagent", money.usd(a.cost_usd))
    assert rows["Lead"]["models"] == "Claude Sonnet 4.5"
    tools = {str(view.tools.tree.set(i, "tool")) for i in view.tools.tree.get_children()}
    assert tools == {"spawn_agent", "run_commands", "read_files", "reply"}
    assert str(view.title.cget("text")).startswith("[c_subagent]")
    assert str(view.fact_values["Session id"].cget("text")) == sid
    press(win, calls, "<Escape>")
    assert win.current is win.day_view and win.day == DAY
    assert tree.selection() == (sid,)


def test_session_figures_tools_and_estimates(open_window, engine):
    sid = BY_LABEL["b_tools_patch"]["session_id"]
    win = open_window(engine, session_id=sid)
    view = win.session_view
    assert win.current is view and win.day == DAY  # back goes to the session's day
    assert column(view.calls.tree, "tools") == ["read, shell", "patch", "shell", "patch", "–"]
    costs = column(view.calls.tree, "cost")
    assert all(c.startswith("≈$") for c in costs), costs  # gpt-4o via openai-compatible: no cost, all estimated
    assert "≈ includes an estimate" in str(view.legend.cget("text"))
    cards = dict((c[0], c[1:]) for c in view.cards.texts())
    s = engine.session(sid).summary
    assert cards["COST"] == (money.usd(s.cost_usd), "all estimated from token counts")
    t = BY_LABEL["b_tools_patch"]["totals"]
    assert cards["TOKENS IN"][1] == f"{t['inputTokens']:,}" and cards["CACHE READ"][1] == f"{t['cacheReadTokens']:,}"
    assert not view.agents.winfo_ismapped()
    assert str(view.fact_values["Status"].cget("text")) == "completed"


def test_copy_session_id_and_open_folder(open_window, engine):
    opened = []
    sid = BY_LABEL["d_team"]["session_id"]
    win = open_window(engine, session_id=sid, opener=opened.append)
    win.session_view.copy.invoke()
    assert win.root.clipboard_get() == sid
    win.session_view.folder.invoke()
    assert opened == [str(CORPUS / "data" / "sessions" / sid)]
    assert "Opened" in str(win.status.cget("text"))


# ---- problems shown in the window ------------------------------------------------------------------


def test_unknown_session_is_a_message_not_a_traceback(open_window, engine):
    win = open_window(engine, session_id="no_such_session")
    assert win.current is win.notice
    assert "Unknown session" in win.notice.text() and "no_such_session" in win.notice.text()
    win.notice.button.invoke()
    assert win.current is win.day_view and win.day == DAY


def test_bad_date_is_a_message(open_window, engine):
    win = open_window(engine, day="2026-13-45")
    assert win.current is win.notice
    assert "is not a date" in win.notice.text()


def test_a_ledger_that_cannot_be_opened_is_a_message(open_window, tmp_path):
    from trayburn.window import open_engine

    db = sqlite3.connect(tmp_path / "ledger.db")
    db.execute("CREATE TABLE t (x)")
    db.execute("PRAGMA user_version=999")
    db.close()
    engine, problem = open_engine(str(tmp_path / "none.toml"), str(tmp_path))
    assert engine is None and "newer trayburn" in problem
    win = open_window(None, problem=problem)
    assert win.current is win.notice
    assert "Cannot open the ledger" in win.notice.text() and "newer trayburn" in win.notice.text()


def test_titles_are_shortened_and_shown_as_text(open_window, engine):
    from trayburn.figures.day import SessionSummary, Tokens

    title = "[exec rm -rf ~] {unbalanced $HOME \\ <b>bold</b>\n" + "x" * 500
    fake = SessionSummary(
        id="odd",
        title=title,
        project="p",
        cwd="/p",
        status="completed",
        state="completed",
        started_at="2026-11-30T09:00:00+00:00",
        ended_at=None,
        models=["m"],
        calls=1,
        tokens=Tokens(10, 2),
        cost_usd=0.5,
        estimated_cost_usd=0.0,
        unpriced_calls=0,
        subagents=[],
        removed=False,
    )
    win = open_window(engine, day=DAY)
    figures = engine.day_figures(DAY, hourly=True)
    win.day_view.show(replace(figures, sessions=(fake,)), DAY, None)
    full = win.day_view.sessions.rows["odd"].values[1]
    assert full == models.clean(title) and full.endswith("…") and len(full) == models.TITLE_CHARS
    shown = cells(win.day_view.sessions.tree, "odd")["title"]  # then cut to the column's width
    assert shown.endswith("…") and full.startswith(shown[:-1]) and len(shown) < len(full)
    assert shown.startswith("[exec rm -rf ~] {unbalanced $HOME \\ <b>")


# ---- look and feel ---------------------------------------------------------------------------------


def test_theme_follows_the_setting_and_gtk_theme(open_window, engine):
    assert theme.resolve("auto", {"GTK_THEME": "Adwaita:dark"}) is theme.DARK
    assert theme.resolve("auto", {"GTK_THEME": "Adwaita"}) is theme.LIGHT
    assert theme.resolve("auto", {}) is theme.LIGHT
    assert theme.resolve("light", {"GTK_THEME": "Adwaita:dark"}) is theme.LIGHT
    win = open_window(engine, day=DAY, env={"GTK_THEME": "Adwaita:dark"})
    assert win.palette is theme.DARK
    from tkinter import ttk

    assert ttk.Style(win.root).lookup("Treeview", "background") == theme.DARK.surface


def test_sizes_follow_tk_scaling(open_window, engine):
    normal = open_window(engine, day=DAY, refresh=False, scaling=96 / 72)
    big = open_window(engine, day=DAY, refresh=False, scaling=192 / 72)
    assert normal.metrics.scale == pytest.approx(1.0, abs=0.01) and big.metrics.scale == pytest.approx(2.0, abs=0.01)
    assert big.metrics.row_height >= 1.8 * normal.metrics.row_height
    assert normal.root.winfo_width() == 1000 and normal.root.winfo_height() == 640
    assert big.root.winfo_width() <= big.root.winfo_screenwidth()  # 2000 px is clamped to the screen


def test_window_icon_is_used_when_present_and_a_broken_one_is_ignored(open_window, engine, tmp_path, monkeypatch):
    from PIL import Image

    from trayburn.window import app

    good, bad = tmp_path / "good.png", tmp_path / "bad.png"
    Image.new("RGBA", (32, 32), (255, 122, 26, 255)).save(good)
    bad.write_bytes(b"not a png")
    monkeypatch.setattr(app, "ICON", good)
    assert open_window(engine, day=DAY, refresh=False)._icon.width() == 32
    monkeypatch.setattr(app, "ICON", bad)
    assert open_window(engine, day=DAY, refresh=False).current is not None  # built all the same
    monkeypatch.setattr(app, "ICON", tmp_path / "missing.png")
    assert not hasattr(open_window(engine, day=DAY, refresh=False), "_icon")


# ---- the real command, as its own process --------------------------------------------------------


@pytest.mark.parametrize(
    "name, argv, title",
    [
        ("summary-day", ["--date", "2026-11-30"], "30 November 2026"),
        ("summary-session", [BY_LABEL["c_subagent"]["session_id"]], "c_subagent"),
        ("summary-week", ["--period", "week", "--date", "2026-11-30"], "Week of 30 November 2026"),  # the tray's
        ("summary-month", ["--period", "month", "--date", "2026-11-30"], "November 2026"),  # week and month lines
    ],
)
def test_trayburn_summary_opens_a_window_that_shows_the_day(display, env, artifacts, name, argv, title):
    for tool, package in (("xdotool", "xdotool"), ("import", "imagemagick")):
        if not shutil.which(tool):
            pytest.skip(f"this test needs {tool}: apt-get install {package}")
    from PIL import Image, ImageStat

    run_env = {k: v for k, v in os.environ.items() if k != "GTK_THEME"} | env | {"DISPLAY": display}
    proc = subprocess.Popen(
        [sys.executable, "-m", "trayburn", "summary", *argv],
        cwd=ROOT,
        env=run_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        window = wait_for(lambda: _titled_window(display, title, proc), f"a visible window titled '…{title}…'")
        shot = artifacts / f"{name}.png"
        previous = None

        def painted():  # the same, non-blank picture twice in a row: drawing has finished
            nonlocal previous
            subprocess.run(["import", "-display", display, "-window", window, str(shot)], check=True)
            with Image.open(shot) as img:
                picture = img.convert("RGB")
            stable = previous is not None and picture.tobytes() == previous.tobytes()
            previous = picture
            return stable and len(picture.getcolors(1 << 16) or range(1 << 16)) > 50

        wait_for(painted, "a finished, non-blank screenshot", every=0.2)
        assert previous.size == (1000, 640)
        assert max(ImageStat.Stat(previous).stddev) > 20  # text and tables, not a flat colour
        subprocess.run(
            ["xdotool", "windowfocus", "--sync", window, "key", "ctrl+w"], check=True, env=run_env, timeout=DEADLINE_S
        )
        assert proc.wait(timeout=DEADLINE_S) == 0
        assert "Traceback" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_without_a_display_it_says_so_and_exits_1(env):
    run_env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")} | env
    done = subprocess.run(
        [sys.executable, "-m", "trayburn", "summary"],
        cwd=ROOT,
        env=run_env,
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
    )
    assert done.returncode == 4  # as the tray's: it cannot be shown here
    assert done.stderr.startswith("trayburn: cannot open a window") and "Traceback" not in done.stderr


def _titled_window(display: str, title: str, proc: subprocess.Popen) -> str | None:
    if proc.poll() is not None:
        pytest.fail(f"trayburn summary exited early ({proc.returncode}): {proc.stderr.read()}")
    env = dict(os.environ, DISPLAY=display)
    found = subprocess.run(
        ["xdotool", "search", "--onlyvisible", "--name", "trayburn"], env=env, capture_output=True, text=True
    ).stdout.split()
    for window in found:
        name = subprocess.run(["xdotool", "getwindowname", window], env=env, capture_output=True, text=True).stdout
        if title in name:
            return window
    return None


def test_the_trays_period_request_shows_that_period_in_the_open_window(display, env):
    """The tray keeps one summary window: its week and month lines write `period KIND` to the open one."""
    if not shutil.which("xdotool"):
        pytest.skip("this test needs xdotool: apt-get install xdotool")
    from trayburn.figures import periods

    run_env = {k: v for k, v in os.environ.items() if k != "GTK_THEME"} | env | {"DISPLAY": display}
    proc = subprocess.Popen(
        [sys.executable, "-m", "trayburn", "summary", "--date", "2026-11-30"],
        cwd=ROOT,
        env=run_env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: _titled_window(display, "30 November 2026", proc), "the day's window")
        for kind in ("month", "week"):
            assert proc.stdin is not None
            proc.stdin.write(f"period {kind}\n")
            proc.stdin.flush()
            label = periods.of_kind(kind, date.today()).label()
            wait_for(lambda label=label: _titled_window(display, label, proc), f"the window titled '…{label}…'")
    finally:
        proc.kill()
        proc.wait()


def test_ctrl_a_selects_every_row_ctrl_c_copies_them_as_text_and_escape_closes(open_window, engine):
    win = open_window(engine, day=DAY)
    table = win.day_view.sessions
    press(win, table.tree, "<Control-a>")
    assert set(table.tree.selection()) == set(table.order()) and len(table.order()) == len(EXPECTED["sessions"])
    press(win, table.tree, "<Control-c>")
    lines = win.root.clipboard_get().splitlines()
    assert lines[0].split("\t") == [c.heading for c in table.columns]
    assert len(lines) == 1 + len(table.order())
    titles = {line.split("\t")[[c.key for c in table.columns].index("title")] for line in lines[1:]}
    assert titles == {
        str(table.rows[iid].values[[c.key for c in table.columns].index("title")]) for iid in table.order()
    }
    assert "Copied" in str(win.status.cget("text"))
    table.tree.selection_set(table.order()[0])
    press(win, table.tree, "<Return>")
    assert win.current is win.session_view
    press(win, win.session_view.calls.tree, "<Escape>")  # in a session: back to the day
    assert win.current is win.day_view and win.root.winfo_exists()
    press(win, table.tree, "<Escape>")  # nothing to go back to: the window closes
    with pytest.raises(tk.TclError):
        win.root.winfo_exists()


@pytest.mark.parametrize("share, level", [(0.52, "ok"), (0.86, "warn"), (2.07, "over"), (1033.0, "over")])
def test_the_budget_bar_is_coloured_by_level_and_a_huge_share_reads_over_10x(open_window, env, tmp_path, share, level):
    from tkinter import ttk

    day_cost = Engine(env=env).day(DAY).cost_usd
    config = tmp_path / "settings.toml"
    config.write_text(f"daily_budget = {day_cost / share!r}\n")
    engine = Engine(env={**env, "TRAYBURN_CONFIG": str(config)})
    try:
        win = open_window(engine, day=DAY)
        bar = win.day_view.budget
        assert bar.level == level and str(bar.cget("style")) == bar.LEVELS[level]
        colour = ttk.Style(win.root).lookup(bar.LEVELS[level], "background")
        wanted = theme.budget_styles(win.palette)[bar.LEVELS[level]]
        assert colour == wanted and (level == "ok") == (colour == win.palette.muted)
        note = " ".join(t for card in win.day_view.cards.texts() for t in card)
        wanted_note = "(over\u00a010×)" if share > 10 else f"({round(share * 100)}\u00a0%)"
        assert wanted_note in note, note
    finally:
        engine.close()
