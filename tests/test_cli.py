"""The command line through cli.main(argv): JSON that parses, one-line errors with their exit
codes, and doctor's verdicts. The environment points only inside tmp_path."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time

import pytest
from helpers.corpus import (  # noqa: F401
    CORPUS,
    assistant,
    copy_corpus,
    expected,
    expected_sessions,
    isolated_env,
    make_session,
    ms,
    sessions_of,
    set_tz,
)

from trayburn import __version__, cli
from trayburn.cli import build_parser, command_of
from trayburn.errors import Exit
from trayburn.ledger import SCHEMA_VERSION

DATE = "2026-11-30"
SUBAGENTS = "1796026750424_j6crs"


@pytest.fixture
def env(tmp_path, monkeypatch, set_tz):
    """No Cline at all: HOME is an empty folder; settings and state in tmp_path."""
    set_tz("UTC")
    for var in ("CLINE_DIR", "CLINE_DATA_DIR", "CLINE_SESSION_DATA_DIR"):
        monkeypatch.delenv(var, raising=False)
    values = isolated_env(tmp_path)
    for k, v in values.items():
        monkeypatch.setenv(k, v)
    return values


@pytest.fixture
def cline(env, tmp_path, monkeypatch):
    root = copy_corpus(tmp_path / "cline")
    monkeypatch.setenv("CLINE_DIR", str(root))
    return root


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv):
    code, out, err = run(capsys, *argv, "--json")
    return code, json.loads(out), err


# ---- every command's JSON --------------------------------------------------------------------------------


def test_today_json(cline, capsys):
    code, out, err = run_json(capsys, "today", "--date", DATE)
    assert (code, err) == (0, "")
    assert out["calls"] == expected()["totals"]["calls"]


def test_json_before_the_command_counts(cline, capsys, tmp_path):
    code, out, _ = run(capsys, "--json", "today", "--date", DATE)
    assert code == 0 and json.loads(out)["date"] == DATE
    other = tmp_path / "other.toml"
    other.write_text('theme = "dark"\n')
    code, out, _ = run(capsys, "--config", str(other), "config", "show", "--json")
    assert json.loads(out)["settings"]["theme"] == "dark"


def test_sessions_json(cline, capsys):
    code, out, _ = run_json(capsys, "sessions", "--since", DATE, "--until", DATE)
    assert code == 0
    assert {s["id"] for s in out} == set(expected_sessions())
    row = next(s for s in out if s["id"] == SUBAGENTS)
    assert row["calls"] == expected_sessions()[SUBAGENTS]["totals"]["calls"]
    assert [a["kind"] for a in row["subagents"]] == ["subagent", "subagent"]
    assert {
        "id",
        "title",
        "status",
        "state",
        "started_at",
        "models",
        "calls",
        "tokens",
        "cost_usd",
        "estimated_cost_usd",
        "unpriced_calls",
        "subagents",
        "removed",
    } <= set(row)
    assert run_json(capsys, "sessions", "--all")[1] == out
    assert run_json(capsys, "sessions", "--since", "2026-12-01", "--until", "2026-12-02")[1] == []


def test_sessions_text_lists_every_session(cline, capsys):
    code, out, _ = run(capsys, "sessions", "--all")
    assert code == 0 and all(sid in out for sid in expected_sessions())


def test_session_json_and_text(cline, capsys):
    code, out, _ = run_json(capsys, "session", SUBAGENTS)
    want = expected_sessions()[SUBAGENTS]["totals"]
    assert code == 0 and out["id"] == SUBAGENTS and out["calls"] == want["calls"]
    assert len(out["calls_detail"]) == want["calls"]
    assert sum(c["tokens"]["input"] for c in out["calls_detail"]) == want["inputTokens"]
    assert sum(c["cost_usd"] for c in out["calls_detail"]) == pytest.approx(want["cost"], abs=1e-8)
    code, text, _ = run(capsys, "session", SUBAGENTS)
    assert code == 0 and "subagent" in text


def test_doctor_json_ok(cline, capsys):
    code, out, _ = run_json(capsys, "doctor")
    assert code == 0 and out["ok"] is True
    assert out["verdict"].startswith("OK") and out["sessions"] == expected()["session_count"]
    assert [lv["name"] for lv in out["levels"]] == ["cline_dir", "data_dir", "sessions_dir"]
    assert out["levels"][0]["source"] == "CLINE_DIR" and out["problems"] == []


def test_config_json(env, capsys):
    assert run_json(capsys, "config", "path")[1] == {"path": env["TRAYBURN_CONFIG"]}
    assert run_json(capsys, "config", "set", "theme", "dark")[1]["ok"] is True
    assert run_json(capsys, "config", "show")[1]["settings"]["theme"] == "dark"


# ---- errors: one line on stderr, non-zero exit ---------------------------------------------------------


def one_line_error(code, out, err, want_code):
    assert code == want_code and out == ""
    assert err.startswith("trayburn: ") and err.count("\n") == 1, err


def test_unknown_session_id(cline, capsys):
    one_line_error(*run(capsys, "session", "1796000000000_nopee"), Exit.NOT_FOUND)


@pytest.mark.parametrize(
    "argv",
    [
        ["today", "--date", "2026-13-01"],
        ["today", "--date", "someday"],
        ["today", "--date", "last-week"],  # more than a day
        ["sessions", "--since", "30/11/2026"],
        ["today", "--bogus"],
        ["bogus"],
        ["config", "explode"],
    ],
)
def test_usage_errors(cline, capsys, argv):
    one_line_error(*run(capsys, *argv), 2)


def test_until_before_since(cline, capsys):
    one_line_error(*run(capsys, "sessions", "--since", "2026-11-30", "--until", "2026-11-01"), Exit.USAGE)


def test_newer_ledger_is_a_one_line_error(cline, env, capsys):
    assert run(capsys, "today")[0] == 0
    db = sqlite3.connect(f"{env['TRAYBURN_STATE_DIR']}/ledger.db")
    db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 5}")
    db.commit()
    db.close()
    code, out, err = run(capsys, "today")
    one_line_error(code, out, err, Exit.LEDGER)
    assert "newer trayburn" in err


def test_rebuilt_ledger_notice_on_stderr(cline, env, capsys):
    assert run(capsys, "today")[0] == 0
    state = cline.parent / "state"
    for extra in ("ledger.db-wal", "ledger.db-shm"):  # as after a clean exit
        (state / extra).unlink(missing_ok=True)
    (state / "ledger.db").write_bytes(b"garbage" * 1000)
    code, out, err = run_json(capsys, "today", "--date", DATE)
    assert code == 0 and out["calls"] == expected()["totals"]["calls"]
    assert "rebuilt" in err


def test_help_and_version_return(capsys):
    assert cli.main(["--help"]) == 0
    assert cli.main(["--version"]) == 0
    assert "trayburn" in capsys.readouterr().out


# ---- doctor's verdicts ------------------------------------------------------------------------------------


def test_doctor_kinds_and_their_details(env, capsys, monkeypatch, tmp_path):
    assert run_json(capsys, "doctor")[1]["kind"] == "not_installed"
    monkeypatch.setenv("CLINE_DIR", str(tmp_path / "missing"))
    out = run_json(capsys, "doctor")[1]
    assert (out["kind"], out["problem_level"]) == ("override_missing", "cline_dir")
    (tmp_path / "missing" / "data" / "sessions").mkdir(parents=True)
    assert run_json(capsys, "doctor")[1]["kind"] == "no_sessions"
    (tmp_path / "settings.toml").write_text("theme = \n")
    code, out, _ = run_json(capsys, "doctor")
    assert code == Exit.PROBLEMS and out["kind"] == "settings_broken"
    assert out["config"]["problem"]["kind"] == "not_toml" and out["config"]["problem"]["line"] == 1
    code, text, _ = run(capsys, "doctor")
    assert "problem (line 1):" in text and "To fix:" in text.splitlines()[-1]


def test_doctor_cline_not_installed(env, capsys):
    code, out, _ = run_json(capsys, "doctor")
    assert code == 1 and out["ok"] is False
    assert "not installed" in out["verdict"] and env["HOME"] in out["verdict"]
    code, text, _ = run(capsys, "doctor")
    assert code == 1 and "not installed" in text.splitlines()[-1]


def test_doctor_variable_pointing_nowhere(env, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("CLINE_DIR", str(tmp_path / "missing"))
    code, out, _ = run_json(capsys, "doctor")
    assert code == 1 and "CLINE_DIR" in out["verdict"] and str(tmp_path / "missing") in out["verdict"]


def test_doctor_setting_pointing_nowhere(env, capsys, tmp_path):
    (tmp_path / "settings.toml").write_text(f'sessions_dir = "{tmp_path / "gone"}"\n')
    code, out, _ = run_json(capsys, "doctor")
    assert code == 1
    assert "sessions_dir" in out["verdict"] and str(tmp_path / "settings.toml") in out["verdict"]
    assert out["levels"][2]["origin"] == "settings"


def test_doctor_ignores_an_override_that_nothing_uses(cline, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("CLINE_DIR", str(tmp_path / "missing"))  # root points nowhere, but...
    monkeypatch.setenv("CLINE_SESSION_DATA_DIR", str(sessions_of(cline)))  # ...sessions are set on their own
    code, out, _ = run_json(capsys, "doctor")
    assert code == 0 and out["ok"] and out["sessions"] == expected()["session_count"]


def test_doctor_no_sessions_yet(env, capsys, monkeypatch, tmp_path):
    root = tmp_path / "fresh"
    root.mkdir()
    monkeypatch.setenv("CLINE_DIR", str(root))
    code, out, _ = run_json(capsys, "doctor")
    assert code == 1 and "has not recorded a session" in out["verdict"]
    sessions_of(root).mkdir(parents=True)
    code, out, _ = run_json(capsys, "doctor")
    assert code == 1 and "holds no sessions" in out["verdict"]
    make_session(sessions_of(root), "1796020000000_first", "2026-11-30T08:00:00.000Z", [])
    code, out, _ = run(capsys, "doctor")  # the first session: "1 session", not "1 sessions"
    assert code == 0 and out.rstrip().splitlines()[-1] == f"OK: 1 session in {sessions_of(root)}"


def test_doctor_lists_each_problem_and_is_not_ok_while_one_lasts(cline, capsys):
    bad = sessions_of(cline) / SUBAGENTS / "agent_1796026750900_broken.messages.json"
    bad.write_bytes(b'{"messages": [')
    code, out, _ = run_json(capsys, "doctor")  # just written: listed as being written, not a problem
    assert code == 0 and out["ok"] and out["problems"] == []
    assert [p["path"] for p in out["being_written"]] == [str(bad)]
    assert "mid-write" in out["being_written"][0]["reason"]
    old = time.time() - 120
    os.utime(bad, (old, old))  # broken for two minutes: an unreadable file
    code, out, _ = run_json(capsys, "doctor")
    assert [p["path"] for p in out["problems"]] == [str(bad)] and out["being_written"] == []
    assert (code, out["kind"], out["ok"]) == (Exit.PROBLEMS, "file_problems", False)
    assert out["problems"][0]["reason"]
    code, text, _ = run(capsys, "doctor")
    assert "Unreadable files (1)" in text and str(bad) in text
    assert "OK" not in text.splitlines()[-1]
    bad.unlink()  # gone: nothing wrong any more
    code, out, _ = run_json(capsys, "doctor")
    assert (code, out["kind"], out["problems"]) == (0, "ok", [])


def test_doctor_reports_a_broken_settings_file(cline, capsys, tmp_path):
    (tmp_path / "settings.toml").write_text("theme = \n")
    code, out, _ = run_json(capsys, "doctor")
    assert "line 1" in out["config"]["error"]


def test_state_folder_that_cannot_be_made_is_a_one_line_error(cline, monkeypatch, tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("TRAYBURN_STATE_DIR", str(blocker / "state"))
    one_line_error(*run(capsys, "today"), Exit.CANT_WRITE)


@pytest.mark.parametrize(
    ("argv", "kind", "code"),
    [
        (["session", "1796000000000_nopee"], "not_found", 4),
        (["today", "--date", "someday"], "usage", 2),
        (["sessions", "--since", "2026-11-30", "--until", "2026-11-01"], "usage", 2),
    ],
)
def test_json_errors_are_one_object_on_stderr(cline, capsys, argv, kind, code):
    got, out, err = run(capsys, *argv, "--json")
    assert got == code and out == "" and err.count("\n") == 1
    doc = json.loads(err)
    assert doc == {"error": kind, "message": doc["message"], "exit_code": code, "version": __version__}
    assert doc["message"] and not doc["message"].startswith("trayburn:")


def test_doctor_json_names_the_kind(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CLINE_SESSION_DATA_DIR", str(tmp_path / "a-file"))
    (tmp_path / "a-file").write_text("not a folder")
    code, out, _ = run_json(capsys, "doctor")
    assert code == Exit.PROBLEMS and out["kind"] == "sessions_not_a_folder" and out["ok"] is False


def test_text_output(cline, capsys):
    code, out, _ = run(capsys, "today", "--date", DATE)
    assert code == 0 and out.startswith(f"{DATE} (UTC): $") and f"{expected()['totals']['calls']} calls" in out
    code, out, _ = run(capsys, "doctor")
    assert code == 0 and out.rstrip().splitlines()[-1].startswith("OK:")


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["today"], "today"),
        (["--json", "today", "--date", "2026-11-30"], "today"),
        (["--config", "today", "sessions"], "sessions"),  # a settings file named like a command
        (["--state-dir=/tmp/s", "sessions", "--all"], "sessions"),
        (["report", "--by", "project", "--since", "7d"], "report"),
        (["export", "-o", "out.csv", "--format", "json"], "export"),
        (["session", "1796023651231_hi7ti", "--json"], "session"),
        (["prices", "z-ai/glm-4.6", "--provider", "openrouter"], "prices"),
        (["config", "set", "daily_budget", "20"], "config"),
        (["summary", "--period", "week"], "summary"),
        ([], None),
        (["--json"], None),
    ],
)
def test_a_command_parsed_with_its_grammar_alone_is_parsed_as_by_the_whole(argv, command):
    """`main` builds only the named command's parser (each command's help costs start-up time)."""
    assert command_of(argv) == command
    assert build_parser(only=command).parse_args(argv) == build_parser().parse_args(argv)


@pytest.mark.parametrize("argv", [["--help"], ["-h", "today"], ["--version"], ["bogus"], ["-x", "today"]])
def test_help_version_and_errors_get_the_whole_grammar(argv):
    assert command_of(argv) is None


# ---- found by QA ------------------------------------------------------------------------------------------


def trayburn_process(tmp_path, *argv: str, **extra: str) -> subprocess.CompletedProcess:
    """A whole `trayburn` process, as a person runs it: no pytest logging handler on the root logger, so
    a warning logged by the engine reaches stderr only the way the command line puts it there."""
    env = {**os.environ, **isolated_env(tmp_path, CLINE_DIR=str(CORPUS), **extra)}
    cmd = [sys.executable, "-m", "trayburn", *argv]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)


def test_a_settings_warning_is_said_on_stderr_as_trayburn_says_things(tmp_path):
    (tmp_path / "settings.toml").write_text("refresh_seconds = 2\n", encoding="utf-8")
    text = trayburn_process(tmp_path, "today", "--date", DATE)
    assert text.returncode == 0, text.stderr
    assert all(line.startswith("trayburn: ") for line in text.stderr.splitlines()), text.stderr
    as_json = trayburn_process(tmp_path, "today", "--date", DATE, "--json")
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["calls"] == expected()["totals"]["calls"]
    for line in as_json.stderr.splitlines():  # with --json, stderr holds JSON objects only
        assert isinstance(json.loads(line), dict), as_json.stderr


def test_export_with_json_writes_json(cline, capsys):
    code, out, err = run(capsys, "export", "--since", DATE, "--until", DATE, "--json")
    assert code == 0, err
    assert len(json.loads(out)) == expected()["totals"]["calls"]


def test_a_one_call_session_says_1_call(cline, capsys):
    one = next(s for s in expected()["sessions"] if s["totals"]["calls"] == 1)
    code, out, _ = run(capsys, "session", one["session_id"])
    assert code == 0 and "1 call," in out and "1 calls" not in out


def _columns(line: str) -> int:
    """Terminal columns a line takes: East Asian wide and full-width characters (and emoji) take two."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line)


