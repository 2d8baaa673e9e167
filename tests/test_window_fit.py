"""No clipped text and no table without rows, at 96 dpi and at 192 (HiDPI on X11 as GNOME, KDE and Xfce set 200 %:
Xft.dpi 192 on a 96-dpi X server). Every label and button of the summary window, in the day, week, month and range
views with each of the period's tabs, and in a session with each of its tabs, at the window's default size and at
its minimum size, asks for no more width than it was given (Tk's requested against allocated width: a label that
asks for more is cut), and no tab of a notebook is squeezed narrower than its text. At the minimum size every table
keeps rows Tk draws whole: under a session's title of three lines, beside its Tool and Agent tabs, under the Range
field's error of three lines. At 192 dpi the layout scales with the fonts: Tk's scaling, the metrics and the
window's size double (they stayed at 96 and text was cut)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

tk = pytest.importorskip("tkinter", reason="the summary window needs tkinter (apt-get install python3-tk)")
from tkinter import ttk  # noqa: E402

from helpers.window_harness import DAY, _start_xvfb, display, env, screenshot, settle, wait_for  # noqa: E402, F401

from trayburn.engine import Engine  # noqa: E402
from trayburn.window import theme  # noqa: E402
from trayburn.window.table import Table  # noqa: E402
from trayburn.window.widgets import style_font  # noqa: E402

_HIDPI: dict[str, str] = {}


@pytest.fixture(scope="module")
def hidpi():
    """A second Xvfb (96 dpi, big enough for a 200 % window), its Xft.dpi set to 192 with xrdb; kept to the
    end of the run (Tk never closes a display it opened)."""
    if not shutil.which("Xvfb") or not shutil.which("xrdb"):
        pytest.skip("needs Xvfb and xrdb (apt-get install xvfb x11-xserver-utils)")
    if "display" not in _HIDPI:
        shown = _start_xvfb("-noreset", screen="2560x1600x24")
        subprocess.run(
            ["xrdb", "-nocpp", "-merge"], input="Xft.dpi: 192\n", text=True, check=True, env={"DISPLAY": shown}
        )
        _HIDPI["display"] = shown
    return _HIDPI["display"]


def open_on(screen: str, env_values) -> tuple:
    from trayburn.window.app import SummaryWindow

    engine = Engine(env=env_values)
    root = tk.Tk(screenName=screen, className="trayburn")
    win = SummaryWindow(root, engine, today=lambda: DAY, env=env_values)
    win.render()
    win.refresh()
    wait_for(lambda: (settle(root), root.winfo_width() > 1)[1], "the window mapped")
    return win, engine


def walk(widget):
    yield widget
    for child in widget.winfo_children():
        yield from walk(child)


def clipped(win) -> list[tuple[str, str, int, int]]:
    """Labels and buttons asking for more width than they were given, or given it beyond the right edge of a
    widget they are in (a card narrower than its note: the label has its width, the card cuts it)."""
    settle(win.root)
    settle(win.root)
    return [
        (str(w), str(w.cget("text")), w.winfo_reqwidth(), min(w.winfo_width(), room(w)))
        for w in walk(win.root)
        if isinstance(w, (ttk.Label, tk.Label, ttk.Button)) and w.winfo_ismapped() and str(w.cget("text"))
        if w.winfo_reqwidth() > min(w.winfo_width(), room(w)) + 1
    ]


def cut_cells(win) -> list[tuple[str, str, int, int]]:
    """Table headings, totals lines and the cells of figures and whole columns whose text is wider than its column
    (Tk cuts them mid-letter: "Sessior", "team_spawn_teamma"): each must fit whole or end in "…" within its column."""
    found = []
    for table in (w for w in walk(win.root) if isinstance(w, Table) and w.winfo_ismapped()):
        heading = style_font(table, "Treeview.Heading", "TkDefaultFont")
        totals = style_font(table, "Totals.Treeview", "TkDefaultFont")
        cell = style_font(table, "Treeview", "TkDefaultFont")
        padding = round(
            table.winfo_fpixels(str(table.tk.splitlist(ttk.Style(table).lookup("Treeview.Heading", "padding"))[0]))
        )
        for c in table.columns:
            width = int(table.tree.column(c.key, "width"))
            texts = [(heading, str(table.tree.heading(c.key, "text")), width - 2 * padding)]
            if table.totals is not None:
                texts.append((totals, str(table.totals.set("total", c.key)), width))
            texts += [(cell, str(table.tree.set(iid, c.key)), width - 4) for iid in table.tree.get_children()]
            found += [(str(table), s, font.measure(s), room) for font, s, room in texts if font.measure(s) > room]
    return found


def room(widget) -> int:
    """The width a widget can show: up to the nearest right edge of the widgets it is in."""
    right = min(a.winfo_rootx() + a.winfo_width() for a in ancestors(widget))
    return right - widget.winfo_rootx()


def ancestors(widget):
    while widget.master is not None:
        widget = widget.master
        yield widget


def squeezed_tabs(win) -> list[tuple[str, str, int, int]]:
    """Notebook tabs drawn narrower than their text (ttk squeezes tabs that do not fit: "Projec", "Too"): each
    tab's width found by asking the notebook which tab is under each pixel of its tab row."""
    found = []
    for tabs in (w for w in walk(win.root) if isinstance(w, ttk.Notebook) and w.winfo_ismapped()):
        font = style_font(tabs, "TNotebook.Tab", "TkDefaultFont")
        y = font.metrics("linespace") // 2 + 2
        widths: dict[int, int] = {}
        for x in range(tabs.winfo_width()):
            try:
                index = tabs.index(f"@{x},{y}")
            except tk.TclError:  # no tab there
                continue
            widths[index] = widths.get(index, 0) + 1
        for index, tab in enumerate(tabs.tabs()):
            text = str(tabs.tab(tab, "text"))
            if tabs.tab(tab, "state") != "hidden" and widths.get(index, 0) < font.measure(text) + 4:
                found.append((str(tabs), text, widths.get(index, 0), font.measure(text)))
    return found


