"""Today first: a refresh asked for the figures from one moment on reads the sessions whose files changed since
then, leaves the rest of the history for later, and the figures from that moment are exact at once. Then the
rest comes in slices; an interrupted ingest resumes; a session that raises is skipped alone; a file read in
the same tick it was written is read again (the racy-timestamp rule)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import date, timedelta
from pathlib import Path

import pytest
from helpers.corpus import (
    Ledger,
    a_minute_later,
    age,
    age_all,
    assistant,
    copy_corpus,
    counted,
    dumps,
    iso,
    isolated_env,
    make_session,
    ms,
    sessions_of,
    user,
    write_in_place,
)

from trayburn.engine import Engine
from trayburn.figures import periods

DAY_MS = 86_400_000
ROOT = Path(__file__).resolve().parent.parent


def set_mtime(path: Path, epoch_ms: int) -> None:
    os.utime(path, ns=(epoch_ms * 10**6, epoch_ms * 10**6))


def settle_folder(folder: Path, epoch_ms: int) -> None:
    """As if the folder's files were last written at `epoch_ms` (Cline writes each file after its last call)."""
    for path in folder.iterdir():
        set_mtime(path, epoch_ms)


def day_sums(ledger: Ledger, day: date) -> tuple:
    start, end = periods.day_bounds(day)
    return counted(ledger, "ts_ms>=? AND ts_ms<?", (start, end))


def one_owner_per_key(ledger: Ledger) -> bool:
    rows = ledger.query("SELECT key, SUM(counted) FROM calls GROUP BY key")
    return all(n == 1 for _, n in rows)


def history(sessions: Path) -> dict[str, date]:
    """Sessions over six days, each as Cline leaves it; the awkward cases among them. Returns named days."""
    today = periods.now_date()
    t0 = periods.local_midnight_ms(today)
    now = int(time.time() * 1000)
    span = max(now - t0 - 5_000, 0)  # today's calls fall between midnight and a few seconds ago

    def on(k: int, hour: float) -> int:  # k days ago, at this hour
        return periods.local_midnight_ms(today - timedelta(days=k)) + int(hour * 3_600_000)

    def today_at(fraction: float) -> int:
        return t0 + int(span * fraction)

    old = [assistant(f"msg_old{i:05d}", on(5, 10 + i), 1000 + i, 10, cost=0.01) for i in range(4)]
    a = make_session(sessions, "1700000000001_aaaaa", iso(on(5, 9)), [user("u_a", on(5, 9)), *old])
    settle_folder(a, on(5, 15))
    # a fork started today: the parent's calls copied (ids, metrics, times), then its own; the parent is old
    fork_msgs = [*old, assistant("msg_fork0001", today_at(0.3), 5000, 50, cost=0.2)]
    make_session(
        sessions,
        "1700000000002_fffff",
        iso(today_at(0.2)),
        fork_msgs,
        metadata={"title": "fork", "fork": {"forkedFromSessionId": "1700000000001_aaaaa"}},
    )
    b_msgs = [assistant("msg_b0000001", on(3, 11), 700, 7, cost=0.03), assistant("msg_b0000002", on(2, 11), 800, 8)]
    settle_folder(make_session(sessions, "1700000000003_bbbbb", iso(on(3, 10)), b_msgs), on(2, 12))
    # resumed today: the manifest still from its start four days ago, the messages file new
    r = make_session(
        sessions,
        "1700000000004_rrrrr",
        iso(on(4, 8)),
        [assistant("msg_r0000001", on(4, 9), 300, 3, cost=0.5), assistant("msg_r0000002", today_at(0.5), 400, 4)],
    )
    set_mtime(r / "1700000000004_rrrrr.json", on(4, 10))
    # an old session whose subagent wrote today
    s = make_session(
        sessions,
        "1700000000005_sssss",
        iso(on(2, 8)),
        [assistant("msg_s0000001", on(2, 9), 900, 9, cost=0.07)],
        agents={"agent_x.messages.json": ("subagent", [assistant("msg_sub00001", today_at(0.6), 11, 1, cost=0.9)])},
    )
    settle_folder(s, on(2, 10))
    os.utime(s / "agent_x.messages.json")  # written now
    rollup = {"title": "r", "usage": {"inputTokens": 60, "outputTokens": 6, "cacheReadTokens": 0,
                                      "cacheWriteTokens": 0, "totalCost": 0.6}}  # fmt: skip
    make_session(sessions, "1700000000006_uuuuu", iso(today_at(0.1)), None, metadata=rollup)
    settle_folder(make_session(sessions, "1700000000007_vvvvv", iso(on(5, 7)), None, metadata=rollup), on(5, 8))
    y = make_session(sessions, "1700000000008_yyyyy", iso(on(1, 23)), [assistant("msg_y0000001", on(1, 23.5), 5, 5)])
    settle_folder(y, on(1, 23.6))
    return {"today": today, "yesterday": today - timedelta(days=1), "three_ago": today - timedelta(days=3)}


