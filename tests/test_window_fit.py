"""No clipped text, at 96 dpi and at 192 (HiDPI on X11 as GNOME, KDE and Xfce set 200 %: Xft.dpi 192 on a 96-dpi
X server). Every label and button of the summary window, in the day, week and month views, at the window's default
size and at its minimum size, asks for no more width than it was given (Tk's requested against allocated width: a
label that asks for more is cut). At 192 dpi the layout scales with the fonts: Tk's scaling, the metrics and the
window's size double (they stayed at 96 and text was cut)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

tk = pytest.importorskip("tkinter", reason="the summary window needs tkinter (apt-get install python3-tk)")
from tkinter import ttk  # noqa: E402

from helpers.window_harness import DAY, _start_xvfb, display, env, settle, wait_for  # noqa: E402, F401  (fixtures)

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
    """Table headings and totals lines whose text is wider than its column (Tk cuts them mid-letter:
    "Sessior"): each must fit whole or end in "…" within its column. (The rows are cut by an estimate of the
    letters a column holds, which `test_at_the_minimum_size_figures_stay_whole_and_titles_end_in_an_ellipsis`
    checks; a title of capitals can overrun it by a pixel.)"""
    found = []
    for table in (w for w in walk(win.root) if isinstance(w, Table) and w.winfo_ismapped()):
        heading = style_font(table, "Treeview.Heading", "TkDefaultFont")
        totals = style_font(table, "Totals.Treeview", "TkDefaultFont")
        padding = round(
            table.winfo_fpixels(str(table.tk.splitlist(ttk.Style(table).lookup("Treeview.Heading", "padding"))[0]))
        )
        for c in table.columns:
            width = int(table.tree.column(c.key, "width"))
            texts = [(heading, str(table.tree.heading(c.key, "text")), width - 2 * padding)]
            if table.totals is not None:
                texts.append((totals, str(table.totals.set("total", c.key)), width))
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


def every_view_at_both_sizes(win) -> dict[str, list]:
    found = {}
    for size in ("default", "minimum"):
        if size == "minimum":
            w, h = win.root.minsize()
            win.root.geometry(f"{w}x{h}")
            wait_for(lambda w=w: (settle(win.root), win.root.winfo_width() == w)[1], "the minimum size")
        for kind in ("day", "week", "month"):
            win.show_kind(kind)
            win._idle_status()  # the footer: "Updated … · refreshes every 30 s (F5 now) · ←/→ change the day"
            found[f"{kind} at {size} size"] = clipped(win) + cut_cells(win)
            win.say("Exported 1,234 calls to ~/Documents/trayburn-2026-11-30-to-2026-12-06.csv")  # a long status line
            found[f"{kind} at {size} size, a message"] = clipped(win)
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


def test_gdk_scale_and_gdk_dpi_scale_say_the_dpi_too(display):
    root = tk.Tk(screenName=display, className="trayburn")
    try:
        assert theme.desktop_dpi(root, {}) is None  # nothing set: Tk's own (the server's 96)
        assert theme.desktop_dpi(root, {"GDK_SCALE": "2"}) == 192
        assert theme.desktop_dpi(root, {"GDK_SCALE": "1", "GDK_DPI_SCALE": "1.5"}) == 144
        assert theme.desktop_dpi(root, {"GDK_SCALE": "two"}) is None
    finally:
        root.destroy()