def test_a_wide_title_keeps_the_sessions_table_aligned(env, capsys, monkeypatch, tmp_path):
    root = tmp_path / "wide"
    monkeypatch.setenv("CLINE_DIR", str(root))
    start = "2026-11-30T08:00:00.000Z"
    for sid, title in (("1796020000000_latin", "plain title"), ("1796020000001_cjkwd", "日本語のタイトル 🔥")):
        msgs = [assistant(f"msg_{sid[-5:]}", ms(start), 1000, 10, cost=0.01)]
        make_session(sessions_of(root), sid, start, msgs, metadata={"title": title})
    code, out, err = run(capsys, "sessions", "--since", DATE)
    assert code == 0, err
    rows = [line for line in out.splitlines() if "_latin" in line or "_cjkwd" in line]
    assert len(rows) == 2 and len({_columns(row[: row.index("17960")]) for row in rows}) == 1, out  # ids line up


def test_a_session_over_several_days_dates_its_calls(env, capsys, monkeypatch, tmp_path):
    root = tmp_path / "days"
    monkeypatch.setenv("CLINE_DIR", str(root))
    sid = "1796020000000_resum"
    msgs = [
        assistant("msg_day00001", ms("2026-11-28T10:00:00Z"), 1000, 10, cost=0.01),
        assistant("msg_day00002", ms("2026-11-30T10:00:00Z"), 1000, 10, cost=0.01),
    ]
    make_session(sessions_of(root), sid, "2026-11-28T09:59:00.000Z", msgs)
    code, out, err = run(capsys, "session", sid)
    assert code == 0, err
    assert "2026-11-28" in out.split("time")[-1] and "2026-11-30" in out.split("time")[-1], out


