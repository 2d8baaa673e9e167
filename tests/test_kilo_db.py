"""Reading kilo.db while Kilo uses it: a real `sqlite3` process writing in WAL mode, a lock, a fork, a delete and an
archive, subagent sessions, both OpenCode generations, a missing and a newer schema. Figures come from the rows
the test wrote (or the recordings' EXPECTED.json), the ledger is real."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from helpers.corpus import Ledger, a_minute_later, counted
from helpers.kilodb import FORK, V1, Writer, as_trayburn, expected, message_sql, q, session_sql, step_sql, unpack

from trayburn.sources.kilo import read
from trayburn.sources.kilo.places import Database
from trayburn.sources.kilo.source import KiloSource

T = 1_796_190_000_000  # 2026-12-02, after the recordings


@pytest.fixture
def led(tmp_path):
    ledger = Ledger(tmp_path / "state" / "ledger.db", wall_ns=a_minute_later)
    yield ledger
    ledger.close()


@pytest.fixture
def db(tmp_path) -> Path:
    return unpack(V1, tmp_path / "rec") / "xdg_data" / "kilo" / "kilo.db"


def source(*paths: Path) -> KiloSource:
    return KiloSource([Database(p, "test") for p in paths])


def totals(led) -> tuple:
    """(calls, input, output, cache read, cache write, reported cost) of the counted calls."""
    c = counted(led)
    return (*c[:5], round(c[5], 9))


def recorded() -> tuple:
    return as_trayburn(expected()["total"])


def plus(base: tuple, *calls: tuple[tuple[int, int, int, int, int], float]) -> tuple:
    n, i, o, cr, cw, cost = base
    for (ti, to, tr, tcr, tcw), c in calls:
        n, i, o, cr, cw, cost = n + 1, i + ti + tcr + tcw, o + to + tr, cr + tcr, cw + tcw, cost + c
    return n, i, o, cr, cw, round(cost, 9)


A = ((1000, 50, 10, 200, 300), 0.0125)
B = ((2000, 70, 0, 0, 0), 0.0071)


def test_the_wal_is_read_while_a_writer_holds_it(led, db):
    """A sqlite3 process keeps the database open in WAL mode (nothing checkpointed): what it committed is read,
    what it has not committed yet is not, and a later read looks only at the session that changed."""
    src = source(db)
    led.refresh(src)
    assert totals(led) == recorded()
    w = Writer(db)
    try:
        w.run(session_sql("ses_new", T, "New"), step_sql(1, "ses_new", T + 10, *A))
        assert db.with_name("kilo.db-wal").stat().st_size > 0
        w.run("BEGIN IMMEDIATE;", step_sql(2, "ses_new", T + 20, *B))  # held open: a write lock, not committed
        stats = led.refresh(src)
        assert totals(led) == plus(recorded(), A)
        assert list(src.last[str(db)].found) == ["ses_new"]  # the other sessions were not read again
        assert stats.errors == {}
        w.run("COMMIT;")
        led.refresh(src)
        assert totals(led) == plus(recorded(), A, B)
        assert list(src.last[str(db)].found) == ["ses_new"]
    finally:
        w.close()  # (the last connection to close checkpoints the -wal into the db and removes it)
    led.refresh(src)
    again = led.refresh(src)
    assert again.files_read == 0 and totals(led) == plus(recorded(), A, B)  # unchanged db and -wal: a stat


def test_a_message_filled_at_its_step_end_and_a_new_process(led, db, tmp_path):
    """Kilo inserts an assistant message with zero usage and fills it at the step's end (with its step-finish
    part): no call while empty, one call (same key) once filled. A new source (another process) over the same
    ledger starts from the marks the ledger holds."""
    w = Writer(db)
    try:
        w.run(session_sql("ses_live", T, "Live"))
        w.run(message_sql("msg_t0001", "ses_live", T + 10, {"role": "assistant", "modelID": "fake-sonnet",
              "providerID": "fakeant", "time": {"created": T + 10}, "cost": 0,
              "tokens": {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}}))  # fmt: skip
        led.refresh(source(db))
        assert totals(led) == recorded()
        assert led.query("SELECT status FROM sessions WHERE id='kilo:ses_live'") == [("running",)]
        w.run(step_sql(1, "ses_live", T + 10, *A))  # the same message filled, its step-finish added
        fresh = source(db)
        led.refresh(fresh)
        assert totals(led) == plus(recorded(), A)
        assert list(fresh.last[str(db)].found) == ["ses_live"]
        assert led.query("SELECT key FROM calls WHERE session_id='kilo:ses_live'") == [("kilo:msg_t0001",)]
    finally:
        w.close()


def test_a_locked_database_is_retried_and_loses_nothing(led, db):
    """A writer holding an exclusive lock (locking_mode=EXCLUSIVE): the refresh says the database is busy, keeps
    every call and session it held, and reads it at the next refresh once the lock is gone."""
    src = source(db)
    led.refresh(src)
    w = Writer(db, "PRAGMA locking_mode=EXCLUSIVE;")
    try:
        w.run("BEGIN EXCLUSIVE;", session_sql("ses_late", T, "Late"), step_sql(1, "ses_late", T + 5, *A), "COMMIT;")
        stats = led.refresh(src)
        assert "busy" in stats.errors[str(db)] and "next refresh" in stats.errors[str(db)]
        assert totals(led) == recorded()
        assert led.query("SELECT count(*) FROM sessions WHERE removed=1") == [(0,)]
    finally:
        w.close()  # (the lock goes with the connection)
    stats = led.refresh(src)
    assert stats.errors == {} and totals(led) == plus(recorded(), A)


def test_subagent_sessions_are_filed_under_their_top_session(led, db):
    """A child session (parent_id) and its own child: their calls in the top session, marked with their agent;
    the top message that ran the `task` tool carries the children's cost in its `cost`, never counted."""
    w = Writer(db)
    try:
        w.run(session_sql("ses_top", T, "Top"), session_sql("ses_kid", T + 1, "Kid", parent="ses_top"),
              session_sql("ses_grandkid", T + 2, "Grandkid", parent="ses_kid"))  # fmt: skip
        w.run(step_sql(1, "ses_kid", T + 10, *A, model="fake-tiny"), step_sql(2, "ses_grandkid", T + 20, *B))
        top = step_sql(3, "ses_top", T + 30, *A)
        w.run(top.replace('"cost": 0.0125', f'"cost": {0.0125 + 0.0125 + 0.0071}', 1))  # as Kilo writes it
    finally:
        w.close()
    led.refresh(source(db))
    assert totals(led) == plus(recorded(), A, B, A)
    rows = led.query("SELECT session_id, agent, cost FROM calls WHERE key LIKE 'kilo:msg_t%' ORDER BY key")
    assert rows == [
        ("kilo:ses_top", "code", 0.0125),
        ("kilo:ses_top", "code", 0.0071),
        ("kilo:ses_top", "lead", 0.0125),
    ]
    assert led.query("SELECT count(*) FROM sessions WHERE id IN ('kilo:ses_kid', 'kilo:ses_grandkid')") == [(0,)]


