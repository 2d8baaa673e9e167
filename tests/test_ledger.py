"""The ledger on real files and a real SQLite database: totals equal EXPECTED.json, refreshes
read only what changed, broken inputs never crash it, and every call counts exactly once."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import sqlite3
import time
from datetime import date
from pathlib import Path

import pytest
from corpus import (
    CORPUS,
    QUIRKS,
    a_minute_later,
    age,
    as_sums,
    assert_sums,
    assistant,
    bump_mtime,
    copy_corpus,
    counted,
    dumps,
    expected,
    expected_sessions,
    isolated_env,
    make_session,
    manifest,
    messages_doc,
    ms,
    refresh_in_process,
    sessions_of,
    user,
    write_in_place,
    write_json,
)

from trayburn import files as trayburn_files
from trayburn.engine import Engine
from trayburn.figures import day as report
from trayburn.figures import sessions as session_list
from trayburn.ledger import SCHEMA_VERSION, Ledger, LedgerBusy, LedgerError
from trayburn.ledger.schema import CALLS_INDEXES, V2_FILES_AND_CALLS
from trayburn.pricing import PriceBook
from trayburn.sources.cline_cli.layout import FULL_SWEEP_S

REAL = sessions_of(CORPUS)
LONG = "1796026909249_y8q37"  # i_long: 51 calls
PLAIN = "1796026733097_tvgzu"  # a_plain: 1 call
T0 = "2026-11-30T08:00:00.000Z"
FILE_IS = "file_id=(SELECT id FROM files WHERE path=?)"  # calls of the file at a path


@pytest.fixture
def cline(tmp_path):
    return copy_corpus(tmp_path / "cline")


@pytest.fixture
def sessions(cline):
    return sessions_of(cline)


@pytest.fixture
def empty(tmp_path):
    path = tmp_path / "sessions"
    path.mkdir()
    return path


def corpus_files() -> list[Path]:
    return sorted(p for p in REAL.rglob("*") if p.is_file())


def total() -> tuple:
    return as_sums(expected()["totals"])


def assert_no_write_needed(ledger: Ledger, sessions_dir: Path) -> None:
    """A refresh with nothing to do reads no file and does not even take the write lock."""
    other = sqlite3.connect(ledger.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process is writing
    try:
        ledger.db.execute("PRAGMA busy_timeout=50")
        stats = ledger.refresh(sessions_dir)
        assert (stats.files_read, stats.bytes_read) == (0, 0)
    finally:
        ledger.db.execute("PRAGMA busy_timeout=30000")
        other.execute("ROLLBACK")
        other.close()


def append_call(path: Path, call: dict) -> bytes:
    doc = json.loads(path.read_bytes())
    doc["messages"] += [user(f"u-{call['id']}", call["ts"]), call]
    data = dumps(doc)
    write_in_place(path, data)
    return data


# ---- the recorded corpus --------------------------------------------------------------------------------


def test_corpus_totals_equal_expected(ledger):
    stats = ledger.refresh(REAL)
    assert stats.errors == {}
    assert (stats.files_read, stats.bytes_read) == (len(corpus_files()), sum(p.stat().st_size for p in corpus_files()))
    assert_sums(counted(ledger), total())
    assert ledger.query("SELECT COUNT(*) FROM sessions")[0][0] == expected()["session_count"]


@pytest.mark.parametrize("sid", sorted(expected_sessions()))
def test_session_totals_equal_expected(ledger, sid):
    ledger.refresh(REAL)
    assert_sums(counted(ledger, "session_id=?", (sid,)), as_sums(expected_sessions()[sid]["totals"]))


def test_file_totals_and_agents_equal_expected(ledger):
    ledger.refresh(REAL)
    for sid, s in expected_sessions().items():
        for f in s["message_files"]:
            path = str(REAL / sid / f["file"])
            assert_sums(
                counted(ledger, FILE_IS, (path,)),
                (
                    f["calls"],
                    *(f[k] for k in ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens")),
                    f["cost"],
                ),
            )
            agents = {a for (a,) in ledger.query(f"SELECT DISTINCT agent FROM calls WHERE {FILE_IS}", (path,))}
            assert agents <= {f["agent"]}
            owners = {o for (o,) in ledger.query(f"SELECT DISTINCT session_id FROM calls WHERE {FILE_IS}", (path,))}
            assert owners <= {sid}


def test_no_rollup_where_messages_have_metrics(ledger):
    ledger.refresh(REAL)
    assert ledger.query("SELECT COUNT(*) FROM calls WHERE key LIKE '%:rollup'")[0][0] == 0


def test_second_refresh_reads_nothing(ledger):
    ledger.refresh(REAL)
    stats = ledger.refresh(REAL)
    assert (stats.files_read, stats.bytes_read, stats.errors) == (0, 0, {})
    assert_no_write_needed(ledger, REAL)
    again = Ledger(ledger.path)  # a new process, same ledger
    assert (again.refresh(REAL).files_read, again.refresh(REAL).bytes_read) == (0, 0)
    assert_sums(counted(again), total())
    again.close()


# ---- incremental refresh ---------------------------------------------------------------------------------


def test_appending_a_call_to_the_messages_file_only_is_seen(ledger, sessions):
    ledger.refresh(sessions)
    manifest_before = (sessions / LONG / f"{LONG}.json").read_bytes()
    call = assistant("msg_new00001", ms("2026-11-30T08:30:00Z"), 7000, 70, 5000, 100, cost=0.001)
    data = append_call(sessions / LONG / f"{LONG}.messages.json", call)
    stats = ledger.refresh(sessions)
    assert (stats.files_read, stats.bytes_read) == (1, len(data))
    assert (sessions / LONG / f"{LONG}.json").read_bytes() == manifest_before
    want = list(total())
    want = [want[0] + 1, want[1] + 7000, want[2] + 70, want[3] + 5000, want[4] + 100, want[5] + 0.001]
    assert_sums(counted(ledger), want)
    assert ledger.refresh(sessions).files_read == 0


def test_a_new_subagent_file_in_a_known_session_is_seen(tmp_path, sessions):
    clock = [0.0]  # a completed session whose other files stay as they were: found by the next full sweep
    ledger = Ledger(tmp_path / "state" / "ledger.db", clock=lambda: clock[0], wall_ns=a_minute_later)
    ledger.refresh(sessions)
    ledger.refresh(sessions)  # a first refresh keeps no listing: the second does
    agent = sessions / PLAIN / "agent_1796026733999_abcdef.messages.json"
    write_json(agent, messages_doc(f"{PLAIN}__x", [assistant("msg_sub00001", ms(T0), 500, 5)], agent="subagent"))
    clock[0] += FULL_SWEEP_S
    stats = ledger.refresh(sessions)
    assert stats.files_read == 1
    assert counted(ledger)[0] == total()[0] + 1
    assert ledger.query("SELECT session_id, agent FROM calls WHERE key='msg_sub00001'") == [(PLAIN, "subagent")]


def test_a_rewrite_keeping_size_is_seen_by_its_mtime(ledger, empty):
    make_session(empty, "1796020000000_aaaaa", T0, [assistant("m1", ms(T0), 100, 1, cost=0.5)])
    ledger.refresh(empty)
    path = empty / "1796020000000_aaaaa" / "1796020000000_aaaaa.messages.json"
    write_in_place(path, path.read_bytes().replace(b'"cost": 0.5', b'"cost": 0.7'))
    bump_mtime(path)
    assert ledger.refresh(empty).files_read == 1
    assert counted(ledger)[5] == pytest.approx(0.7)


# ---- half-written and broken files -----------------------------------------------------------------------


def engine_for(tmp_path: Path, cline: Path, max_file_mb: int | None = None) -> Engine:
    if max_file_mb:
        (tmp_path / "settings.toml").write_text(f"max_file_mb = {max_file_mb}\n")
    return Engine(tmp_path / "settings.toml", tmp_path / "state", isolated_env(tmp_path, CLINE_DIR=str(cline)))


def test_half_written_messages_keep_previous_parse_until_fixed(tmp_path, cline, sessions):
    engine = engine_for(tmp_path, cline)
    engine.refresh()
    path = sessions / LONG / f"{LONG}.messages.json"
    full = path.read_bytes()
    write_in_place(path, full[: len(full) // 2])
    stats = engine.refresh()
    assert str(path) in stats.errors
    assert_sums(counted(engine.ledger), total())
    health = engine.health()  # just changed: most likely caught mid-write, not (yet) a problem
    assert [p for p, _ in health.settling] == [str(path)] and health.problems == []
    old = time.time() - 120
    os.utime(path, (old, old))  # still broken a while later: now it is one
    engine.refresh()
    assert [p for p, _ in engine.health().problems] == [str(path)]
    engine.refresh()  # still broken: still the previous parse, still listed
    assert_sums(counted(engine.ledger), total())
    assert [p for p, _ in engine.health().problems] == [str(path)]
    doc = json.loads(full)
    doc["messages"].append(assistant("msg_fixed001", ms(T0), 10, 1, cost=0.25))
    write_in_place(path, dumps(doc))
    engine.refresh()
    assert engine.health().problems == []
    assert counted(engine.ledger)[0] == total()[0] + 1
    assert counted(engine.ledger)[5] == pytest.approx(total()[5] + 0.25, abs=1e-9)
    engine.close()


def test_half_written_on_first_sight_then_fixed_counts_exactly(ledger, sessions):
    path = sessions / LONG / f"{LONG}.messages.json"
    full = path.read_bytes()
    write_in_place(path, full[:4096])
    ledger.refresh(sessions)
    write_in_place(path, full)
    ledger.refresh(sessions)
    assert_sums(counted(ledger), total())
    assert ledger.query("SELECT COUNT(*) FROM calls WHERE session_id=? AND seq<0", (LONG,))[0][0] == 0


def test_half_written_manifest_keeps_the_session(tmp_path, cline, sessions):
    engine = engine_for(tmp_path, cline)
    engine.refresh()
    path = sessions / PLAIN / f"{PLAIN}.json"
    write_in_place(path, path.read_bytes()[:50])
    engine.refresh()
    h = engine.health()
    assert (h.sessions, h.removed_sessions) == (expected()["session_count"], 0)
    assert [p for p, _ in h.problems + h.settling] == [str(path)]
    assert_sums(counted(engine.ledger), total())
    engine.close()


def _make_bad(kind: str, path: Path) -> None:
    if kind == "empty":
        path.write_bytes(b"")
    elif kind == "binary":
        path.write_bytes(os.urandom(2048).replace(b"{", b"\x00"))
    elif kind == "huge":
        path.write_bytes(dumps(messages_doc("x", [assistant("msg_huge0001", ms(T0), 5, 5)], pad="x" * 1_100_000)))
    elif kind == "folder":
        path.mkdir()
    elif kind == "symlink-loop":
        path.symlink_to(path.name)
    elif kind == "dangling-symlink":
        path.symlink_to(path.parent / "nowhere")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path.symlink_to("/dev/zero")
    elif kind == "not-utf8":
        path.write_bytes(b'{"messages": ["\xff\xfe"]}')


BAD = ["empty", "binary", "huge", "folder", "symlink-loop", "dangling-symlink", "fifo", "device", "not-utf8"]


@pytest.mark.parametrize("kind", BAD)
def test_bad_files_never_crash_and_are_listed(tmp_path, cline, sessions, kind):
    if kind in ("fifo", "device") and not hasattr(os, "mkfifo"):
        pytest.skip("FIFOs and /dev/zero are POSIX")
    engine = engine_for(tmp_path, cline, max_file_mb=1)
    engine.refresh()
    bad = [sessions / PLAIN / "agent_1796026733200_badbad.messages.json"]  # beside a good session
    sid = "1796026999999_badss"  # and as the lead file and the manifest of new sessions
    make_session(sessions, sid, T0, None)
    bad.append(sessions / sid / f"{sid}.messages.json")
    sid2 = "1796026999998_badmf"
    (sessions / sid2).mkdir()
    bad.append(sessions / sid2 / f"{sid2}.json")
    write_json(sessions / sid2 / f"{sid2}.messages.json", messages_doc(sid2, [assistant("msg_nocount1", ms(T0))]))
    for path in bad:
        _make_bad(kind, path)
    bump_mtime(sessions / PLAIN / f"{PLAIN}.messages.json")  # as Cline does when a subagent's file appears
    for _ in range(2):
        engine.refresh()
        assert_sums(counted(engine.ledger), total())
        health = engine.health()  # freshly written bad files are "being written" first
        listed = {p for p, _ in health.problems + health.settling}
        assert {str(p) for p in bad} <= listed
    assert "1796026999998_badmf" not in {r[0] for r in engine.ledger.query("SELECT id FROM sessions")}
    engine.close()


@pytest.mark.skipif(
    os.geteuid() == 0 if hasattr(os, "geteuid") else True,
    reason="root reads files whatever their mode (the 'folder' and 'symlink-loop' cases cover this)",
)
def test_unreadable_file_is_listed(tmp_path, cline, sessions):
    engine = engine_for(tmp_path, cline)
    path = sessions / LONG / f"{LONG}.messages.json"
    path.chmod(0)
    engine.refresh()
    assert str(path) in {p for p, _ in engine.health().problems}
    path.chmod(0o644)
    engine.refresh()
    assert_sums(counted(engine.ledger), total())
    engine.close()


def test_raising_the_size_limit_reads_a_file_that_was_too_large(tmp_path, empty):
    sid = "1796020000000_large"
    make_session(empty, sid, T0, [assistant("msg_large001", ms(T0), 100, 1, cost=0.5)])
    ledger = Ledger(tmp_path / "state" / "ledger.db", max_file_bytes=500)
    stats = ledger.refresh(empty)
    assert "too large" in stats.errors[str(empty / sid / f"{sid}.messages.json")]
    assert ledger.problems()
    ledger.max_file_bytes = 10**6
    ledger.refresh(empty)
    assert counted(ledger)[0] == 1 and ledger.problems() == []


@pytest.mark.parametrize("size_at_fstat", [0, 4, 10, 64])
def test_a_file_that_changed_size_since_fstat_is_read_to_its_end(size_at_fstat):

    r, w = os.pipe()  # what the reader finds after fstat: 10 bytes, whatever fstat said
    os.write(w, b"0123456789")
    os.close(w)
    try:
        assert trayburn_files._read_all(r, size_at_fstat, 100) == b"0123456789"
    finally:
        os.close(r)


def test_a_file_that_grew_past_the_limit_since_fstat_is_refused():

    r, w = os.pipe()
    os.write(w, b"x" * 5000)
    os.close(w)
    try:
        with pytest.raises(trayburn_files.FileProblem, match="too large"):
            trayburn_files._read_all(r, 10, 1000)
    finally:
        os.close(r)


def test_unlistable_sessions_folder_changes_nothing(ledger, sessions):
    ledger.refresh(sessions)
    aside = sessions.with_name("sessions.real")
    sessions.rename(aside)
    sessions.symlink_to(sessions.name)  # a loop: listing it fails
    stats = ledger.refresh(sessions)
    assert str(sessions) in stats.errors
    assert ledger.query("SELECT COUNT(*) FROM sessions WHERE removed=1")[0][0] == 0
    sessions.unlink()
    aside.rename(sessions)
    assert ledger.refresh(sessions).files_read == 0
    assert_sums(counted(ledger), total())


# ---- removed sessions ------------------------------------------------------------------------------------


def test_removed_session_keeps_counting_and_is_marked(ledger, sessions, tmp_path):
    ledger.refresh(sessions)
    shutil.move(sessions / LONG, tmp_path / "kept")
    stats = ledger.refresh(sessions)
    assert stats.removed_sessions == 1
    assert_sums(counted(ledger), total())
    assert ledger.query("SELECT id FROM sessions WHERE removed=1") == [(LONG,)]
    (summary,) = [s for s in session_list.sessions_report(ledger, PriceBook(), None, None) if s.id == LONG]
    assert summary.removed and summary.calls == expected_sessions()[LONG]["totals"]["calls"]
    assert ledger.problems() == []
    assert_no_write_needed(ledger, sessions)
    shutil.move(tmp_path / "kept", sessions / LONG)  # back, unchanged
    ledger.refresh(sessions)
    assert ledger.query("SELECT COUNT(*) FROM sessions WHERE removed=1")[0][0] == 0
    assert_sums(counted(ledger), total())
    assert_no_write_needed(ledger, sessions)


def test_calls_that_vanish_from_a_rewritten_file_keep_counting(ledger, empty):
    sid = "1796020000000_shrnk"
    make_session(empty, sid, T0, [assistant("m1", ms(T0), 100, 1), assistant("m2", ms(T0), 200, 2)])
    ledger.refresh(empty)
    path = empty / sid / f"{sid}.messages.json"
    write_in_place(path, dumps(messages_doc(sid, [assistant("m2", ms(T0), 200, 2)])))
    ledger.refresh(empty)
    assert counted(ledger)[:2] == (2, 300)


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
    day, before = (report.day_report(x, PriceBook(), date(2026, 11, 30)) for x in (led, fresh))
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
        session_list.sessions_report(ledger, PriceBook(), None, None)
        session_list.session_detail(ledger, PriceBook(), LONG)
        report.day_report(ledger, PriceBook(), date(2026, 11, 30))
        report.hourly_costs(ledger, PriceBook(), date(2026, 11, 30))
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


# ---- the rules, on hand-made sessions ------------------------------------------------------------------


def test_fork_counted_once_owned_by_the_earliest(ledger, empty):
    parent, fork = "1796020000000_paren", "1796020500000_forkd"
    shared = [assistant("msg_shared01", ms(T0), 1000, 10, cost=0.01), assistant("msg_shared02", ms(T0), 2000, 20)]
    make_session(
        empty,
        fork,
        "2026-11-30T09:00:00.000Z",
        shared + [assistant("msg_forkonly", ms(T0), 300, 3)],
        metadata={"title": "fork", "fork": {"forkedFromSessionId": parent}},
    )
    ledger.refresh(empty)  # the fork first: its copies count for now
    assert counted(ledger)[:2] == (3, 3300)
    make_session(empty, parent, T0, shared)
    ledger.refresh(empty)  # the parent appears: it owns what it had first
    assert counted(ledger)[:2] == (3, 3300)
    owners = dict(ledger.query("SELECT key, session_id FROM calls WHERE counted=1"))
    assert owners == {"msg_shared01": parent, "msg_shared02": parent, "msg_forkonly": fork}
    assert ledger.query("SELECT forked_from FROM sessions WHERE id=?", (fork,)) == [(parent,)]


def test_a_fork_with_no_messages_file_does_not_count_its_parent_again(ledger, empty):
    """A real /fork copies the parent's usage into the fork's `metadata.usage` (cline-format.md). While the fork
    has no readable messages file, that rollup must not count again what the parent's calls already count."""
    parent, fork = "1796020000000_paren", "1796020500000_forkd"
    make_session(empty, parent, T0, [assistant("msg_parent01", ms(T0), 1000, 10, cost=0.01)])
    usage = {"inputTokens": 1000, "outputTokens": 10, "cacheReadTokens": 0, "cacheWriteTokens": 0, "totalCost": 0.01}
    make_session(
        empty,
        fork,
        "2026-11-30T09:00:00.000Z",
        None,  # no messages file (not written yet, or lost)
        status="running",
        metadata={"title": "fork", "fork": {"forkedFromSessionId": parent}, "usage": usage},
    )
    ledger.refresh(empty)
    assert counted(ledger)[:2] == (1, 1000)  # the parent's one call, once


