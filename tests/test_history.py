"""History reports and exports, on the real recording and on a hand-made multi-day corpus: every
grouping's rows add up to the period's total and to sums made straight from the files; the export
holds exactly the counted calls and survives a round trip through Python's csv module."""

from __future__ import annotations

import csv
import io
import json
import os
import stat
import threading
from collections import defaultdict
from datetime import date

import pytest
from helpers import history_corpus as hc
from helpers.corpus import (  # noqa: F401
    CORPUS,
    assistant,
    cline_estimate,
    expected,
    isolated_env,
    make_session,
    ms,
    sessions_of,
    set_tz,
)

from trayburn import cli
from trayburn.engine import Engine
from trayburn.errors import Exit
from trayburn.figures import day, export, history, periods
from trayburn.figures.day import totals_between
from trayburn.figures.money import Money
from trayburn.pricing import PriceBook

NOVEMBER = periods.Period(date(2026, 11, 1), date(2026, 11, 30))
REAL_DAY = date(2026, 11, 30)


def estimate(book: PriceBook, c: hc.Expect) -> float:
    """Cline's formula with the PriceBook's unit prices at the call's time (0 for an unknown price)."""
    return cline_estimate(book, c.model, c.input, c.output, c.cache_read, c.cache_write, c.at_ms)


def group_sums(g: history.Group) -> tuple:
    t = g.totals
    return (t.calls, t.tokens.input, t.tokens.output, t.tokens.cache_read, t.tokens.cache_write, t.reported_usd)


def assert_adds_up(r: history.HistoryReport) -> None:
    """Rows add up to the total: counts and tokens exactly, money within float noise."""
    rows = [group_sums(g) for g in r.rows]
    added = tuple(sum(col) for col in zip(*rows, strict=True)) if rows else (0,) * 6
    assert added[:5] == group_sums(r.total)[:5]
    assert added[5] == pytest.approx(r.total.totals.reported_usd, abs=1e-12)
    est = sum(g.totals.estimated_usd for g in r.rows)
    assert est == pytest.approx(r.total.totals.estimated_usd, abs=1e-9)
    assert sum(g.totals.unpriced_calls for g in r.rows) == r.total.totals.unpriced_calls


@pytest.fixture
def made(tmp_path, set_tz):
    set_tz("UTC")
    sessions = tmp_path / "cline" / "data" / "sessions"
    calls = hc.build(sessions)
    engine = Engine(env=isolated_env(tmp_path, CLINE_DIR=str(tmp_path / "cline")))
    engine.refresh()
    yield engine, calls
    engine.close()


# ---- periods -------------------------------------------------------------------------------------


def test_period_words_and_defaults():
    today = date(2026, 12, 3)
    assert periods.named("7d", today) == periods.Period(date(2026, 11, 27), today)
    assert periods.named("yesterday", today) == periods.day_of(date(2026, 12, 2))
    assert periods.named("last-month", today) == periods.month_of(date(2026, 11, 1))
    assert periods.named("month", today).until == date(2026, 12, 31)
    assert periods.between(None, None, today) == periods.Period(date(2026, 12, 1), today)  # this month, to today
    assert periods.between("month", None, today).until == today
    assert periods.between("last-month", "last-month", today) == periods.Period(date(2026, 11, 1), date(2026, 11, 30))
    assert periods.between(None, "last-month", today) == periods.Period(date(2026, 11, 1), date(2026, 11, 30))
    assert periods.between("2026-11-15", None, today) == periods.Period(date(2026, 11, 15), today)
    with pytest.raises(periods.BadPeriod, match="not a date or a period"):
        periods.between("fortnight", None, today)
    with pytest.raises(periods.BadPeriod, match="before"):
        periods.between("2026-12-02", "2026-12-01", today)


def test_weeks_and_months_step_and_cut_into_parts_that_cover_the_period():
    week = periods.week_of(date(2026, 12, 3))
    assert (week.since, week.until) == (date(2026, 11, 30), date(2026, 12, 6))
    assert week.step(-1) == periods.week_of(date(2026, 11, 23))
    assert periods.month_of(date(2026, 1, 9)).step(-1).since == date(2025, 12, 1)
    weeks = periods.cut(NOVEMBER, "week")
    assert weeks[0] == periods.Period(date(2026, 11, 1), date(2026, 11, 1), "week")  # a Sunday: a one-day first week
    assert sum(w.days for w in weeks) == 30 and weeks[-1].until == date(2026, 11, 30)
    assert [periods.part_key(w, "week") for w in weeks[:2]] == ["2026-W44", "2026-W45"]
    assert len(periods.cut(NOVEMBER, "day")) == 30
    assert periods.cut(NOVEMBER, "month") == [periods.Period(NOVEMBER.since, NOVEMBER.until, "month")]