@pytest.fixture
def multi_day(tmp_path):
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    named = history(sessions)
    full = Ledger(tmp_path / "full" / "ledger.db")
    full.refresh(sessions)
    yield sessions, named, full
    full.close()


@pytest.mark.parametrize("which", ["today", "yesterday", "three_ago"])
def test_a_cold_day_equals_the_full_ingest_and_leaves_older_sessions_for_later(tmp_path, multi_day, which):
    sessions, named, full = multi_day
    day = named[which]
    cold = Ledger(tmp_path / "cold" / "ledger.db")
    stats = cold.refresh(sessions, since_ms=periods.local_midnight_ms(day), budget_s=0)
    assert stats.pending > 0 and stats.folders == 8  # older sessions left unread ...
    assert day_sums(cold, day) == day_sums(full, day)  # ... and the day exact
    assert day_sums(cold, day)[0] > 0
    assert one_owner_per_key(cold)
    for later in range((named["today"] - day).days + 1):  # every day after it too
        d = day + timedelta(days=later)
        assert day_sums(cold, d) == day_sums(full, d)
    done = cold.refresh(sessions)  # the rest: totals become complete, the day's stay as they were
    assert done.pending == 0
    assert counted(cold) == counted(full)
    assert day_sums(cold, day) == day_sums(full, day)
    assert one_owner_per_key(cold)
    assert cold.query("SELECT key, session_id FROM calls WHERE counted=1 ORDER BY key") == full.query(
        "SELECT key, session_id FROM calls WHERE counted=1 ORDER BY key"
    )  # the fork's copies moved to the parent once it was read; their count never changed
    cold.close()


def test_history_comes_in_slices_with_progress_and_ends_exact(tmp_path, multi_day):
    sessions, named, full = multi_day
    engine = Engine(None, None, isolated_env(tmp_path, CLINE_SESSION_DATA_DIR=str(sessions)))
    assert engine.progress is None  # nothing known before a refresh
    engine.refresh_day(named["today"])
    read, total = engine.progress or (0, 0)
    assert total == 8 and 0 < read < total
    assert engine.day().calls == full_day_calls(full, named["today"])
    for _ in range(10):  # the tray's poll: today, then a slice of history (at least one session)
        engine.refresh(budget_s=0.001)
        if engine.progress is None:
            break
    assert counted(engine.ledger) == counted(full)
    engine.close()


def full_day_calls(full: Ledger, day: date) -> int:
    return day_sums(full, day)[0]


def test_a_deferred_session_written_later_is_picked_up(tmp_path, multi_day):
    sessions, named, full = multi_day
    cold = Ledger(tmp_path / "cold" / "ledger.db")
    today_ms = periods.local_midnight_ms(named["today"])
    cold.refresh(sessions, since_ms=today_ms, budget_s=0)
    path = sessions / "1700000000003_bbbbb" / "1700000000003_bbbbb.messages.json"  # old, still unread
    doc = json.loads(path.read_bytes())
    doc["messages"].append(assistant("msg_b_today1", int(time.time() * 1000) - 1000, 123, 4, cost=1.5))
    write_in_place(path, dumps(doc))
    cold.refresh(sessions, since_ms=today_ms, budget_s=0)
    full.refresh(sessions)
    assert day_sums(cold, named["today"]) == day_sums(full, named["today"])
    assert day_sums(cold, named["today"])[5] == pytest.approx(day_sums(full, named["today"])[5])
    cold.refresh(sessions)
    assert counted(cold) == counted(full)
    cold.close()