def test_copied_folder_counted_once(ledger, empty):
    a, b = "1796020000000_orign", "1796020000000_copyy"
    msgs = [assistant("msg_copied01", ms(T0), 1000, 10, cost=0.01), assistant("msg_copied02", ms(T0), 500, 5)]
    make_session(empty, a, T0, msgs)
    make_session(empty, b, T0, msgs, session_id=a)  # same start: a tie, still once
    ledger.refresh(empty)
    assert counted(ledger)[:2] == (2, 1500)
    assert len({s for (s,) in ledger.query("SELECT session_id FROM calls WHERE counted=1")}) == 1


def test_subagents_and_teammates_count_once_for_their_session(ledger, empty):
    sid = "1796020000000_teams"
    make_session(
        empty,
        sid,
        T0,
        [assistant("msg_lead0001", ms(T0), 1000, 10, tools=("spawn_agent",))],
        agents={
            "agent_1796020000100_abcdef.messages.json": ("subagent", [assistant("msg_sub00001", ms(T0), 200, 2)]),
            "worker__Ab12Cd.messages.json": ("teammate", [assistant("msg_team0001", ms(T0), 30, 3)]),
        },
    )
    ledger.refresh(empty)
    rows = sorted(ledger.query("SELECT key, session_id, agent FROM calls WHERE counted=1"))
    assert rows == [("msg_lead0001", sid, "lead"), ("msg_sub00001", sid, "subagent"), ("msg_team0001", sid, "teammate")]


