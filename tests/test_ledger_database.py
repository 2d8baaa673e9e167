"""The ledger's own SQLite file: rebuilt when damaged, migrated keeping every call, shared safely
between processes."""

from __future__ import annotations

import multiprocessing
import shutil
import sqlite3
from datetime import date
from pathlib import Path

import pytest
from helpers.corpus import (
    Ledger,
    as_sums,
    assert_sums,
    assistant,
    counted,
    expected_sessions,
    isolated_env,
    make_session,
    ms,
    refresh_in_process,
)
from helpers.ledgers import LONG, REAL, T0, assert_no_write_needed, cline, corpus_files, empty, sessions, total  # noqa: F401 (fixtures)

from trayburn.engine import Engine
from trayburn.figures.day import day_report, hourly_costs, session_detail, sessions_report
from trayburn.ledger import SCHEMA_VERSION, LedgerBusy, LedgerError
from trayburn.ledger.schema import CALLS_INDEXES, V2_FILES_AND_CALLS
from trayburn.pricing import PriceBook

# ---- the ledger's own database ---------------------------------------------------------------------------


def test_broken_ledger_is_rebuilt_with_a_notice(tmp_path):
    path = tmp_path / "state" / "ledger.db"
    first = Ledger(path)
    first.refresh(REAL)
    first.close()
    path.write_bytes(b"this is not a database at all" * 100)
    rebuilt = Ledger(path)
    assert rebuilt.notice and "rebuilt" in rebuilt.notice
    assert [p.name for p in path.parent.iterdir() if ".broken-" in p.name]
    rebuilt.refresh(REAL)
    assert_sums(counted(rebuilt), total())
    rebuilt.close()
    assert Ledger(path).notice is None


def test_truncated_ledger_is_rebuilt(tmp_path):
    path = tmp_path / "state" / "ledger.db"
    first = Ledger(path)
    first.refresh(REAL)
    first.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    first.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    rebuilt = Ledger(path)
    assert rebuilt.notice
    rebuilt.refresh(REAL)
    assert_sums(counted(rebuilt), total())
    rebuilt.close()


def test_newer_schema_gives_a_readable_error(tmp_path):
    path = tmp_path / "state" / "ledger.db"
    Ledger(path).close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(LedgerError, match="newer trayburn"):
        Ledger(path)
    assert path.read_bytes() == before  # left alone for the newer trayburn


def test_older_schema_is_rebuilt(tmp_path):
    path = tmp_path / "state" / "ledger.db"
    path.parent.mkdir()
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE calls(key TEXT)")  # an older layout, user_version 0
    db.commit()
    db.close()
    led = Ledger(path)
    assert led.notice and "older schema" in led.notice
    led.refresh(REAL)
    assert_sums(counted(led), total())
    led.close()