def test_fork_copies_delete_and_archive(led, tmp_path):
    """The fork recording: a fork's copies of earlier messages (original times, cost 0) are not calls; a session
    Kilo deleted is marked removed and its calls still count; an archived one only changes its status."""
    kdb = unpack(FORK, tmp_path / "fork") / "xdg_data" / "kilo" / "kilo.db"
    src = source(kdb)
    led.refresh(src)
    exp = expected(FORK)
    assert totals(led) == as_trayburn(exp["total"])
    fork = next(f for sid, f in src.last[str(kdb)].found.items() if sid.startswith("ses_dcabda1b"))
    assert (len(fork.calls), fork.copies) == (1, 4)
    base = next(s for s, v in exp["sessions"].items() if v["title"] == "Base")
    after = next(s for s, v in exp["sessions"].items() if v["title"] == "After delete")
    w = Writer(kdb)
    try:
        w.run(f"DELETE FROM session WHERE id={q(after)};", f"UPDATE session SET time_archived={T} WHERE id={q(base)};")
    finally:
        w.close()
    led.refresh(src)
    assert totals(led) == as_trayburn(exp["total"])  # spent is spent: the deleted session's call still counts
    status = dict(led.query("SELECT id, CASE WHEN removed THEN 'removed' ELSE status END FROM sessions"))
    assert (status[f"kilo:{after}"], status[f"kilo:{base}"]) == ("removed", "archived")