def test_messages_without_ids_in_different_files_do_not_collide(ledger, empty):
    sid = "1796020000000_noids"
    lead, sub = assistant(None, ms(T0), 100, 1), assistant(None, ms(T0), 20, 2)
    del lead["id"], sub["id"]
    make_session(empty, sid, T0, [lead], agents={"agent_1796020000100_abcdef.messages.json": ("subagent", [sub])})
    ledger.refresh(empty)
    assert counted(ledger)[:3] == (2, 120, 3)


def test_tmp_files_ignored(ledger, empty):
    sid = "1796020000000_tmpfl"
    folder = make_session(empty, sid, T0, [assistant("msg_real0001", ms(T0), 100, 1)])
    extra = dumps(messages_doc(sid, [assistant("msg_temp0001", ms(T0), 999, 9)]))
    (folder / f"{sid}.messages.json.4242.0f8e2c1a.tmp").write_bytes(extra)
    (folder / f"{sid}.json.4242.0f8e2c1a.tmp").write_bytes(b"{")
    (folder / f"{sid}.compaction.json.1.2.tmp").write_bytes(extra)
    stats = ledger.refresh(empty)
    assert stats.files_read == 2 and stats.errors == {}
    assert counted(ledger)[:2] == (1, 100)


@pytest.mark.parametrize(
    "content", [None, b"", b"[1, 2]", b'{"session_id": ', b'"text"'], ids=["missing", "empty", "array", "cut", "string"]
)
def test_folder_without_a_parseable_manifest_is_not_a_session(ledger, empty, content):
    sid = "1796020000000_nomnf"
    folder = empty / sid
    write_json(folder / f"{sid}.messages.json", messages_doc(sid, [assistant("msg_orphan01", ms(T0), 100, 1)]))
    write_json(folder / "other.json", manifest(sid, T0))  # not <id>.json
    if content is not None:
        (folder / f"{sid}.json").write_bytes(content)
    ledger.refresh(empty)
    assert ledger.query("SELECT COUNT(*) FROM sessions")[0][0] == 0
    assert counted(ledger)[0] == 0
    if content is not None:  # a broken file that just changed is retried for a while (it may be mid-write)
        age(folder / f"{sid}.json")
        ledger.refresh(empty)
    assert_no_write_needed(ledger, empty)
    write_json(folder / f"{sid}.json", manifest(sid, T0))  # now it is one
    ledger.refresh(empty)
    assert ledger.query("SELECT id FROM sessions") == [(sid,)]
    assert counted(ledger)[:2] == (1, 100)