# Schema 1 as trayburn 0.x created it: calls name their file by its path.
V1_SCHEMA = """
CREATE TABLE sessions(
  id TEXT PRIMARY KEY, folder TEXT, started_ms INTEGER, ended_ms INTEGER, status TEXT, title TEXT,
  prompt TEXT, cwd TEXT, workspace_root TEXT, model TEXT, provider TEXT, source TEXT, forked_from TEXT,
  removed INTEGER NOT NULL DEFAULT 0);
CREATE TABLE files(
  path TEXT PRIMARY KEY, session_id TEXT NOT NULL, kind TEXT NOT NULL, agent TEXT,
  size INTEGER, mtime_ns INTEGER, inode INTEGER,
  bad_size INTEGER, bad_mtime_ns INTEGER, bad_inode INTEGER, error TEXT,
  gone INTEGER NOT NULL DEFAULT 0);
CREATE TABLE calls(
  id INTEGER PRIMARY KEY, key TEXT NOT NULL, session_id TEXT NOT NULL, file TEXT NOT NULL, agent TEXT,
  seq INTEGER, ts_ms INTEGER NOT NULL, model TEXT, input INTEGER NOT NULL, output INTEGER NOT NULL,
  cache_read INTEGER NOT NULL, cache_write INTEGER NOT NULL, cost REAL, tools TEXT,
  counted INTEGER NOT NULL DEFAULT 0, UNIQUE(file, key));
CREATE INDEX calls_key ON calls(key);
CREATE INDEX calls_day ON calls(counted, ts_ms);
CREATE INDEX calls_session ON calls(session_id);
PRAGMA user_version=1;
"""
V1_CALLS = (
    "key, session_id, {file}, agent, seq, ts_ms, model, input, output, cache_read, cache_write, cost, tools, counted"
)
SESSIONS_V2 = """
CREATE TABLE sessions(
  id TEXT PRIMARY KEY, folder TEXT, started_ms INTEGER, ended_ms INTEGER, status TEXT, title TEXT,
  prompt TEXT, cwd TEXT, workspace_root TEXT, model TEXT, provider TEXT, source TEXT, forked_from TEXT,
  removed INTEGER NOT NULL DEFAULT 0);
"""
V1_SESSIONS = (
    "id, folder, started_ms, ended_ms, status, title, prompt, cwd, workspace_root, model, provider, source,"
    " forked_from, removed"
)
V1_FILES = "path, session_id, kind, agent, size, mtime_ns, inode, bad_size, bad_mtime_ns, bad_inode, error, gone"


def write_v1_ledger(source: Ledger, path: Path) -> None:
    """A schema 1 ledger holding what `source` holds (calls in the same order, files by path)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    db.executescript(V1_SCHEMA)
    db.executemany(
        f"INSERT INTO sessions VALUES({','.join('?' * 14)})", source.query(f"SELECT {V1_SESSIONS} FROM sessions")
    )
    db.executemany(
        f"INSERT INTO files({V1_FILES}) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)", source.query(f"SELECT {V1_FILES} FROM files")
    )
    db.executemany(
        f"INSERT INTO calls({V1_CALLS.format(file='file')}) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        source.query(
            f"SELECT {V1_CALLS.format(file='(SELECT path FROM files f WHERE f.id=file_id)')} FROM calls ORDER BY id"
        ),
    )
    db.commit()
    db.close()


def calls_by_path(ledger: Ledger) -> list[tuple]:
    return sorted(
        ledger.query(f"SELECT {V1_CALLS.format(file='(SELECT path FROM files f WHERE f.id=file_id)')} FROM calls")
    )


def test_v1_ledger_migrates_keeping_every_call_and_removed_sessions(tmp_path, sessions):
    fresh = Ledger(tmp_path / "fresh" / "ledger.db")
    fresh.refresh(sessions)
    shutil.move(sessions / LONG, tmp_path / "moved-away")  # its calls now live only in the ledger
    fresh.refresh(sessions)
    path = tmp_path / "state" / "ledger.db"
    write_v1_ledger(fresh, path)

    led = Ledger(path)
    assert led.notice is None  # migrated, not rebuilt
    assert led.query("PRAGMA user_version") == [(SCHEMA_VERSION,)]
    assert calls_by_path(led) == calls_by_path(fresh)  # every call, its file and its `counted`, as they were
    assert_sums(counted(led), total())
    assert led.query("SELECT id FROM sessions WHERE removed=1") == [(LONG,)]
    assert_sums(counted(led, "session_id=?", (LONG,)), as_sums(expected_sessions()[LONG]["totals"]))
    day, before = (day_report(x, PriceBook(), date(2026, 11, 30)) for x in (led, fresh))
    assert (day.calls, day.sessions, day.cost_usd) == (before.calls, before.sessions, before.cost_usd)
    assert_no_write_needed(led, sessions)  # checkpoints came along: nothing is read again
    shutil.move(tmp_path / "moved-away", sessions / LONG)
    led.refresh(sessions)
    assert_sums(counted(led), total())
    led.close()
    fresh.close()
    assert Ledger(path).notice is None  # opened again: already the current schema


def write_v2_ledger(source: Ledger, path: Path) -> None:
    """A schema 2 ledger (as trayburn 0.1 made it) holding what `source` holds, ids and all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    db.executescript(SESSIONS_V2 + V2_FILES_AND_CALLS + CALLS_INDEXES + "PRAGMA user_version=2;")
    db.executemany(
        f"INSERT INTO sessions VALUES({','.join('?' * 14)})", source.query(f"SELECT {V1_SESSIONS} FROM sessions")
    )
    files = f"id, {V1_FILES}"
    db.executemany(
        f"INSERT INTO files({files}) VALUES({','.join('?' * 13)})", source.query(f"SELECT {files} FROM files")
    )
    calls = V1_CALLS.format(file="file_id") + ", id"
    db.executemany(
        f"INSERT INTO calls({calls}) VALUES({','.join('?' * 15)})", source.query(f"SELECT {calls} FROM calls")
    )
    db.commit()
    db.close()


