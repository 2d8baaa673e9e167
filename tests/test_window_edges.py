"""The summary window's last rough edges (issue 33), on a real X display (Xvfb) with the recorded corpus: at its
minimum size the model table shows rows and the hour chart reads; the Range field's error line wraps inside the
window; Ctrl+A in the field selects its text; in a session Ctrl+C copies the id, as the footer says; the period
toggles stand apart at 192 dpi; the legacy WM_NAME is the title in Latin-1, not its UTF-8 bytes."""

from __future__ import annotations

import pytest

tk = pytest.importorskip("tkinter", reason="the summary window needs tkinter (apt-get install python3-tk)")

from helpers.window_harness import DAY, display, engine, env, open_window, press, screenshot, settle, wait_for  # noqa: E402, F401

pytestmark = pytest.mark.desktop


def at_minimum(win) -> None:
    w, h = win.root.minsize()
    win.root.geometry(f"{w}x{h}")
    settle(win.root)
    settle(win.root)


def visible_rows(tree) -> int:
    """Rows Tk has room to draw whole (bbox is empty for a row scrolled or cut out of view)."""
    height = tree.winfo_height()
    return sum(1 for iid in tree.get_children() if (box := tree.bbox(iid)) and box[1] + box[3] <= height)


def test_at_the_minimum_size_the_model_table_shows_rows_and_the_hour_chart_reads(open_window, engine):
    win = open_window(engine)
    at_minimum(win)
    assert (win.root.winfo_width(), win.root.winfo_height()) == (720, 460)
    screenshot(win, "minimum-day")
    assert visible_rows(win.day_view.models.tree) >= 2  # there was none
    assert visible_rows(win.day_view.sessions.tree) >= 1
    assert win.day_view.chart.winfo_height() >= 60  # it was 2-3 px of bars


def test_the_range_fields_error_line_wraps_inside_the_window(open_window, engine):
    win = open_window(engine)
    at_minimum(win)
    win.show_kind("range")
    settle(win.root)
    nav = win.period_view.nav
    nav.text.set("from the first of never until the day after the end of all the weeks and months")
    press(win, nav.entry, "<Return>")
    problem = win.period_view.problem
    assert problem.winfo_ismapped() and str(problem.cget("text")), "no error line"
    screenshot(win, "minimum-range-error")
    right = problem.winfo_rootx() + problem.winfo_width() - win.root.winfo_rootx()
    assert right <= win.root.winfo_width(), (right, win.root.winfo_width())
    assert problem.winfo_reqwidth() <= problem.winfo_width() + 1, (problem.cget("wraplength"), problem.cget("text"))
    assert problem.winfo_height() > 0


def test_ctrl_a_in_the_field_selects_its_text_and_typing_replaces_it(open_window, engine):
    win = open_window(engine)
    entry = win.day_view.nav.entry
    before = entry.get()
    assert before
    press(win, entry, "<Control-a>")
    assert entry.selection_present() and entry.index("sel.first") == 0 and entry.index("sel.last") == len(before)
    press(win, entry, "<KeyPress-x>")
    assert entry.get() == "x"  # the new text replaced the old (it was put in front of it)


def test_in_a_session_ctrl_c_copies_its_id_as_the_footer_says(open_window, engine):
    sid = max(engine.sessions(DAY, DAY), key=lambda s: s.calls).id
    win = open_window(engine, session_id=sid)
    assert "Ctrl+C copies the id" in str(win.status.cget("text"))
    win.session_view.calls.tree.focus_force()
    settle(win.root)
    win.session_view.calls.tree.event_generate("<Control-c>", when="tail")
    settle(win.root)
    assert win.root.clipboard_get() == sid
    win.session_view.calls.select_all()  # rows the person selected: those are copied
    win.session_view.calls.tree.event_generate("<Control-c>", when="tail")
    settle(win.root)
    assert win.root.clipboard_get().count("\n") == len(win.session_view.calls.order()) + 1


def test_the_period_toggles_stand_apart_at_192_dpi(open_window, engine):
    win = open_window(engine, scaling=192 / 72)
    settle(win.root)
    buttons = list(win.day_view.nav.kind_buttons.values())
    edges = [(b.winfo_x(), b.winfo_x() + b.winfo_width()) for b in buttons]
    gaps = [right_x - left[1] for left, (right_x, _) in zip(edges, edges[1:], strict=False)]
    assert min(gaps) >= 4, edges  # 2 px at 96 dpi, doubled
    label_room = [b.winfo_width() - b.winfo_reqwidth() for b in buttons]
    assert min(label_room) >= 0, label_room
    screenshot(win, "toggles-192")


def test_the_legacy_window_name_is_the_title_in_latin1(open_window, engine):
    from Xlib import Xatom
    from Xlib import display as xdisplay

    win = open_window(engine)
    title = win.root.title()
    assert "—" in title  # "trayburn — Monday 30 November 2026"
    connection = xdisplay.Display(win.root.winfo_screen())
    try:
        wrapper = connection.create_resource_object("window", win.root.winfo_id()).query_tree().parent

        def names() -> tuple[int, str, str]:
            win.root.update()
            legacy = wrapper.get_full_property(Xatom.WM_NAME, 0)
            modern = wrapper.get_full_property(connection.intern_atom("_NET_WM_NAME"), 0)
            return legacy.property_type, bytes(legacy.value).decode("latin-1"), bytes(modern.value).decode("utf-8")

        expected = (Xatom.STRING, title.replace("—", "-"), title)
        seen = wait_for(lambda: (found := names()) == expected and found, "WM_NAME rewritten in Latin-1")
    finally:
        connection.close()
    assert seen == expected  # WM_NAME was "trayburn â\x80\x94 …": the UTF-8 bytes typed as Latin-1