def test_rollup_from_usage_only_when_no_message_has_metrics(ledger, empty):
    sid = "1796020000000_rollu"
    raw = json.loads((QUIRKS / "manifests" / "rollup.json").read_text())
    usage = raw["metadata"]["usage"]
    make_session(empty, sid, T0, None, metadata=raw["metadata"])
    ledger.refresh(empty)
    assert_sums(
        counted(ledger),
        (
            1,
            usage["inputTokens"],
            usage["outputTokens"],
            usage["cacheReadTokens"],
            usage["cacheWriteTokens"],
            usage["totalCost"],
        ),
    )
    assert ledger.query("SELECT ts_ms FROM calls") == [(ms(T0),)]
    path = empty / sid / f"{sid}.messages.json"
    write_json(path, messages_doc(sid, [user("u1", ms(T0))]))  # a file with no metrics yet
    ledger.refresh(empty)
    assert counted(ledger)[0] == 1
    write_json(path, messages_doc(sid, [user("u1", ms(T0)), assistant("msg_first001", ms(T0), 10, 1, cost=0.5)]))
    ledger.refresh(empty)
    assert_sums(counted(ledger), (1, 10, 1, 0, 0, 0.5))  # the messages replace the rollup, never add to it


def test_rollups_of_manifests_without_session_id_stay_apart(ledger, empty):
    raw = json.loads((QUIRKS / "manifests" / "rollup.json").read_text())
    for sid in ("1796020000000_anon1", "1796020000001_anon2"):
        make_session(empty, sid, T0, None, metadata=raw["metadata"], session_id=None)
    ledger.refresh(empty)
    assert counted(ledger)[0] == 2