def test_today_and_sessions_take_the_day_words_report_takes(cline, capsys):
    """`today --date yesterday` is the day before, `sessions --since 7d` the last seven days (QA: only
    YYYY-MM-DD was taken there, while report and export took the words)."""
    from datetime import date, timedelta

    yesterday = (date.today() - timedelta(days=1)).isoformat()
    assert (
        run(capsys, "today", "--date", "yesterday", "--json")[1]
        == run(capsys, "today", "--date", yesterday, "--json")[1]
    )
    week_ago = (date.today() - timedelta(days=6)).isoformat()
    words = run(capsys, "sessions", "--since", "7d", "--json")
    dates = run(capsys, "sessions", "--since", week_ago, "--until", "today", "--json")
    assert words[0] == 0 and words[1] == dates[1]
    code, _, err = run(capsys, "today", "--date", "week")
    assert code == Exit.USAGE and "more than a day" in err


def test_an_export_never_overwrites_trayburn_s_own_files(cline, capsys, tmp_path):
    state = tmp_path / "state"
    assert run(capsys, "today", "--state-dir", str(state))[0] == 0
    ledger = state / "ledger.db"
    before = ledger.read_bytes()
    link = tmp_path / "innocent.csv"
    link.symlink_to(ledger)
    for target in (ledger, link):
        code, _, err = run(capsys, "export", "--state-dir", str(state), "-o", str(target))
        assert code == Exit.CANT_WRITE and "own folder" in err, err
    assert ledger.read_bytes() == before