def test_a_dst_day_is_a_local_day(set_tz):
    set_tz("America/New_York")  # 2026-11-01: clocks go back, the day has 25 hours
    start, end = periods.day_of(date(2026, 11, 1)).bounds_ms()
    assert end - start == 25 * 3600 * 1000


# ---- the hand-made corpus: every grouping against the files ---------------------------------------


KEYS = {
    "day": lambda c: c.day,
    "project": lambda c: c.project,
    "source": lambda c: c.source,
    "session": lambda c: c.session,
}


@pytest.mark.parametrize("by", history.BY)
def test_every_grouping_adds_up_to_the_total_and_to_the_files(made, by):
    engine, calls = made
    r = engine.history(NOVEMBER, by)
    assert_adds_up(r)
    total = group_sums(r.total)
    wanted = hc.sums(calls)
    assert total[:5] == wanted[:5]
    assert total[5] == pytest.approx(wanted[5], abs=1e-12)
    assert r.total.totals.cost_usd == pytest.approx(
        wanted[5] + sum(estimate(engine.book, c) for c in calls if c.cost is None), abs=1e-9
    )
    # the engine's own figure for the same span (the tray's week and month lines use it)
    own = totals_between(engine.ledger, engine.book, *NOVEMBER.bounds_ms())
    assert r.total.totals.estimated_usd == pytest.approx(own.estimated_usd, abs=1e-9)
    assert r.total.totals.unpriced_calls == own.unpriced_calls == 1  # my-local-model has no price
    assert r.total.sessions == len({c.session for c in calls})
    if by in KEYS:
        per: dict[str, list] = defaultdict(list)
        for c in calls:
            per[KEYS[by](c)].append(c)
        shown = {g.key: g for g in r.rows if g.totals.calls}
        assert set(shown) == set(per)
        for key, group in per.items():
            assert group_sums(shown[key])[:5] == hc.sums(group)[:5], key
            assert shown[key].totals.reported_usd == pytest.approx(hc.sums(group)[5], abs=1e-12)
            assert shown[key].sessions == len({c.session for c in group})


def test_day_rows_are_every_day_and_a_night_splits_at_midnight(made):
    engine, _ = made
    r = engine.history(NOVEMBER, "day")
    assert [g.key for g in r.rows] == [f"2026-11-{d:02d}" for d in range(1, 31)]
    night = {g.key: g for g in r.rows}
    assert night["2026-11-09"].totals.calls == 1 and night["2026-11-10"].totals.calls == 2
    assert night["2026-11-09"].sessions == night["2026-11-10"].sessions == 1
    assert night["2026-11-09"].cost_usd is None  # only an unpriced call: no cost, never $0


def test_projects_merge_by_folder_name_and_sources_are_named(made):
    engine, _ = made
    projects = {g.key: g for g in engine.history(NOVEMBER, "project").rows}
    assert set(projects) == {"alpha", "beta", "gamma", "delta"}  # beta from its cwd (a Windows path)
    assert projects["alpha"].sessions == 3  # /home/me/code/alpha, /other/place/alpha and the fork
    sources = {g.key: g.sessions for g in engine.history(NOVEMBER, "source").rows}
    assert sources == {"cli": 2, "vscode": 2, "desktop": 1, "jetbrains": 1}
    models = {g.label: g for g in engine.history(NOVEMBER, "model").rows}
    assert models["Claude Sonnet 4.5"].totals.estimated_usd > 0 and models["Claude Sonnet 4.5"].totals.reported_usd == 0


def test_weeks_and_months(made):
    engine, calls = made
    weeks = engine.history(NOVEMBER, "week")
    assert weeks.rows[0].since == weeks.rows[0].until == date(2026, 11, 1)
    assert sum(g.totals.calls for g in weeks.rows) == len(calls)
    months = engine.history(periods.Period(date(2026, 10, 15), date(2026, 12, 1)), "month")
    assert [g.key for g in months.rows] == ["2026-10", "2026-11", "2026-12"]
    assert [g.totals.calls for g in months.rows] == [0, len(calls), 0]