def test_aggregate_usage_alone_counts_nothing(ledger, empty):
    raw = json.loads((QUIRKS / "manifests" / "aggregate_only.json").read_text())
    make_session(empty, "1796020000000_aggro", T0, None, metadata=raw["metadata"])
    ledger.refresh(empty)
    assert counted(ledger)[0] == 0


def test_co_located_messages_preferred_over_messages_path(ledger, empty, tmp_path):
    sid = "1796020000000_coloc"
    elsewhere = tmp_path / "elsewhere" / f"{sid}.messages.json"
    write_json(elsewhere, messages_doc(sid, [assistant("msg_stale001", ms(T0), 999, 9)]))
    make_session(empty, sid, T0, [assistant("msg_here0001", ms(T0), 100, 1)], messages_path=str(elsewhere))
    stats = ledger.refresh(empty)
    assert stats.files_read == 2  # manifest and the co-located file; never the other
    assert ledger.query("SELECT key FROM calls WHERE counted=1") == [("msg_here0001",)]


def test_messages_path_used_when_co_located_is_missing(ledger, empty, tmp_path):
    sid = "1796020000000_remot"
    elsewhere = tmp_path / "elsewhere" / f"{sid}.messages.json"
    write_json(elsewhere, messages_doc(sid, [assistant("msg_remote01", ms(T0), 100, 1)]))
    make_session(empty, sid, T0, None, messages_path=str(elsewhere))
    ledger.refresh(empty)
    assert ledger.query("SELECT key, session_id FROM calls WHERE counted=1") == [("msg_remote01", sid)]
    assert_no_write_needed(ledger, empty)
    append_call(elsewhere, assistant("msg_remote02", ms(T0), 200, 2))
    assert ledger.refresh(empty).files_read == 1
    assert counted(ledger)[:2] == (2, 300)
    # the co-located file appears (with both calls): used from now on, nothing doubled
    shutil.copy(elsewhere, empty / sid / f"{sid}.messages.json")
    ledger.refresh(empty)
    assert counted(ledger)[:2] == (2, 300)
    assert_no_write_needed(ledger, empty)