def test_relative_folders_are_read_from_where_trayburn_started_and_given_on_absolute(
    cline, capsys, monkeypatch, tmp_path
):
    """QA: a relative CLINE_DIR was kept relative; the tray's children run in the home folder and would look
    elsewhere. It is made absolute against the folder trayburn was started in, for this process and its
    children alike."""
    monkeypatch.chdir(cline.parent)
    monkeypatch.setenv("CLINE_DIR", cline.name)
    code, doc, err = run_json(capsys, "today", "--date", DATE)
    assert code == 0 and doc["calls"] == expected()["totals"]["calls"], err
    assert os.environ["CLINE_DIR"] == str(cline)


def test_prices_of_an_empty_model_id_is_a_usage_error(cline, capsys):
    code, out, err = run(capsys, "prices", " ")
    assert code == Exit.USAGE and "cannot be empty" in err and out == ""


def test_prices_says_which_half_of_a_settings_price_is_missing(cline, capsys):
    assert run(capsys, "config", "set", "prices.my-model.input", "1.0")[0] == 0
    code, doc, _ = run_json(capsys, "prices", "my-model")
    assert code == 0 and doc[0]["priced"] is False and doc[0]["missing"] == ["output"]
    code, out, _ = run(capsys, "prices", "my-model")
    assert "gives its input price but not its output price" in out