def visible_rows(tree) -> int:
    """Rows Tk has room to draw whole (bbox is empty for a row scrolled or cut out of view)."""
    height = tree.winfo_height()
    return sum(1 for iid in tree.get_children() if (box := tree.bbox(iid)) and box[1] + box[3] <= height)


def tables_shown(win) -> dict[str, tuple[int, int]]:
    """Each table on screen: (rows drawn whole, rows it holds)."""
    return {
        str(t): (visible_rows(t.tree), len(t.tree.get_children()))
        for t in walk(win.root)
        if isinstance(t, Table) and t.winfo_ismapped() and t.tree.winfo_ismapped()
    }


def at_size(win, size: str) -> None:
    w, h = win.root.minsize() if size == "minimum" else (win.metrics.px(1000), win.metrics.px(640))
    win.root.geometry(f"{w}x{h}")
    wait_for(lambda: (settle(win.root), win.root.winfo_width() == w)[1], f"the {size} size")


def each_tab(win, tabs: ttk.Notebook):
    """Select every shown tab of `tabs` in turn, yielding its text."""
    for tab in tabs.tabs():
        if tabs.tab(tab, "state") != "hidden":
            tabs.select(tab)
            settle(win.root)
            yield str(tabs.tab(tab, "text"))
    tabs.select(tabs.tabs()[0])


def every_view(win, look) -> dict[str, object]:
    """`look(win)` in every view: the day; a week, a month and a range with each tab of the period; a session with
    the longest title and one with helpers, with each of its tabs."""
    found: dict[str, object] = {}
    for kind in ("day", "week", "month", "range"):
        win.show_kind(kind)
        win._idle_status()  # the footer: "Updated … · refreshes every 30 s (F5 now) · ←/→ change the day"
        if kind == "day":
            found[kind] = look(win)
            continue
        for tab in each_tab(win, win.period_view.tabs):
            found[f"{kind}, {tab}"] = look(win)
    for label, sid in sessions_to_open(win.engine):
        win.show_session(sid)
        for tab in each_tab(win, win.session_view.where):
            found[f"session {label}, {tab}"] = look(win)
        win.back()
    return found


def sessions_to_open(engine) -> list[tuple[str, str]]:
    day = engine.sessions(DAY, DAY)
    if not day:
        return []
    longest = max(day, key=lambda s: len(s.title))
    helped = next((s for s in day if s.subagents), longest)
    return [("with the longest title", longest.id), ("with helpers", helped.id)]


def cut(win) -> list:
    return clipped(win) + cut_cells(win) + squeezed_tabs(win)


def every_view_at_both_sizes(win) -> dict[str, list]:
    found = {}
    for size in ("default", "minimum"):
        at_size(win, size)
        for view, seen in every_view(win, cut).items():
            found[f"{view} at {size} size"] = seen
        win.show_kind("week")
        win.say("Exported 1,234 calls to ~/Documents/trayburn-2026-11-30-to-2026-12-06.csv")  # a long status line
        found[f"a message at {size} size"] = clipped(win)
    return found