# ---- the real recording -------------------------------------------------------------------------------


def recorded(tmp_path: Path) -> Path:
    """A copy of the real recording, each file's mtime set to its last call or time (as Cline left them)."""
    sessions = sessions_of(copy_corpus(tmp_path / "cline"))
    for folder in sessions.iterdir():
        latest = 0
        for path in folder.glob("*.messages.json"):
            stamps = [m.get("ts") for m in json.loads(path.read_bytes()).get("messages", [])]
            last = max((t for t in stamps if isinstance(t, int)), default=0)
            set_mtime(path, last + 500)
            latest = max(latest, last + 500)
        manifest = json.loads((folder / f"{folder.name}.json").read_bytes())
        times = [ms(manifest[k]) for k in ("started_at", "ended_at") if manifest.get(k)]
        set_mtime(folder / f"{folder.name}.json", max([latest, *times]) + 600)
    return sessions


def test_the_real_recording_day_by_day_equals_the_full_ingest(tmp_path):
    sessions = recorded(tmp_path)
    full = Ledger(tmp_path / "full.db")
    full.refresh(sessions)
    stamps = [r[0] for r in full.query("SELECT ts_ms FROM calls WHERE counted=1")]
    recorded_days = sorted({date.fromtimestamp(ts / 1000) for ts in stamps})
    for day in [*recorded_days, recorded_days[-1] + timedelta(days=1)]:
        cold = Ledger(tmp_path / f"cold-{day}.db")
        stats = cold.refresh(sessions, since_ms=periods.local_midnight_ms(day), budget_s=0)
        assert day_sums(cold, day) == day_sums(full, day)
        if day > recorded_days[-1]:
            assert stats.files_read == 0 and stats.pending == 18  # nothing can hold a call of that day
        cold.refresh(sessions)
        assert counted(cold) == counted(full)
        cold.close()
    full.close()


def test_cold_today_from_the_command_line_equals_the_full_figure(tmp_path):
    sessions = recorded(tmp_path)
    env = {**os.environ, **isolated_env(tmp_path, CLINE_SESSION_DATA_DIR=str(sessions))}
    full = Ledger(tmp_path / "full.db")
    full.refresh(sessions)
    day = date.fromtimestamp(max(r[0] for r in full.query("SELECT ts_ms FROM calls WHERE counted=1")) / 1000)
    run = [sys.executable, "-m", "trayburn", "today", "--date", day.isoformat(), "--json"]
    cold = json.loads(subprocess.run(run, env=env, capture_output=True, check=True, cwd=ROOT).stdout)
    assert cold["calls"] == day_sums(full, day)[0]
    full.close()


# ---- an interrupted ingest ----------------------------------------------------------------------------

INGEST_CHILD = """
import sys, time
from trayburn.ledger import Ledger
from trayburn.sources.cline_cli.source import ClineCliSource
Ledger(sys.argv[1], slice_s=0.01).refresh(ClineCliSource(sys.argv[2], time.monotonic))
"""