def test_json_outputs_carry_no_terminal_controls(env, tmp_path, monkeypatch, capsys):
    """A title with a C1 CSI (U+009B) and a right-to-left override (U+202E): cleaned in every JSON output, as in
    the text ones (the control figure, its cost, stays exact)."""
    sessions = tmp_path / "cline" / "data" / "sessions"
    sid = "1796026733097_ctrl"
    make_session(
        sessions, sid, "2026-11-30T08:00:00.000Z", [assistant("m1", ms("2026-11-30T08:00:01.000Z"), cost=0.25)],
        metadata={"title": "evil\u009b2J\u202etxt.exe"}, model="gpt\u202e-4o",
    )  # fmt: skip
    monkeypatch.setenv("CLINE_DIR", str(tmp_path / "cline"))
    for argv in (["today", "--date", DATE], ["sessions", "--all"], ["doctor"]):
        code, out, err = run(capsys, *argv, "--json")
        assert "\u009b" not in out and "\u202e" not in out and "\\u202e" not in out and "\\u009b" not in out, argv
        assert code == 0, err
    code, out, err = run_json(capsys, "sessions", "--all")
    assert out[0]["title"] == "evil2Jtxt.exe" and out[0]["cost_usd"] == 0.25


def test_a_report_by_day_over_eight_thousand_years_is_bounded(cline, capsys):
    """1970 to 9998 by day (2.9 million days, which ran past 300 s and 995 MB): cut to the days that hold calls,
    said, every call in it; by month too."""
    code, out, err = run_json(capsys, "report", "--by", "day", "--since", "1970-01-01", "--until", "9998-12-31")
    assert code == 0 and out["total"]["calls"] == expected()["totals"]["calls"]
    assert len(out["rows"]) <= 2 and "the days that hold calls" in err
    code, out, err = run(capsys, "report", "--by", "month", "--since", "1970-01-01", "--until", "9998-12-31")
    assert code == 0  # 96,000 months: bounded too (the months that hold calls)