def test_v2_ledger_migrates_to_v3_keeping_every_call_with_its_session_provider(tmp_path, sessions):
    fresh = Ledger(tmp_path / "fresh" / "ledger.db")
    fresh.refresh(sessions)
    shutil.move(sessions / LONG, tmp_path / "moved-away")  # its calls now live only in the ledger
    fresh.refresh(sessions)
    path = tmp_path / "state" / "ledger.db"
    write_v2_ledger(fresh, path)
    v2 = sqlite3.connect(path)
    v2_calls = v2.execute(f"SELECT id, {V1_CALLS.format(file='file_id')} FROM calls ORDER BY id").fetchall()
    v2.close()

    led = Ledger(path)
    assert led.notice is None  # migrated, not rebuilt
    assert led.query("PRAGMA user_version") == [(SCHEMA_VERSION,)]
    assert led.query(f"SELECT id, {V1_CALLS.format(file='file_id')} FROM calls ORDER BY id") == v2_calls
    assert_sums(counted(led), total())
    assert led.query("SELECT id FROM sessions WHERE removed=1") == [(LONG,)]
    # until a file is read again, a call's provider is its session's; sessions and files are this machine's
    assert led.query(
        "SELECT COUNT(*) FROM calls c JOIN sessions s ON s.id = c.session_id WHERE c.provider IS NOT s.provider"
    ) == [(0,)]
    assert led.query("SELECT COUNT(*) FROM calls WHERE provider IS NOT NULL")[0][0] == len(v2_calls)
    assert led.query("SELECT COUNT(*) FROM sessions WHERE origin IS NOT NULL") == [(0,)]
    assert led.query("SELECT COUNT(*) FROM files WHERE origin IS NOT NULL") == [(0,)]
    assert led.query("SELECT DISTINCT feed FROM sessions UNION SELECT DISTINCT feed FROM files") == [("cline_cli",)]
    assert_no_write_needed(led, sessions)  # checkpoints came along: nothing is read again
    shutil.move(tmp_path / "moved-away", sessions / LONG)
    led.refresh(sessions)
    assert_sums(counted(led), total())
    led.close()
    fresh.close()


def test_a_calls_provider_is_its_messages_else_its_sessions(ledger, empty):
    routed = assistant("msg_routed01", ms(T0), model="claude-sonnet-4")
    routed["modelInfo"]["provider"] = "openrouter"
    plain = assistant("msg_plain001", ms(T0) + 1000, model=None)  # no modelInfo: the session's model and provider
    make_session(empty, "1796020000000_prov1", T0, [routed, plain], provider="anthropic")
    ledger.refresh(empty)
    assert ledger.query("SELECT key, provider FROM calls ORDER BY key") == [
        ("msg_plain001", "anthropic"),
        ("msg_routed01", "openrouter"),
    ]
    assert sorted((r.model, r.provider) for r in ledger.model_sums(0, 2**62)) == [
        ("claude-sonnet-4", "openrouter"),
        ("gpt-4o", "anthropic"),
    ]


