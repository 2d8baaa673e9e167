"""What a person gives the tray's dialogs: a picked folder recognised by what it holds, a budget typed as money
(or not)."""

from __future__ import annotations

import pytest

from trayburn.tray import dialogs
from trayburn.tray.dialogs import parse_money


# --- which folder was picked ---------------------------------------------------------------------
def test_a_picked_folder_is_recognised_by_what_it_holds(tmp_path):
    cline = tmp_path / "cline"
    session = cline / "data" / "sessions" / "1796026733097_tvgzu"
    session.mkdir(parents=True)
    (session / f"{session.name}.json").write_text("{}")
    assert dialogs.recognise(cline) == "cline_dir"
    assert dialogs.recognise(cline / "data") == "data_dir"
    assert dialogs.recognise(cline / "data" / "sessions") == "sessions_dir"
    assert dialogs.recognise(tmp_path / "elsewhere") is None
    assert dialogs.level_for(cline / "data" / "sessions", "cline_dir") == (
        "sessions_dir",
        f"{cline / 'data' / 'sessions'} is a sessions folder: set as the sessions folder",
    )
    assert dialogs.level_for(cline, "cline_dir") == ("cline_dir", None)
    assert dialogs.level_for(tmp_path, "data_dir") == ("data_dir", None)  # nothing there yet: as asked


# --- a budget typed by a person ------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, value",
    [("20", 20.0), ("$20", 20.0), (" $20.50 ", 20.5), ("1,200", 1200.0), ("$1,200.75", 1200.75), ("0", 0.0)],
)
def test_money_as_typed(text, value):
    assert parse_money(text) == value


@pytest.mark.parametrize("text", ["", "abc", "-5", "20 euros", "1,20", "$", "2.5.1"])
def test_not_money(text):
    assert parse_money(text) is None