@pytest.fixture
def demo_env(tmp_path):
    """The demo (its footer is the longest: it says it is a demo)."""
    from trayburn import demo

    config = demo.prepare(tmp_path / "demo")
    return {"TRAYBURN_CONFIG": str(config), "TRAYBURN_STATE_DIR": str(tmp_path / "state"), "TZ": "UTC"}


@pytest.fixture
def budget_env(env, tmp_path):
    """The recorded corpus with a daily and a monthly budget: the cost cards then say the spend against the
    budget and, on a second line, the estimate in words."""
    settings = tmp_path / "budgets.toml"
    settings.write_text("daily_budget = 0.4\nmonthly_budget = 0.5\n")
    return env | {"TRAYBURN_CONFIG": str(settings)}


@pytest.mark.parametrize("which", ["recorded corpus", "recorded corpus with budgets", "demo"])
def test_no_label_is_cut_at_the_default_or_minimum_size_at_96_dpi(display, env, budget_env, demo_env, which):
    chosen = {"recorded corpus": env, "recorded corpus with budgets": budget_env, "demo": demo_env}[which]
    win, engine = open_on(display, chosen)
    try:
        assert theme.scale_of(win.root) == pytest.approx(1.0, abs=0.02)
        found = every_view_at_both_sizes(win)
        assert not any(found.values()), found
    finally:
        win.close()
        engine.close()


def test_at_192_dpi_the_layout_doubles_with_the_fonts_and_nothing_is_cut(hidpi, display, env):
    win, engine = open_on(hidpi, env)
    try:
        assert theme.desktop_dpi(win.root, {}) == 192
        assert theme.scale_of(win.root) == pytest.approx(2.0, abs=0.02) and win.metrics.px(100) == 200
        assert win.root.winfo_width() == pytest.approx(2000, rel=0.01)  # 1000 px at 96 dpi
        assert win.root.minsize() == pytest.approx((1440, 920), rel=0.01)  # 720 x 460 at 96 dpi
        found = every_view_at_both_sizes(win)
        assert not any(found.values()), found
    finally:
        win.close()
        engine.close()


THREE_LINES = "from the first of never until the day after the end of all the weeks and the months"


@pytest.mark.parametrize("dpi", [96, 192])
def test_at_the_minimum_size_every_table_keeps_rows(hidpi, display, env, dpi):
    """Two rows drawn whole in every table of a period and of a session (the day's sessions: one at 96 dpi, beside
    its model table's two and its hour chart): a session's title cut to two lines (it took four, and the calls had
    none), its calls beside its Tool and Agent tabs, a period's chart giving way to the tables under an error of
    three lines (they had none)."""
    win, engine = open_on(display if dpi == 96 else hidpi, env)
    try:
        at_size(win, "minimum")
        shown = every_view(win, tables_shown)
        win.show_kind("range")
        win.typed(THREE_LINES)
        problem = win.period_view.problem
        settle(win.root)
        settle(win.root)
        lines = problem.winfo_height() // style_font(problem, "Error.TLabel", "TkDefaultFont").metrics("linespace")
        assert lines >= 3, str(problem.cget("text"))
        shown["range under an error of three lines"] = tables_shown(win)
        screenshot(win, f"minimum-range-error-{dpi}")
        short = {
            f"{view}: {table}": rows
            for view, tables in shown.items()
            for table, (rows, held) in tables.items()
            if rows < min(held, 1 if view == "day" else 2)
        }
        assert short == {}, shown
        longest = dict(sessions_to_open(engine))["with the longest title"]
        win.show_session(longest)
        settle(win.root)
        title = str(win.session_view.title.cget("text"))
        assert title.count("\n") == 1 and title.endswith("…"), title  # two lines, the rest cut
        screenshot(win, f"minimum-session-{dpi}")
    finally:
        win.close()
        engine.close()


def test_gdk_scale_and_gdk_dpi_scale_say_the_dpi_too(display):
    root = tk.Tk(screenName=display, className="trayburn")
    try:
        assert theme.desktop_dpi(root, {}) is None  # nothing set: Tk's own (the server's 96)
        assert theme.desktop_dpi(root, {"GDK_SCALE": "2"}) == 192
        assert theme.desktop_dpi(root, {"GDK_SCALE": "1", "GDK_DPI_SCALE": "1.5"}) == 144
        assert theme.desktop_dpi(root, {"GDK_SCALE": "two"}) is None
    finally:
        root.destroy()
