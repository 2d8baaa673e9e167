"""A messages file rewritten in place while trayburn refreshes, as Cline does it: opened without
truncation, one write(), then truncate; growing call by call. Whatever a refresh catches (a
whole file, or one cut mid-write), the calls count once: never lost, never doubled."""

from __future__ import annotations

import contextlib
import multiprocessing
import queue
import threading

import pytest
from helpers.corpus import (
    REWRITE_SID,
    REWRITE_START,
    Ledger,
    age,
    counted,
    dumps,
    manifest,
    messages_doc,
    rewrite_call,
    rewrite_session,
    write_in_place,
)

CALLS = 60


def prefix_sums(n: int) -> tuple:
    calls = [rewrite_call(i)["metrics"] for i in range(n)]
    keys = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens")
    return (n, *(sum(c[k] for c in calls) for k in keys), sum(c["cost"] for c in calls))


def assert_prefix(got: tuple, n: int) -> None:
    want = prefix_sums(n)
    assert got[:5] == want[:5]
    assert got[5] == pytest.approx(want[5], abs=1e-9)


def check_progress(ledger, seen: int) -> int:
    """After any refresh: the calls counted are exactly the first n written (n never going down),
    each once. Until a messages file with metrics has been read, the manifest's usage may stand in
    for them (rule 6), never beside them."""
    got = counted(ledger, "key NOT LIKE '%:rollup'")
    assert seen <= got[0] <= CALLS
    assert_prefix(got, got[0])
    rollups = counted(ledger, "key LIKE '%:rollup'")[0]
    assert rollups == 0 or (rollups == 1 and got[0] == 0)
    return got[0]


def start_session(sessions):
    folder = sessions / REWRITE_SID
    folder.mkdir(parents=True)
    write_in_place(folder / f"{REWRITE_SID}.json", dumps(manifest(REWRITE_SID, REWRITE_START, status="running")))
    write_in_place(folder / f"{REWRITE_SID}.messages.json", dumps(messages_doc(REWRITE_SID, [])))
    return folder


def refresh_while_written(ledger, sessions, ready, done, writer) -> dict:
    """Refresh in a loop while the writer writes: before each refresh, hand it a token, unless the last
    one is still untaken (the queues hold one: tokens piling up while the writer is slow would fill a
    process queue's 64 KiB pipe, and its feeder thread would then block this process at exit)."""
    seen, caught = 0, 0
    writer.start()
    while not done.is_set():
        with contextlib.suppress(queue.Full):
            ready.put_nowait(True)
        stats = ledger.refresh(sessions)
        caught += bool(stats.errors)
        seen = check_progress(ledger, seen)
    writer.join(60)
    return {"refreshes_that_caught_a_partial_file": caught, "last_count_in_loop": seen}


def finish(ledger, sessions) -> None:
    stats = ledger.refresh(sessions)
    assert stats.errors == {}
    assert_prefix(counted(ledger), CALLS)
    assert ledger.problems() == []
    assert ledger.query("SELECT COUNT(*) FROM calls WHERE key LIKE '%:rollup'")[0][0] == 0
    assert ledger.query("SELECT status FROM sessions") == [("completed",)]
    for path in sessions.rglob("*.json"):  # written a moment ago: re-read once (the racy-timestamp rule) ...
        age(path)
    assert ledger.refresh(sessions).files_read > 0
    assert_prefix(counted(ledger), CALLS)
    again = ledger.refresh(sessions)  # ... then trusted
    assert (again.files_read, again.bytes_read) == (0, 0)


def test_rewrite_in_place_by_a_thread(tmp_path):
    sessions = tmp_path / "sessions"
    folder = start_session(sessions)
    ledger = Ledger(tmp_path / "state" / "ledger.db")
    ready, done = queue.Queue(maxsize=1), threading.Event()
    writer = threading.Thread(target=rewrite_session, args=(folder, CALLS, ready, done), daemon=True)
    info = refresh_while_written(ledger, sessions, ready, done, writer)
    finish(ledger, sessions)
    print(info)
    ledger.close()


def test_rewrite_in_place_by_another_process(tmp_path):
    sessions = tmp_path / "sessions"
    folder = start_session(sessions)
    ledger = Ledger(tmp_path / "state" / "ledger.db")
    ctx = multiprocessing.get_context("spawn")
    ready, done = ctx.Queue(maxsize=1), ctx.Event()
    writer = ctx.Process(target=rewrite_session, args=(folder, CALLS, ready, done))
    info = refresh_while_written(ledger, sessions, ready, done, writer)
    assert writer.exitcode == 0
    finish(ledger, sessions)
    print(info)
    ledger.close()


def test_free_running_writer(tmp_path):
    """No pacing: the writer rewrites as fast as it can while this process refreshes; the end is exact."""
    sessions = tmp_path / "sessions"
    folder = start_session(sessions)
    ledger = Ledger(tmp_path / "state" / "ledger.db")
    done = threading.Event()

    class Unpaced:
        def get(self, timeout=None):
            return True

    writer = threading.Thread(target=rewrite_session, args=(folder, CALLS, Unpaced(), done, 100_000), daemon=True)
    writer.start()
    seen = 0
    while not done.is_set():
        ledger.refresh(sessions)
        seen = check_progress(ledger, seen)
    writer.join(60)
    finish(ledger, sessions)
    ledger.close()


def test_every_write_caught_half_way(tmp_path):
    """Deterministic: each rewrite is seen cut where a reader can catch it (the new bytes up to some
    point, then whatever was there before), then finished. A cut document is usually invalid (the
    previous parse stands) but may be valid, holding the new call whole (new messages, then the old
    tail of the system prompt): either way, each call counts once."""
    sessions = tmp_path / "sessions"
    folder = start_session(sessions)
    path = folder / f"{REWRITE_SID}.messages.json"
    ledger = Ledger(tmp_path / "state" / "ledger.db")
    messages: list = []
    broken = 0
    for i in range(20):
        messages += [rewrite_call(i)]
        data = dumps(messages_doc(REWRITE_SID, messages, system_prompt="x" * 20_000))
        cut = [len(data) // 3, 4096, len(data) - 2][i % 3]
        with open(path, "r+b") as fh:  # the write has reached `cut` bytes: not truncated yet
            fh.write(data[:cut])
        stats = ledger.refresh(sessions)
        n = counted(ledger)[0]
        assert n == i if stats.errors else n in (i, i + 1)  # the previous parse, or the new call whole
        broken += bool(stats.errors)
        assert_prefix(counted(ledger), n)
        write_in_place(path, data)  # the write completes, then the truncate
        assert ledger.refresh(sessions).errors == {}
        assert_prefix(counted(ledger), i + 1)
    assert broken >= 20 // 3  # the cuts 2 bytes short are always invalid: that path ran
    assert ledger.problems() == []
    ledger.close()