def test_report_json_contract_and_currency(made):
    engine, _ = made
    r = engine.history(NOVEMBER, "source")
    out = r.to_json()
    assert set(out) == {"since", "until", "by", "timezone", "rows", "total"}
    row = out["rows"][0]
    assert set(row) >= {"key", "cost_usd", "estimated_cost_usd", "calls", "sessions", "tokens", "unpriced_calls"}
    assert {"plan_calls", "plan_api_value_usd", "capped_calls"} <= set(row) & set(out["total"])  # as the day's
    assert set(row["tokens"]) == {"input", "output", "cache_read", "cache_write"}
    json.dumps(out)
    eur = r.to_json(Money("EUR", 0.5, "de_DE"))
    assert eur["total"]["cost_usd"] == out["total"]["cost_usd"]  # USD fields are kept
    assert eur["total"]["cost"] == pytest.approx(out["total"]["cost_usd"] * 0.5)
    assert eur["total"]["currency"] == eur["currency"] == "EUR"
    no_rate = r.to_json(Money("EUR", None))
    assert no_rate["total"]["currency"] == "USD" and no_rate["total"]["cost"] == out["total"]["cost_usd"]


# ---- the export -----------------------------------------------------------------------------------


def test_export_rows_are_the_counted_calls(made):
    engine, calls = made
    rows = list(export.rows(engine.ledger, engine.book, NOVEMBER))
    assert len(rows) == len(calls)
    assert sorted((r.session_id, r.input_tokens, r.agent) for r in rows) == sorted(
        (c.session, c.input, c.agent) for c in calls
    )
    reported = sum(r.cost_usd for r in rows if not r.estimated and r.cost_usd is not None)
    assert reported == pytest.approx(hc.sums(calls)[5], abs=1e-12)
    r = engine.history(NOVEMBER, "day")
    assert sum(x.cost_usd for x in rows if x.estimated) == pytest.approx(r.total.totals.estimated_usd, abs=1e-9)
    assert [x.time for x in rows] == sorted(x.time for x in rows)
    assert rows[0].time == "2026-11-02T09:00:05.000+00:00"
    agents = {x.agent for x in rows}
    assert agents == {"lead", "subagent"}
    assert {x.source for x in rows} == {"cli", "vscode", "desktop", "jetbrains"}
    unpriced = [x for x in rows if x.cost_usd is None]
    assert len(unpriced) == 1 and unpriced[0].model == "my-local-model" and not unpriced[0].estimated


def test_csv_round_trips_through_python_csv(made):
    engine, calls = made
    buf = io.StringIO(newline="")
    n = export.write(export.rows(engine.ledger, engine.book, NOVEMBER), buf, "csv")
    assert n == len(calls)
    text = buf.getvalue()
    assert "\r\n" in text  # RFC 4180 line ends
    back = list(csv.DictReader(io.StringIO(text, newline="")))
    assert len(back) == len(calls) and list(back[0]) == list(export.FIELDS)
    beta = [r for r in back if r["project"] == "beta"]
    assert beta and all(r["title"] == "'" + hc.TITLE_TROUBLE for r in beta)  # whole, and never a formula
    assert sum(int(r["input_tokens"]) for r in back) == hc.sums(calls)[1]
    assert {r["estimated"] for r in back} == {"true", "false"}
    reported = sum(float(r["cost_usd"]) for r in back if r["estimated"] == "false" and r["cost_usd"])
    assert reported == pytest.approx(hc.sums(calls)[5], abs=1e-12)


def test_csv_cells_carry_no_terminal_controls(tmp_path, monkeypatch, capsys, set_tz):
    """`trayburn export` prints CSV to the terminal by default: a title (or model id) planted in a session file
    with an OSC 52 clipboard write, a bell or a right-to-left override reaches it as text, never as a command
    (as everywhere else trayburn prints); the rest of the cell, its line break included, is kept."""
    set_tz("UTC")
    sessions = tmp_path / "cline" / "data" / "sessions"
    planted = "line one\nline two\x1b]52;c;aGk=\x07 \u202eevil"
    model = "gpt-4o\x1b[2J"
    msgs = [assistant("msg_ctl00001", ms("2026-11-30T10:00:00Z"), 1000, 10, cost=0.01, model=model)]
    make_session(sessions, "1796000000000_ctrl1", "2026-11-30T09:59:00.000Z", msgs, metadata={"title": planted})
    for k, v in isolated_env(tmp_path, CLINE_DIR=str(tmp_path / "cline")).items():
        monkeypatch.setenv(k, v)
    assert cli.main(["export", "--since", "2026-11-30", "--until", "2026-11-30"]) == 0
    out = capsys.readouterr().out
    assert not {"\x1b", "\x07", "\u202e"} & set(out), repr(out)
    (row,) = csv.DictReader(io.StringIO(out, newline=""))
    assert row["title"] == "line one\nline two]52;c;aGk= evil" and row["model"] == "gpt-4o[2J"
    assert (row["cost_usd"], row["estimated"]) == ("0.01", "false")


