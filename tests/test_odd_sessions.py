"""Odd sessions beside the real recording, through the command line: every command still answers,
the recorded sessions are all still counted, JSON is strict and the terminal gets no escapes.
Real files, a real ledger, cli.main as a person runs it."""

from __future__ import annotations

import json
import math
import os

import pytest
from helpers.corpus import assistant, copy_corpus, expected, make_session, ms, sessions_of, set_tz, user  # noqa: F401

from trayburn import cli

DATE = "2026-11-30"
START = "2026-11-30T08:30:00.000Z"
EVIL = "\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2J\x1b[31mred\x9b1m\r\u202eevil"  # OSC 52, clear, CSI, C1, CR, RLO
ODD, BAD_START = "1796027400000_oddly", "1796027460000_nostr"


def strict(text: str):
    """json.loads that refuses NaN and Infinity, as any strict JSON reader does."""
    return json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in JSON output"))


@pytest.fixture
def odd_cline(tmp_path, monkeypatch):
    """The recording plus two hand-made sessions: one with every oddity a file can carry, one whose
    start local time cannot show. Returns the number of calls they add."""
    root = copy_corpus(tmp_path / "cline")
    sessions = sessions_of(root)
    t = ms(START)
    make_session(
        sessions,
        ODD,
        START,
        [
            user("u1", t),
            assistant("msg_\ud83d", t + 1000, cost=1e308, model="gpt-4o"),
            assistant("msg_\ud83e", t + 2000, cost=1e308, model=f"gpt-4o{EVIL}"),
            assistant("msg_far", 300000000000, cost=0.5, tools=(f"run{EVIL}", "read_files")),
            assistant("msg_year1", "0001-01-01T00:00:00+14:00", cost=0.25),
            assistant("msg_fine", t + 3000, cost=0.125),  # the control inside the odd session
        ],
        metadata={"title": f"title {EVIL} \ud83d end"},
        cwd=f"/work/{EVIL}",
    )
    make_session(sessions, BAD_START, "0001-01-01T00:00:00+14:00", [assistant("msg_nostart", 253402300800, cost=1.0)])
    for var in ("CLINE_DATA_DIR", "CLINE_SESSION_DATA_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CLINE_DIR", str(root))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("TRAYBURN_CONFIG", str(tmp_path / "settings.toml"))
    monkeypatch.setenv("TRAYBURN_STATE_DIR", str(tmp_path / "state"))
    return 6


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def no_escapes(text: str) -> None:
    for bad in ("\x1b", "\x07", "\x9b", "\r", "\u202e"):
        assert bad not in text, f"{bad!r} reached the terminal"


@pytest.mark.parametrize("zone", ["UTC", "America/New_York", "Pacific/Kiritimati"])
def test_every_command_answers_and_every_recorded_call_counts(odd_cline, capsys, set_tz, zone):
    set_tz(zone)
    code, out, err = run(capsys, "today", "--date", DATE, "--json")
    assert (code, err) == (0, "")
    day = strict(out)
    assert day["calls"] == expected()["totals"]["calls"] + odd_cline
    assert math.isfinite(day["cost_usd"]) and day["cost_usd"] < 100  # 1e308 twice was Infinity
    code, out, err = run(capsys, "sessions", "--all", "--json")
    assert (code, err) == (0, "")
    rows = {s["id"]: s for s in strict(out)}
    recorded = {s["session_id"]: s for s in expected()["sessions"]}
    assert set(rows) == {*recorded, ODD, BAD_START}
    for sid, want in recorded.items():
        assert rows[sid]["calls"] == want["totals"]["calls"], sid  # the controls: every recorded session
    assert rows[ODD]["calls"] == 5 and rows[BAD_START]["calls"] == 1
    # (BAD_START's call is in today's count above: it took the time its session id begins with)


@pytest.mark.parametrize("argv", [["today", "--date", DATE], ["sessions", "--all"], ["session", ODD], ["doctor"]])
def test_text_output_carries_no_terminal_escapes(odd_cline, capsys, set_tz, argv):
    set_tz("America/New_York")
    code, out, err = run(capsys, *argv)
    assert code in (0, 1) and "Traceback" not in err
    no_escapes(out)
    no_escapes(err)
    if argv[0] == "session":
        assert code == 0 and out.startswith("title ]52;c;ZWNobyBwd25lZA==[2J[31mred1m") and "evil \ufffd end\n" in out
        assert "gpt-4o" in out and "evil, read" in out  # tool words: read_files is "read"


@pytest.mark.skipif(os.name != "posix", reason="a file where a folder should be: POSIX paths")
def test_a_sessions_path_that_is_a_file_is_reported_as_such(tmp_path, capsys, monkeypatch, set_tz):
    """The engine (core) reports Health.kind "sessions_not_a_folder"; here: the CLI's verdict names
    the file, and a control (the same run with the real folder) counts every recorded call."""
    set_tz("UTC")
    root = copy_corpus(tmp_path / "cline")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("TRAYBURN_CONFIG", str(tmp_path / "settings.toml"))
    monkeypatch.setenv("TRAYBURN_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("CLINE_DIR", str(root))
    code, out, _ = run(capsys, "today", "--date", DATE, "--json")
    assert code == 0 and strict(out)["calls"] == expected()["totals"]["calls"]
    plain = tmp_path / "sessions-file"
    plain.write_text("not a folder\n")
    monkeypatch.setenv("CLINE_SESSION_DATA_DIR", str(plain))
    code, out, _ = run(capsys, "doctor", "--json")
    health = strict(out)
    assert code == 1 and health["kind"] == "sessions_not_a_folder"
    code, out, _ = run(capsys, "doctor")
    assert "not a folder" in out and "does not exist" not in out
