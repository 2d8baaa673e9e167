"""Broken, half-written, unreadable and removed files: the ledger never crashes, keeps what it had,
and counts what comes back; which session folders a refresh lists again."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from helpers.corpus import (
    Ledger,
    a_minute_later,
    assert_sums,
    assistant,
    bump_mtime,
    counted,
    dumps,
    expected,
    expected_sessions,
    isolated_env,
    make_session,
    messages_doc,
    ms,
    write_in_place,
    write_json,
)
from helpers.ledgers import LONG, PLAIN, T0, append_call, assert_no_write_needed, cline, empty, sessions, total  # noqa: F401 (fixtures)

from trayburn import files
from trayburn.engine import Engine
from trayburn.figures.day import sessions_report
from trayburn.pricing import PriceBook
from trayburn.sources.cline_cli.layout import FULL_SWEEP_S

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
        assert files._read_all(r, size_at_fstat, 100) == b"0123456789"
    finally:
        os.close(r)


def test_a_file_that_grew_past_the_limit_since_fstat_is_refused():

    r, w = os.pipe()
    os.write(w, b"x" * 5000)
    os.close(w)
    try:
        with pytest.raises(files.FileProblem, match="too large"):
            files._read_all(r, 10, 1000)
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
    (summary,) = [s for s in sessions_report(ledger, PriceBook(), None, None) if s.id == LONG]
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