def test_json_export_is_an_array_and_adds_the_converted_cost(made):
    engine, calls = made
    buf = io.StringIO()
    export.write(export.rows(engine.ledger, engine.book, NOVEMBER), buf, "json", Money("EUR", 2.0))
    items = json.loads(buf.getvalue())
    assert len(items) == len(calls)
    priced = [i for i in items if i["cost_usd"] is not None]
    assert all(i["cost"] == pytest.approx(i["cost_usd"] * 2) and i["currency"] == "EUR" for i in priced)
    assert any(i["title"] == hc.TITLE_TROUBLE for i in items)  # JSON needs no guard
    empty = io.StringIO()
    assert export.write(iter(()), empty, "json") == 0 and json.loads(empty.getvalue()) == []


# ---- the real recording ----------------------------------------------------------------------------


@pytest.fixture
def real(tmp_path, set_tz):
    set_tz("UTC")
    (tmp_path / "real").mkdir()
    engine = Engine(env=isolated_env(tmp_path / "real", CLINE_DIR=str(CORPUS)))
    engine.refresh()
    yield engine
    engine.close()


@pytest.mark.parametrize("by", history.BY)
def test_real_recording_every_grouping(real, by):
    r = real.history(periods.Period(date(2026, 11, 24), date(2026, 12, 6)), by)
    assert_adds_up(r)
    t, want = r.total.totals, expected()["totals"]
    assert (t.calls, t.tokens.input, t.tokens.output) == (want["calls"], want["inputTokens"], want["outputTokens"])
    assert (t.tokens.cache_read, t.tokens.cache_write) == (want["cacheReadTokens"], want["cacheWriteTokens"])
    assert t.reported_usd == pytest.approx(want["cost"], abs=1e-9)
    day = real.day(REAL_DAY)
    assert t.estimated_usd == pytest.approx(day.estimated_cost_usd, abs=1e-9)
    assert r.total.sessions == day.sessions == expected()["session_count"]


def test_real_recording_export(real):
    rows = list(export.rows(real.ledger, real.book, periods.day_of(REAL_DAY)))
    want = expected()["totals"]
    assert len(rows) == want["calls"]
    assert sum(r.input_tokens for r in rows) == want["inputTokens"]
    assert sum(r.cache_write_tokens for r in rows) == want["cacheWriteTokens"]
    assert {r.agent for r in rows} == {"lead", "subagent", "teammate"}
    assert sum(r.cost_usd for r in rows if not r.estimated) == pytest.approx(want["cost"], abs=1e-9)


# ---- the commands ----------------------------------------------------------------------------------


@pytest.fixture
def cli_env(made, tmp_path, monkeypatch):
    for k, v in isolated_env(tmp_path, CLINE_DIR=str(tmp_path / "cline")).items():
        monkeypatch.setenv(k, v)