def test_messages_path_used_when_co_located_never_parsed(ledger, empty, tmp_path):
    sid = "1796020000000_brokn"
    elsewhere = tmp_path / "elsewhere" / f"{sid}.messages.json"
    write_json(elsewhere, messages_doc(sid, [assistant("msg_remote01", ms(T0), 100, 1)]))
    make_session(empty, sid, T0, None, messages_path=str(elsewhere))
    (empty / sid / f"{sid}.messages.json").write_bytes(b"\x00\x01")
    ledger.refresh(empty)
    assert counted(ledger)[:2] == (1, 100)


def test_messages_path_into_another_session_is_not_borrowed(ledger, empty):
    a, b = "1796020000000_owner", "1796020000001_stale"
    make_session(empty, a, T0, [assistant("msg_owned001", ms(T0), 100, 1)])
    make_session(
        empty, b, "2026-11-30T07:00:00.000Z", None, messages_path=str(empty / a / f"{a}.messages.json")
    )  # b would own it: it started earlier
    ledger.refresh(empty)
    assert ledger.query("SELECT session_id FROM calls WHERE counted=1") == [(a,)]


def test_missing_time_is_the_session_start_and_missing_model_the_manifests(ledger, empty):
    sid = "1796020000000_notsm"
    msg = assistant("msg_nots0001", 0, 100, 1, model=None)
    make_session(empty, sid, "2026-11-29T23:59:00.000Z", [msg], model="deepseek-chat")
    ledger.refresh(empty)
    assert ledger.query("SELECT ts_ms, model FROM calls") == [(ms("2026-11-29T23:59:00Z"), "deepseek-chat")]


def test_missing_time_without_a_start_is_the_time_in_the_session_id(ledger, empty):
    sid = "1796020000000_nostr"
    make_session(empty, sid, None, [assistant("msg_nost0001", 0, 100, 1), assistant("msg_nost0002", None, 200, 2)])
    ledger.refresh(empty)
    assert ledger.query("SELECT ts_ms FROM calls") == [(1796020000000,)] * 2
    assert ledger.query("SELECT started_ms FROM sessions") == [(None,)]  # the start itself stays unknown