def test_both_opencode_generations_count_each_call_once(led, db):
    """OpenCode 2's `session_message`: its copy of a 1.x message (a backfill row) is the same call as the
    `message` row it copies, before and after that row is gone; a native assistant row counts on its own."""
    plain = "ses_dcaf9cbe0ffejgzvqqsriuj4w7"  # "Plain hello": 1 call, 1500/60/0/0/800, $0.0084
    original = (
        sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        .execute(
            "SELECT time_created FROM message WHERE session_id=? AND json_extract(data,'$.role')='assistant'", (plain,)
        )
        .fetchone()[0]
    )
    copy = {"type": "assistant", "model": {"id": "fake-sonnet", "providerID": "fakeant"}, "cost": 0.0084,
            "tokens": {"input": 1500, "output": 60, "reasoning": 0, "cache": {"read": 0, "write": 800}}}  # fmt: skip
    native = {**copy, "cost": 0.0071, "tokens": {"input": 2000, "output": 70, "reasoning": 0,
                                                  "cache": {"read": 0, "write": 0}}}  # fmt: skip
    v2 = "INSERT INTO session_message(id, session_id, type, seq, time_created, time_updated, data) VALUES"
    w = Writer(db)
    try:
        backfill = q(read.BACKFILL + "00000001_ab")
        w.run(f"{v2}({backfill}, {q(plain)}, 'assistant', 1, {original}, {original}, {q(copy)});",
              session_sql("ses_two", T, "Two"),
              f"{v2}('smsg_native', 'ses_two', 'assistant', 1, {T + 5}, {T + 5}, {q(native)});")  # fmt: skip
        led.refresh(src := source(db))
        assert totals(led) == plus(recorded(), B)
        assert src.last[str(db)].found[plain].v2_copies == 1
        w.run(f"DELETE FROM message WHERE session_id={q(plain)};")  # the 1.x rows gone: the copy stands alone
        led.refresh(src)
        assert totals(led) == plus(recorded(), B)
    finally:
        w.close()


def test_a_missing_or_newer_schema_says_so_and_loses_nothing(led, db, tmp_path):
    """A database without the tables trayburn reads: a clear problem, the calls already counted kept, the other
    database still read. A newer migration with the same tables is read as usual."""
    other = tmp_path / "other" / "kilo.db"
    other.parent.mkdir()
    w = Writer(other)
    try:
        w.run("CREATE TABLE session(id TEXT PRIMARY KEY);",
              "CREATE TABLE migration(id TEXT PRIMARY KEY, time_completed INTEGER);",
              "INSERT INTO migration VALUES('20270101000000_session_v3', 1);")  # fmt: skip
    finally:
        w.close()
    src = source(db, other)
    stats = led.refresh(src)
    assert (
        "has no column parent_id" in stats.errors[str(other)]
        and "20270101000000_session_v3" in stats.errors[str(other)]
    )
    assert totals(led) == recorded()
    w = Writer(db)
    try:
        w.run("ALTER TABLE part RENAME TO part_v3;")  # Kilo moved on: what was counted stays counted
    finally:
        w.close()
    stats = led.refresh(src)
    assert "has no table 'part'" in stats.errors[str(db)]
    assert totals(led) == recorded() and led.query("SELECT count(*) FROM sessions WHERE removed=1") == [(0,)]
    w = Writer(db)
    try:
        w.run("ALTER TABLE part_v3 RENAME TO part;", "INSERT INTO migration VALUES('20270101000000_newer', 1);",
              session_sql("ses_newer", T, "Newer"), step_sql(1, "ses_newer", T + 5, *A))  # fmt: skip
    finally:
        w.close()
    stats = led.refresh(src)
    assert str(db) not in stats.errors and totals(led) == plus(recorded(), A)
    assert src.last[str(db)].newer_schema == "20270101000000_newer"
    assert read.survey(str(db))["newer"]


def test_a_private_copy_reads_the_same(db):
    """Where read-only access cannot work (a -wal without its -shm in a folder trayburn may not write), the
    db and its -wal are copied and the copy read: the same sessions and calls, the last one from the -wal."""
    direct, copied = read.read(str(db), {}), read._read_copy(str(db), {})
    assert copied.copied and not direct.copied
    assert {s: [c for c in f.calls] for s, f in copied.found.items()} == {
        s: [c for c in f.calls] for s, f in direct.found.items()
    }
    assert len(direct.sessions) == 7 and sum(len(f.calls) for f in direct.found.values()) == 15