def test_today_with_no_data_found_says_why_and_points_to_the_demo(tmp_path):
    """A newcomer's first `trayburn today` before Cline ever ran printed "$0.00 over 0 calls" and nothing else:
    it now says what doctor says (no Cline folder) and names the demo; the control: a day with no call on a
    machine that holds sessions says nothing more."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLINE_", "TRAYBURN_", "XDG_"))}
    env["HOME"] = str(tmp_path / "home")
    argv = [sys.executable, "-m", "trayburn", "today", "--state-dir", str(tmp_path / "st")]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "The Cline CLI is not installed" in done.stdout and "`trayburn demo`" in done.stdout, done.stdout
    control = subprocess.run([*argv, "--date", "2020-01-01"], capture_output=True, text=True, env=env, timeout=60)
    assert "trayburn demo" in control.stdout  # still no data at all: said for any day
    held = tmp_path / "held"
    copy_corpus(held)
    env["CLINE_DIR"] = str(held)
    quiet = subprocess.run([*argv[:-2], "--state-dir", str(tmp_path / "st2"), "--date", "2020-01-01"],
                           capture_output=True, text=True, env=env, timeout=60)  # fmt: skip
    assert quiet.returncode == 0 and "0 calls" in quiet.stdout and "trayburn demo" not in quiet.stdout, quiet.stdout