def test_missing_time_without_a_start_or_a_time_in_the_id_is_the_manifests_mtime(ledger, empty):
    folder = make_session(
        empty,
        "imported-session",
        None,
        [assistant("msg_nost0001", 0, 100, 1)],
        metadata={"usage": {"inputTokens": 5, "outputTokens": 1}},
    )
    make_session(empty, "99_abcde", None, None, metadata={"usage": {"inputTokens": 7, "outputTokens": 1}})
    when_ns = ms("2026-11-30T06:00:00Z") * 10**6
    for path in (folder / "imported-session.json", empty / "99_abcde" / "99_abcde.json"):
        os.utime(path, ns=(when_ns, when_ns))
    ledger.refresh(empty)
    assert ledger.query("SELECT key, ts_ms FROM calls ORDER BY key") == [
        ("99_abcde:rollup", when_ns // 10**6),
        ("msg_nost0001", when_ns // 10**6),
    ]


def test_quirk_files_in_sessions(ledger, empty):
    """The hand-made messages files, as the lead files of sessions: parsed and counted like the parser says."""
    from trayburn.sources.cline_cli.parse import parse_messages

    want = 0
    for i, path in enumerate(sorted((QUIRKS / "messages").glob("*.json"))):
        sid = f"17960200000{i:02d}_quirk"
        (empty / sid).mkdir()
        write_json(empty / sid / f"{sid}.json", manifest(sid, T0))
        shutil.copy(path, empty / sid / f"{sid}.messages.json")
        want += len(parse_messages(path.read_bytes(), sid).calls)
    stats = ledger.refresh(empty)
    assert stats.errors == {}
    assert counted(ledger)[0] == want
    zero = ledger.query("SELECT cost FROM calls WHERE key='msg_zero'")
    assert zero == [(0.0,)]  # a reported 0 is kept as 0, not as "no cost"


def copies_of_the_corpus(dest: Path, n: int) -> None:
    """n renamed copies of every recorded session (as if copied between machines): same messages."""
    for i in range(n):
        for folder in REAL.iterdir():
            sid = f"{folder.name}{i}"
            (dest / sid).mkdir()
            for f in folder.iterdir():
                (dest / sid / f.name.replace(folder.name, sid)).write_bytes(f.read_bytes())


def test_threads_sharing_one_ledger_refresh_safely(ledger, empty):
    import threading

    copies_of_the_corpus(empty, 5)
    barrier, errors = threading.Barrier(4), []

    def refresh():
        barrier.wait(30)
        try:
            ledger.refresh(empty)
            counted(ledger)  # a read from another thread, maybe during someone's refresh
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=refresh) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    assert_sums(counted(ledger), total())  # five copies of everything: still each call once
    owners = {s for (s,) in ledger.query("SELECT DISTINCT session_id FROM calls WHERE counted=1")}
    assert owners == {f"{sid}0" for sid in expected_sessions()}  # same starts: the first name wins, always


def test_a_file_replaced_with_the_same_size_and_time_is_seen_by_its_inode(ledger, empty):
    sid = "1796020000000_inode"
    make_session(empty, sid, T0, [assistant("m1", ms(T0), 100, 1, cost=0.5)])
    ledger.refresh(empty)
    path = empty / sid / f"{sid}.messages.json"
    st = path.stat()
    new = path.with_name("new")
    new.write_bytes(path.read_bytes().replace(b'"cost": 0.5', b'"cost": 0.7'))
    os.utime(new, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(new, path)
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    assert ledger.refresh(empty).files_read == 1
    assert counted(ledger)[5] == pytest.approx(0.7)


# ---- which session folders a refresh lists again (files.scan) -------------------------------------------


def sub_file(folder: Path, mid: str, tokens: int) -> Path:
    """A subagent's messages file in a session folder, with one call of `tokens` input tokens."""
    path = folder / f"agent_{mid}.messages.json"
    write_json(path, messages_doc(f"{folder.name}__{mid}", [assistant(mid, ms(T0), tokens, 1)], agent="subagent"))
    return path


@pytest.fixture
def clock():
    return [0.0]  # seconds; a refresh sweeps every folder when FULL_SWEEP_S have passed since the last sweep


@pytest.fixture
def timed(tmp_path, clock):
    led = Ledger(tmp_path / "state" / "ledger.db", clock=lambda: clock[0], wall_ns=a_minute_later)
    yield led
    led.close()


def test_a_subagent_file_added_to_a_running_session_is_found_at_the_next_refresh(timed, empty):
    sid = "1796020000000_runng"
    folder = make_session(empty, sid, T0, [assistant("msg_lead0001", ms(T0), 100, 1)], status="running")
    timed.refresh(empty)
    timed.refresh(empty)  # its listing is now the cached one (a first refresh keeps none)
    sub_file(folder, "msg_sub00001", 20)  # during a tool call: the lead's files stay as they were
    assert timed.refresh(empty).files_read == 1
    assert counted(timed)[:2] == (2, 120)
    assert timed.refresh(empty).files_read == 0


def test_a_subagent_file_added_to_a_completed_session_whose_lead_changes_is_found_at_once(timed, empty):
    sid = "1796020000000_compl"
    folder = make_session(empty, sid, T0, [assistant("msg_lead0001", ms(T0), 100, 1)])
    timed.refresh(empty)
    timed.refresh(empty)
    assert counted(timed)[:2] == (1, 100)
    sub_file(folder, "msg_sub00001", 20)
    lead = folder / f"{sid}.messages.json"
    append_call(lead, assistant("msg_lead0002", ms(T0), 300, 3))
    bump_mtime(lead)
    assert timed.refresh(empty).files_read == 2
    assert counted(timed)[:2] == (3, 420)


def test_a_subagent_file_added_to_a_quiet_completed_session_is_found_by_the_sweep(timed, clock, empty):
    sid = "1796020000000_quiet"
    folder = make_session(empty, sid, T0, [assistant("msg_lead0001", ms(T0), 100, 1)])
    other = make_session(empty, "1796020000001_other", T0, [assistant("msg_othr0001", ms(T0), 1000, 1)])
    timed.refresh(empty)
    sub_file(folder, "msg_sub00001", 20)
    for _ in range(3):  # maybe found before the sweep, maybe not; the totals are exact either way
        clock[0] += FULL_SWEEP_S / 4
        timed.refresh(empty)
        assert counted(timed)[:2] in ((2, 1100), (3, 1120))
    sub_file(other, "msg_sub00002", 5)
    clock[0] += FULL_SWEEP_S / 4  # a full sweep is due
    timed.refresh(empty)
    assert counted(timed)[:2] == (4, 1125)
    assert timed.refresh(empty).files_read == 0


def test_a_file_another_process_found_is_not_marked_gone(timed, tmp_path, empty):
    sid = "1796020000000_twopr"
    folder = make_session(empty, sid, T0, [assistant("msg_lead0001", ms(T0), 100, 1)])
    timed.refresh(empty)
    timed.refresh(empty)  # its listing is now the cached one
    path = sub_file(folder, "msg_sub00001", 20)
    other = Ledger(timed.path, wall_ns=a_minute_later)  # a new process lists every folder
    assert other.refresh(empty).files_read == 1
    other.close()
    assert timed.refresh(empty).files_read == 0  # its cached listing lacks the file: listed again, not "gone"
    assert timed.query("SELECT gone FROM files WHERE path=?", (str(path),)) == [(0,)]
    assert counted(timed)[:2] == (2, 120)


def test_a_file_removed_from_a_completed_session_is_gone_at_the_next_refresh(timed, empty):
    sid = "1796020000000_rmsub"
    folder = make_session(empty, sid, T0, [assistant("msg_lead0001", ms(T0), 100, 1)])
    path = sub_file(folder, "msg_sub00001", 20)
    timed.refresh(empty)
    timed.refresh(empty)
    path.unlink()
    timed.refresh(empty)
    assert timed.query("SELECT gone FROM files WHERE path=?", (str(path),)) == [(1,)]
    assert counted(timed)[:2] == (2, 120)  # the money was spent
    path.with_name(f"{sid}.messages.json").unlink()  # the lead's file too: its folder is listed at every refresh
    timed.refresh(empty)
    sub_file(folder, "msg_sub00003", 7)
    timed.refresh(empty)
    assert counted(timed)[:2] == (3, 127)


# ---- the Source seam: a second source is a new class, not an edit of the refresh ------------------------


class ExportFile:
    """A minimal other-machine source: one JSON file {"sessions": [...], "calls": [...]}, read when its
    stat changes, its sessions stored as `<origin>/<id>`."""

    def __init__(self, path: Path, origin: str):
        self.path, self.origin, self.feed = path, origin, f"machine:{origin}"
        self.stat = None

    def scan(self, settled):
        from trayburn.sources.base import FileStat, Seen

        try:
            self.stat = FileStat(str(self.path), files_stat(str(self.path)))
        except OSError:
            self.stat = None
        return Seen(listed=True, sessions=1 if self.stat else 0, files=1 if self.stat else 0)

    def needs_work(self, known):
        from trayburn.sources.base import changed

        mine = [p for p, k in known.items() if k.feed == self.feed and not k.gone]
        return (self.stat is None) != (not mine) or (
            self.stat is not None and changed(self.stat, known.get(self.stat.path))
        )

    def ingest(self, writer):
        from trayburn.sources.base import Call, SessionRecord, qualified_id

        if self.stat is None:
            return
        writer.seen(self.stat.path)
        got = writer.read(self.stat, self.origin, "machine")
        if got is None:
            for s in self.known_sessions:
                writer.live(s)
            return
        doc = json.loads(got[0])
        file_id = writer.ok(self.stat.path, self.origin, "machine", None, got[1])
        self.known_sessions = []
        for s in doc["sessions"]:
            sid = qualified_id(self.origin, s["id"])
            self.known_sessions.append(sid)
            writer.live(sid)
            writer.session(
                SessionRecord(sid, None, s["started_ms"], None, "completed", model=s["model"]), None, file_id, 0
            )
            calls = [
                Call(
                    c["key"],
                    i,
                    c["ts_ms"],
                    c["model"],
                    c["input"],
                    c["output"],
                    0,
                    0,
                    c["cost"],
                    (),
                    provider="openrouter",
                )
                for i, c in enumerate(doc["calls"])
                if c["session"] == s["id"]
            ]
            writer.calls(sid, file_id, "lead", calls, 0)

    known_sessions: list[str] = []


def files_stat(path: str):
    from trayburn.files import stat_file

    return stat_file(path)


def test_a_second_source_counts_a_copied_session_once_and_leaves_the_other_feed_alone(tmp_path, sessions, ledger):
    ledger.refresh(sessions)
    before = counted(ledger)
    (sid, key, ts, started), *_ = ledger.query(
        "SELECT c.session_id, c.key, c.ts_ms, s.started_ms FROM calls c JOIN sessions s ON s.id=c.session_id"
        " WHERE c.counted=1 AND c.seq>=0 LIMIT 1"
    )
    export = tmp_path / "laptop.json"
    session = {"id": sid, "started_ms": started, "model": "gpt-4o"}
    own = {"session": "1796000000000_other", "key": "msg_laptop01", "ts_ms": ts, "model": "gpt-4o"}
    copied = {"session": sid, "key": key, "ts_ms": ts, "model": "gpt-4o", "input": 5, "output": 5, "cost": 9.0}
    other = {"id": "1796000000000_other", "started_ms": started, "model": "gpt-4o"}
    write_json(export, {"sessions": [session, other], "calls": [copied, own | {"input": 7, "output": 1, "cost": 0.5}]})
    source = ExportFile(export, "laptop")
    ledger.refresh(source)
    # the copied call counts once (this machine's row: same start, its id sorts first); the laptop's own call adds
    assert counted(ledger)[0] == before[0] + 1
    assert ledger.query("SELECT session_id, provider FROM calls WHERE key='msg_laptop01'") == [
        ("laptop/1796000000000_other", "openrouter")
    ]
    assert ledger.origins() == ["laptop"]
    ledger.refresh(sessions)  # the CLI's refresh leaves the laptop's sessions alone, and the reverse
    assert ledger.query("SELECT COUNT(*) FROM sessions WHERE removed=1") == [(0,)]
    assert ledger.refresh(source).files_read == 0  # unchanged: not read again
    export.unlink()
    ledger.refresh(source)  # the laptop's file went: its history stays, marked removed
    assert ledger.query("SELECT id FROM sessions WHERE removed=1 ORDER BY id") == [
        ("laptop/1796000000000_other",),
        (f"laptop/{sid}",),
    ]
    assert counted(ledger)[0] == before[0] + 1
    assert ledger.query("SELECT COUNT(*) FROM sessions WHERE removed=1 AND origin IS NULL") == [(0,)]