def test_v1_calls_of_a_file_without_a_row_survive_the_migration(tmp_path):
    path = tmp_path / "state" / "ledger.db"
    path.parent.mkdir()
    db = sqlite3.connect(path)
    db.executescript(V1_SCHEMA)
    db.execute(
        f"INSERT INTO calls({V1_CALLS.format(file='file')}) VALUES"
        "('m1', 's1', '/gone/s1.messages.json', 'lead', 1, 1, 'gpt-4o', 10, 1, 0, 0, 0.5, '', 1)"
    )
    db.commit()
    db.close()
    led = Ledger(path)
    assert led.notice is None
    assert calls_by_path(led) == [
        ("m1", "s1", "/gone/s1.messages.json", "lead", 1, 1, "gpt-4o", 10, 1, 0, 0, 0.5, "", 1)
    ]
    assert led.query("SELECT gone FROM files") == [(1,)]
    led.close()


def test_report_queries_find_calls_by_index(ledger):
    """No figure scans every call: a session's by the session index, a day's by the day index (schema 1's
    (counted, ts_ms) index made SQLite pick it for a session's calls: 70 s for 5,000 sessions)."""
    ledger.refresh(REAL)
    statements = []
    ledger.db.set_trace_callback(statements.append)
    try:
        sessions_report(ledger, PriceBook(), None, None)
        session_detail(ledger, PriceBook(), LONG)
        day_report(ledger, PriceBook(), date(2026, 11, 30))
        hourly_costs(ledger, PriceBook(), date(2026, 11, 30))
    finally:
        ledger.db.set_trace_callback(None)
    plans = {
        sql: " | ".join(row[3] for row in ledger.query("EXPLAIN QUERY PLAN " + sql))
        for sql in statements
        if "FROM calls" in sql
    }
    for sql, plan in plans.items():
        assert "SCAN calls" not in plan, sql
        assert ("calls_session" if "session_id=" in sql else "calls_day") in plan, (sql, plan)


def test_two_processes_refreshing_at_once_count_exactly(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    start, out = ctx.Event(), ctx.Queue()
    state = tmp_path / "state"
    procs = [ctx.Process(target=refresh_in_process, args=(str(state), str(REAL), start, out)) for _ in range(3)]
    for p in procs:
        p.start()
    start.set()
    results = [out.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert all(errors == {} for _, _, errors in results)
    assert sum(read for _, read, _ in results) == len(corpus_files())  # each file read once, by one of them
    led = Ledger(state / "ledger.db")
    assert led.notice is None
    assert_sums(counted(led), total())
    assert led.query("SELECT COUNT(*), COUNT(DISTINCT file_id || '|' || key) FROM calls")[0] == (total()[0],) * 2
    led.close()


def test_a_refresh_blocked_by_another_writer_raises_ledger_busy_then_catches_up(tmp_path, sessions):
    led = Ledger(tmp_path / "state" / "ledger.db", busy_timeout_s=0.05)
    other = sqlite3.connect(led.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process is writing, for longer than we wait
    try:
        with pytest.raises(LedgerBusy, match="locked by another process") as raised:
            led.refresh(sessions)
        assert isinstance(raised.value, LedgerError)
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert counted(led)[0] == 0  # nothing half-done
    assert led.refresh(sessions).files_read == len(corpus_files())  # the next poll does it all
    assert_sums(counted(led), total())
    led.close()


def test_engine_passes_its_busy_timeout_to_the_ledger(tmp_path):
    engine = Engine(tmp_path / "settings.toml", tmp_path / "state", isolated_env(tmp_path), busy_timeout_s=0.25)
    assert engine.ledger.busy_timeout_s == 0.25
    assert engine.ledger.query("PRAGMA busy_timeout") == [(250,)]
    engine.close()