def test_report_and_export_commands(cli_env, capsys, tmp_path):
    assert cli.main(["report", "--since", "2026-11-01", "--until", "2026-11-30", "--by", "project", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["by"] == "project" and out["total"]["calls"] == 11
    assert cli.main(["report", "--since", "2026-11-01", "--until", "2026-11-30"]) == 0
    text = capsys.readouterr().out
    assert "2026-11-16" in text and any(line.startswith("total") for line in text.splitlines())
    target = tmp_path / "out.csv"
    assert cli.main(["export", "--since", "2026-11-01", "--until", "2026-11-30", "-o", str(target)]) == 0
    assert "wrote 11 calls" in capsys.readouterr().err
    assert len(list(csv.DictReader(target.open(newline="", encoding="utf-8")))) == 11
    assert cli.main(["export", "--since", "2026-11-16", "--until", "2026-11-16", "--format", "json"]) == 0
    assert [c["session_id"] for c in json.loads(capsys.readouterr().out)] == ["1796300000000_alph2"]
    args = cli.build_parser().parse_args(["summary", "--period", "month", "--date", "2026-11-30"])
    assert (args.period, args.date) == ("month", date(2026, 11, 30))
    assert cli.main(["report", "--since", "soon"]) == Exit.USAGE
    assert "not a date or a period" in capsys.readouterr().err
    assert cli.main(["export", "--since", "2026-11-01", "-o", str(tmp_path / "no" / "such" / "dir.csv")]) == 73
    assert "Traceback" not in capsys.readouterr().err


def export_to(capsys, target) -> tuple[int, str]:
    code = cli.main(["export", "--since", "2026-11-01", "--until", "2026-11-30", "-o", str(target)])
    return code, capsys.readouterr().err


def test_an_export_to_a_pipe_writes_into_it_and_leaves_it_a_pipe(cli_env, capsys, tmp_path):
    """`-o` naming what is not a regular file (a pipe; /dev/stdout, /dev/null…) is written to, never replaced
    by a file (as root that replaced /dev/full itself)."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    # The read end is open before the export starts (a reader thread left to open it raced the export's
    # non-blocking open: 6 failures in 25 runs under faketime). A write end of the test's own, held until
    # the export returns, keeps the drain from seeing end-of-file before the export has opened the pipe.
    read_fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    os.set_blocking(read_fd, True)
    hold_fd = os.open(fifo, os.O_WRONLY)
    got: list[bytes] = []

    def drain() -> None:
        with os.fdopen(read_fd, "rb") as stream:
            got.append(stream.read())

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        code, err = export_to(capsys, fifo)
    finally:
        os.close(hold_fd)
    reader.join(timeout=60)
    assert (code, reader.is_alive()) == (0, False), err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the pipe was replaced by a file"
    assert len(list(csv.DictReader(io.StringIO(got[0].decode("utf-8"), newline="")))) == 11


def test_an_export_onto_a_link_replaces_the_link_never_its_target(cli_env, capsys, tmp_path):
    """A link planted where the export goes (`-o /tmp/calls.csv` -> ~/.bashrc) must not make the export
    overwrite the file it names: the link itself is replaced by the export, the target keeps its content and
    mode; a dangling link creates nothing where it points. The control: a plain path is written as ever."""
    victim = tmp_path / "victim"
    victim.write_text("precious\n", encoding="utf-8")
    os.chmod(victim, 0o640)
    link, dangling, nowhere = tmp_path / "link.csv", tmp_path / "dangling.csv", tmp_path / "nowhere"
    link.symlink_to(victim)
    dangling.symlink_to(nowhere)
    for target in (link, dangling, tmp_path / "plain.csv"):
        code, err = export_to(capsys, target)
        assert code == 0, err
        assert not target.is_symlink() and target.is_file()
        assert len(list(csv.DictReader(target.open(newline="", encoding="utf-8")))) == 11
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert stat.S_IMODE(os.stat(victim).st_mode) == 0o640
    assert not os.path.lexists(nowhere)


def test_an_export_to_a_pipe_nobody_reads_is_an_error_not_a_hang(cli_env, capsys, tmp_path):
    """Opened without waiting for a reader: a FIFO with no reader is refused at once, with what to do (the
    control: /dev/null, a device, is written to and stays a device)."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    code, err = export_to(capsys, fifo)
    assert code == Exit.CANT_WRITE, err
    assert "nothing is reading from it" in err and "Traceback" not in err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    code, err = export_to(capsys, "/dev/null")
    assert code == 0, err
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)


def test_every_text_column_is_safe_for_spreadsheets_and_terminals(tmp_path, monkeypatch, capsys, set_tz):
    """The agent column comes from the messages file like the title: a formula (=HYPERLINK…) or ESC/BEL
    there is neither run by a spreadsheet nor obeyed by a terminal, in CSV or in JSON (where it is kept
    whole as an escape). The control: a plain session beside it exports as it is."""
    set_tz("UTC")
    sessions = tmp_path / "cline" / "data" / "sessions"
    msgs = [assistant("msg_agent0001", ms("2026-11-30T10:00:00Z"), 1000, 10, cost=0.01)]
    plain = [assistant("msg_plain0001", ms("2026-11-30T11:00:00Z"), 1000, 10, cost=0.02)]
    bad_agent = '=HYPERLINK("http://x","y")\x1b]0;owned\x07\x9b2J'
    make_session(sessions, "1796000000000_agnt1", "2026-11-30T09:59:00.000Z", None,
                 agents={"a.messages.json": (bad_agent, msgs)}, metadata={"title": "-2+3"})  # fmt: skip
    make_session(sessions, "1796000000000_plain", "2026-11-30T10:59:00.000Z", plain, metadata={"title": "plain"})
    for k, v in isolated_env(tmp_path, CLINE_DIR=str(tmp_path / "cline")).items():
        monkeypatch.setenv(k, v)
    assert cli.main(["export", "--since", "2026-11-30", "--until", "2026-11-30"]) == 0
    out = capsys.readouterr().out
    assert not {"\x1b", "\x07", "\x9b"} & set(out), repr(out)
    rows = {r["session_id"]: r for r in csv.DictReader(io.StringIO(out, newline=""))}
    bad, ok = rows["1796000000000_agnt1"], rows["1796000000000_plain"]
    assert bad["agent"].startswith("'=HYPERLINK(") and bad["title"] == "'-2+3"
    assert (ok["agent"], ok["title"], ok["cost_usd"]) == ("lead", "plain", "0.02")
    assert cli.main(["export", "--since", "2026-11-30", "--until", "2026-11-30", "--json"]) == 0
    out = capsys.readouterr().out
    assert not {"\x1b", "\x07", "\x9b"} & set(out), repr(out)
    items = {i["session_id"]: i for i in json.loads(out)}
    assert items["1796000000000_agnt1"]["agent"] == bad_agent  # the record, whole
    assert items["1796000000000_plain"]["cost_usd"] == 0.02


def test_an_export_that_cannot_be_written_names_the_path_given_and_what_to_do(cli_env, capsys, tmp_path):
    """Never the temporary file's name (`.x.csv.k2j3.tmp`), never a bare errno; 73 as for any output that
    cannot be created; nothing left behind."""
    for target, says in (
        (tmp_path / "no" / "such" / "x.csv", "does not exist; create that folder or give another path"),
        (tmp_path, "it is a folder; give a file name"),
    ):
        before = sorted(os.listdir(tmp_path))
        code, err = export_to(capsys, target)
        assert code == Exit.CANT_WRITE, err
        assert err.startswith(f"trayburn: cannot write {target}: ") and says in err, err
        assert ".tmp" not in err and "Errno" not in err, err
        assert sorted(os.listdir(tmp_path)) == before


# ---- sessions, grouped ------------------------------------------------------------------------------


@pytest.mark.parametrize("span", [(None, None), (date(2026, 11, 3), date(2026, 11, 10)), (date(2026, 11, 30), None)])
def test_grouped_sessions_equal_their_calls_one_by_one(made, real, span):
    """The sessions list (two grouped queries) against each session's calls as its detail prices them."""
    for engine in (made[0], real):
        since, until = span
        until = until or (since and date(2026, 12, 31))
        start = periods.local_midnight_ms(since) if since else 0
        end = periods.day_bounds(until)[1] if until else 2**62
        now = 1796100000000
        grouped = day.sessions(engine.ledger, engine.book, since, until, now)
        assert [s.id for s in grouped] == [s.id for s in engine.sessions(since, until)]  # the engine's list
        assert {s.id for s in grouped} == set(engine.ledger.session_ids(start, end))
        for s in grouped:
            detail = day.session_detail(engine.ledger, engine.book, s.id, now)
            calls = [c for c in detail.calls if start <= c.ts_ms < end]
            assert s.calls == len(calls) and s.tokens.input == sum(c.tokens.input for c in calls)
            assert s.cost_usd == pytest.approx(sum(c.cost_usd or 0 for c in calls), abs=1e-9)
            assert s.estimated_cost_usd == pytest.approx(sum(c.cost_usd for c in calls if c.estimated), abs=1e-9)
            assert s.unpriced_calls == sum(c.cost_usd is None for c in calls)
            assert s.plan_api_value_usd == pytest.approx(sum(c.plan_api_value_usd or 0 for c in calls), abs=1e-9)
            assert set(s.models) == {c.model for c in calls} or not calls
            meta = engine.ledger.session(s.id)
            where = meta.workspace_root or meta.cwd
            assert s.project == (history.project_name(where) if where else None)  # the one project rule
            if since is None:
                assert s.to_json() == detail.summary.to_json()
    assert len(day.sessions(made[0].ledger, made[0].book, None, None)) == 6


def test_overview_equals_the_single_reports(made, real):
    for engine, span in ((made[0], NOVEMBER), (real, periods.week_of(REAL_DAY))):
        views = engine.overview(span)
        for by, r in views.items():
            alone = engine.history(span, by)
            assert r.to_json() == alone.to_json(), by


@pytest.mark.parametrize(
    ("currency", "rate", "tiny", "zero"), [("JPY", 150.0, "¥0.03", "¥0"), ("BHD", 0.376, "BHD0.00008", "BHD0.000")]
)
def test_a_spend_below_a_currency_s_smallest_unit_is_never_written_as_zero(currency, rate, tiny, zero):
    """A yen has no decimals, a Bahraini dinar three: a $0.0002 call is ¥0.03 (it read "¥0"), as $0.0002 keeps
    its four decimals in dollars; a column takes the currency's own precision, two more for such amounts."""
    money = Money(currency, rate)
    assert (money.text(0.0002), money.text(0.0)) == (tiny, zero)
    assert money.text(12.0).replace(",", "") in ("¥1800", "BHD4.512")
    assert money.decimals([1.0, 2.0]) == {"JPY": 0, "BHD": 3}[currency]
    column = money.decimals([1.0, 0.0002])
    assert money.text(0.0002, decimals=column) == tiny and money.text(1.0, decimals=column) != zero
    usd = Money()
    assert (usd.text(0.0002), usd.decimals([0.0002]), Money("EUR", 1.0).decimals([1.0])) == ("$0.0002", 4, 2)


def test_report_in_another_currency(cli_env, capsys, tmp_path, monkeypatch):
    settings = tmp_path / "eur.toml"
    settings.write_text('currency = "EUR"\nusd_rate = 0.5\n')
    monkeypatch.setenv("LANG", "de_DE.UTF-8")
    argv = ["report", "--since", "2026-11-01", "--until", "2026-11-30", "--by", "source", "--config", str(settings)]
    assert cli.main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["currency"] == "EUR" and out["total"]["currency"] == "EUR"
    assert out["total"]["cost"] == pytest.approx(out["total"]["cost_usd"] * 0.5)
    assert cli.main(argv) == 0
    text = capsys.readouterr().out
    assert "€" in text and "$" not in text
    for command in (["today", "--date", "2026-11-16"], ["sessions", "--since", "2026-11-16"]):
        assert cli.main([*command, "--config", str(settings)]) == 0
        text = capsys.readouterr().out
        assert "€" in text and "$" not in text, command
    assert cli.main(["today", "--date", "2026-11-16", "--config", str(settings), "--json"]) == 0
    day = json.loads(capsys.readouterr().out)
    assert day["currency"] == "EUR" and day["cost"] == pytest.approx(day["cost_usd"] * 0.5)
    settings.write_text('currency = "EUR"\n')  # no rate: dollars, and the report says why
    assert cli.main(argv) == 0
    assert "set usd_rate" in capsys.readouterr().out


def test_export_takes_the_call_s_provider_when_the_ledger_has_one(made):
    """A call's own provider (calls.provider) wins over its session's."""
    engine, calls = made
    before = {r.provider for r in export.rows(engine.ledger, engine.book, NOVEMBER)}
    assert before == {"openai-compatible"}  # the manifests' provider
    db = engine.ledger.db
    db.execute("UPDATE calls SET provider = 'deepseek' WHERE model = 'deepseek-chat'")
    after = {(r.model, r.provider) for r in export.rows(engine.ledger, engine.book, NOVEMBER)}
    assert ("deepseek-chat", "deepseek") in after and ("gpt-4o", "openai-compatible") in after
    for by in ("model", "day", "session"):  # sums now split by provider too: the same figures
        r = engine.history(NOVEMBER, by)
        assert_adds_up(r)
        assert group_sums(r.total)[:5] == hc.sums(calls)[:5]
    assert len(day.sessions(engine.ledger, engine.book, None, None)) == 6


def test_a_long_period_by_day_is_a_few_queries_and_still_adds_up(made):
    engine, calls = made
    decades = periods.Period(date(2000, 1, 1), date(2026, 12, 31))  # 9,862 days: five batches of buckets
    r = engine.history(decades, "day")
    assert len(r.rows) == decades.days and sum(g.totals.calls for g in r.rows) == len(calls)
    assert_adds_up(r)