def test_an_ingest_killed_mid_way_resumes_and_ends_exact(tmp_path):
    sys.path.insert(0, str(ROOT / "bench"))
    import gen_corpus

    want = gen_corpus.generate(tmp_path / "corpus", sessions=600, calls=4, seed=3)
    sessions = gen_corpus.sessions_dir(tmp_path / "corpus")
    for path in sessions.rglob("*.json"):
        age(path)  # written minutes ago (else every read is racy, and read again at the resume)
    db = tmp_path / "state" / "ledger.db"
    Ledger(db).close()  # created, so the parent can watch it
    child = subprocess.Popen([sys.executable, "-c", INGEST_CHILD, str(db), str(sessions)], cwd=ROOT)
    watch = Ledger(db)
    deadline = time.monotonic() + 60
    while not watch.query("SELECT COUNT(*) FROM sessions")[0][0] and time.monotonic() < deadline:
        if child.poll() is not None:
            break
    child.kill()
    assert child.wait() == -9, "the ingest ended before it could be killed"
    part = watch.query("SELECT COUNT(*) FROM sessions")[0][0]
    assert 0 < part < want.sessions  # killed mid-way, some slices committed
    watch.close()
    resumed = Ledger(db)
    stats = resumed.refresh(sessions)
    assert stats.pending == 0 and stats.files_read < want.files
    assert resumed.query("SELECT COUNT(*) FROM calls WHERE counted=1")[0][0] == want.calls
    assert one_owner_per_key(resumed)
    resumed.close()


# ---- fault isolation -----------------------------------------------------------------------------------


def test_a_session_the_ledger_refuses_is_skipped_alone_and_listed_by_doctor(tmp_path, multi_day):
    sessions, named, full = multi_day
    bad = "1700000000003_bbbbb"
    env = isolated_env(tmp_path, CLINE_SESSION_DATA_DIR=str(sessions))
    engine = Engine(None, None, env)
    engine.ledger.db.execute(  # a real refusal from SQLite, in the middle of the ingest
        f"CREATE TRIGGER refuse BEFORE INSERT ON calls WHEN NEW.session_id = '{bad}'"
        " BEGIN SELECT RAISE(ABORT, 'refused for the test'); END"
    )
    stats = engine.refresh()
    manifest = str(sessions / bad / f"{bad}.json")
    assert "refused for the test" in stats.errors[manifest]
    others = "session_id != ?"
    assert counted(engine.ledger, others, (bad,)) == counted(full, others, (bad,))  # the rest committed
    assert engine.ledger.query("SELECT COUNT(*) FROM calls WHERE session_id=?", (bad,))[0][0] == 0
    engine.close()
    doctor = subprocess.run(
        [sys.executable, "-m", "trayburn", "doctor", "--json"],
        env={**os.environ, **env},
        capture_output=True,
        cwd=ROOT,
    )
    problems = {p["path"]: p["reason"] for p in json.loads(doctor.stdout)["problems"]}
    assert "refused for the test" in problems[manifest]  # a new process: from the ledger, retried meanwhile
    fixed = Engine(None, None, env)
    fixed.ledger.db.execute("DROP TRIGGER refuse")
    fixed.refresh()  # not remembered as bad: the next refresh reads it again
    assert counted(fixed.ledger) == counted(full)
    assert fixed.health().problems == []
    fixed.close()


# ---- the racy-timestamp rule ---------------------------------------------------------------------------


def rewrite_same_size_same_mtime(path: Path) -> None:
    """Another value of the same length, in place, then the old mtime put back: no stat can tell."""
    st = path.stat()
    data = path.read_bytes()
    assert b'"outputTokens": 10' in data
    write_in_place(path, data.replace(b'"outputTokens": 10', b'"outputTokens": 99', 1))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_ino == st.st_ino


@pytest.mark.parametrize("read_when", ["racy", "settled"])
def test_a_file_read_in_the_tick_it_was_written_is_read_again(tmp_path, read_when):
    sessions = tmp_path / "sessions"
    folder = make_session(
        sessions, "1796026000000_racyy", iso(1796026000000), [assistant("msg_racy0001", 1796026001000)]
    )
    path = folder / "1796026000000_racyy.messages.json"
    if read_when == "settled":
        for f in folder.iterdir():
            age(f)
    ledger = Ledger(tmp_path / "ledger.db")  # the real clock: the first read is within 2 s of the write
    ledger.refresh(sessions)
    assert counted(ledger)[2] == 10
    rewrite_same_size_same_mtime(path)
    stats = ledger.refresh(sessions)
    # racy: not trusted, read again; settled: the change time moved (issue 19), read again too
    assert stats.files_read >= 1 and counted(ledger)[2] == 99
    ledger.close()


def test_a_racy_read_is_trusted_once_the_file_is_older(tmp_path):
    sessions = tmp_path / "sessions"
    make_session(sessions, "1796026000000_racyy", iso(1796026000000), [assistant("msg_racy0001", 1796026001000)])
    ledger = Ledger(tmp_path / "ledger.db", wall_ns=time.time_ns)
    assert ledger.refresh(sessions).files_read == 2
    assert ledger.refresh(sessions).files_read == 2  # still within the tick: read again
    later = Ledger(tmp_path / "ledger.db", wall_ns=a_minute_later)
    assert later.refresh(sessions).files_read == 2  # read once more, now trusted
    assert later.refresh(sessions).files_read == 0
    ledger.close()
    later.close()


def test_the_tray_shows_today_at_once_then_reads_the_history_saying_how_far(tmp_path):
    """A first run on a long history: the tray's first tick has today's exact figure and a progress line;
    the next ticks read the rest in slices; at the end the line is gone and the week and month are complete."""
    from trayburn.tray import host
    from trayburn.tray.app import TrayApp

    sessions = tmp_path / "cline" / "data" / "sessions"
    sessions.mkdir(parents=True)
    history(sessions)
    env = {"CLINE_SESSION_DATA_DIR": str(sessions)}
    full = Engine(tmp_path / "full.toml", tmp_path / "full-state", env=env)
    full.refresh()
    want_today, want_month = full.day(), full.period(month=True)
    tray = Engine(tmp_path / "settings.toml", tmp_path / "state", env=env)
    app = TrayApp(
        tray, host.load_pystray("dummy"), host.capabilities("dummy"), spawn=lambda *a, **k: None,
        history_slice_s=1e-6,  # one history session per tick: the slices are seen
    )  # fmt: skip
    app.tick()
    assert (tray.day().calls, tray.day().cost_usd) == (want_today.calls, want_today.cost_usd)
    assert app.view.progress is not None and app.view.progress.startswith("Reading history: ")
    lines = [str(item.text) for item in app.icon.menu.items]
    assert app.view.progress in lines
    # the week and month are sums of what was read so far, and say so
    assert [line for line in lines if line.startswith(("This week: at least ", "This month: at least "))], lines
    seen = [app.view.progress]
    for _ in range(50):
        if app.view.progress is None:
            break
        app.tick()
        seen.append(app.view.progress)
    assert app.view.progress is None, seen
    assert len(seen) > 2  # several slices, each said
    assert not [str(i.text) for i in app.icon.menu.items if "at least" in str(i.text)]  # whole now: no mark
    month = tray.period(month=True)
    assert (month.calls, month.cost_usd) == (want_month.calls, want_month.cost_usd)
    assert counted(tray.ledger) == counted(full.ledger)  # the whole history, each call once
    full.close()
    tray.close()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("slice_s", [1e-9, 0.0005])
def test_a_complete_refresh_of_slices_shorter_than_any_session_ends_and_is_exact(tmp_path, slice_s):
    """Every slice reads at least one session, and a folder that never settles (no lead messages file) is read
    once per refresh, not at the head of every slice: slices shorter than those took never ended."""
    sessions = tmp_path / "sessions"
    for i in range(40):
        sid = f"{1796020000000 + i}_noled"
        make_session(sessions, sid, iso(1796020000000 + i), None)  # a manifest, never a messages file
    for i in range(40):
        sid = f"{1796021000000 + i}_reall"
        make_session(sessions, sid, iso(1796021000000 + i), [assistant(f"msg_real{i:04d}", 1796021000000 + i, 10, 1)])
    age_all(sessions)
    ledger = Ledger(tmp_path / "ledger.db", slice_s=slice_s, wall_ns=a_minute_later)
    stats = ledger.refresh(sessions)
    assert stats.pending == 0
    assert counted(ledger)[:2] == (40, 400)
    ledger.close()
