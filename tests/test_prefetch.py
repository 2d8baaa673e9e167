"""The cold ingest's second process (`sources.prefetch`): a child reads and parses ahead, this process writes.
Whatever the child does (reads everything, meets bad files, dies, is interrupted), the ledger ends exactly as
when every file is read here."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from corpus import age, age_all, copy_corpus, make_session, sessions_of, write_json

from trayburn import files
from trayburn.ledger import Ledger
from trayburn.sources import prefetch
from trayburn.sources.cline_cli.parse import parse_messages

ROOT = Path(__file__).resolve().parent.parent
TABLES = {
    "calls": "SELECT key, session_id, file_id, agent, seq, ts_ms, model, input, output, cache_read, cache_write,"
    " cost, tools, counted, provider FROM calls ORDER BY key, file_id",
    "files": "SELECT path, session_id, kind, agent, size, mtime_ns, inode, bad_size, bad_mtime_ns, bad_inode, error,"
    " gone FROM files ORDER BY path",
    "sessions": "SELECT * FROM sessions ORDER BY id",
}

needs_fork = pytest.mark.skipif(
    not hasattr(os, "fork") or sys.platform != "linux", reason="the child is forked on Linux only"
)


@pytest.fixture
def forking():
    if threading.active_count() != 1:
        pytest.skip("another thread runs in this test process: trayburn never forks then")


def ingest(tmp_path: Path, sessions: Path, child: bool, monkeypatch, **ledger_args) -> tuple[dict, object]:
    monkeypatch.setenv(prefetch.ENV, "1" if child else "0")
    ledger = Ledger(tmp_path / f"ledger-{child}.db", **ledger_args)
    stats = ledger.refresh(sessions)
    tables = {name: ledger.query(sql) for name, sql in TABLES.items()}
    ledger.close()
    return tables, stats


def generated(tmp_path: Path, n: int) -> tuple[Path, object]:
    sys.path.insert(0, str(ROOT / "bench"))
    import gen_corpus

    want = gen_corpus.generate(tmp_path / "corpus", sessions=n, calls=4, seed=5)
    sessions = gen_corpus.sessions_dir(tmp_path / "corpus")
    age_all(sessions)
    return sessions, want


@needs_fork
def test_read_ahead_by_a_child_the_ledger_is_the_same_as_read_here(tmp_path, monkeypatch, forking):
    sessions, want = generated(tmp_path, 300)
    here, here_stats = ingest(tmp_path, sessions, False, monkeypatch)
    ahead, ahead_stats = ingest(tmp_path, sessions, True, monkeypatch)
    assert ahead == here
    assert sum(row[13] for row in ahead["calls"]) == want.calls
    for field in ("files_read", "bytes_read", "calls_upserted", "errors", "pending"):
        assert getattr(ahead_stats, field) == getattr(here_stats, field), field


@needs_fork
def test_the_recording_read_ahead_in_slices_is_the_same(tmp_path, monkeypatch, forking):
    sessions = sessions_of(copy_corpus(tmp_path / "cline"))
    age_all(sessions)
    here, _ = ingest(tmp_path, sessions, False, monkeypatch, slice_s=0.001)  # a child per slice
    ahead, _ = ingest(tmp_path, sessions, True, monkeypatch, slice_s=0.001)
    assert ahead == here and here["calls"]


@needs_fork
def test_bad_files_read_ahead_are_recorded_as_when_read_here(tmp_path, monkeypatch, forking):
    sessions, _ = generated(tmp_path, 80)
    folders = sorted(p for p in sessions.iterdir())
    cut = folders[3] / f"{folders[3].name}.messages.json"
    cut.write_bytes(cut.read_bytes()[:100])  # caught mid-write
    (folders[5] / f"{folders[5].name}.json").write_bytes(b"")  # an empty manifest
    big = folders[7] / f"{folders[7].name}.messages.json"
    big.write_bytes(b" " * 300_000 + big.read_bytes())  # over the size limit below
    fifo = folders[9] / "agent_x.messages.json"
    os.mkfifo(fifo)  # never read (not a regular file), never hangs
    (folders[11] / "agent_y.messages.json").mkdir()
    odd = make_session(sessions, "1796000000000_oddly", "2026-12-01T10:00:00Z", [])
    write_json(odd / "1796000000000_oddly.messages.json", {"messages": 3})  # valid JSON, not a document
    age_all(sessions)
    here, here_stats = ingest(tmp_path, sessions, False, monkeypatch, max_file_bytes=250_000)
    ahead, ahead_stats = ingest(tmp_path, sessions, True, monkeypatch, max_file_bytes=250_000)
    assert ahead == here
    assert ahead_stats.errors == here_stats.errors and len(here_stats.errors) == 6


def _paths_and_jobs(tmp_path: Path, copies: int) -> tuple[list[str], object]:
    sessions, _ = generated(tmp_path, 40)
    paths = sorted(str(p) for p in sessions.rglob("*.messages.json")) * copies

    def jobs(path: str) -> list[prefetch.Job]:
        return [(path, lambda data, p=path: parse_messages(data, os.path.basename(os.path.dirname(p))))]

    return paths, jobs


def _until(condition, what: str) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.001)  # polling a real condition (the child's progress), with a deadline


@needs_fork
def test_a_child_that_dies_leaves_the_rest_to_this_process(tmp_path, forking):
    paths, jobs = _paths_and_jobs(tmp_path, 50)  # more than the pipe holds: the child waits for us to read
    ahead = prefetch.Prefetch(paths, jobs, 10**8)
    _until(lambda: ahead.at[0] >= 5, "the child never began its sixth item")  # five outcomes in the pipe
    first = ahead.take(0, paths[0])
    assert first is not None and not isinstance(first, files.FileProblem)
    fetched, ckpt = first
    data, really = files.read(paths[0], 10**8)
    want = parse_messages(data, Path(paths[0]).parent.name).rows
    assert (len(fetched), ckpt, fetched.value.rows) == (len(data), really, want)
    assert ahead.take(0, paths[1]) is None  # not the first item's: read here
    os.kill(ahead.pid, signal.SIGKILL)
    got = [ahead.take(n, p) for n, p in enumerate(paths) if n > 0]
    assert all(g is not None for g in got[:4])  # what was in the pipe
    assert got[-1] is None  # then nothing: the rest is read here
    assert ahead.pid == 0 and ahead.fd == -1  # reaped
    ahead.close()  # and closing again is harmless


@needs_fork
def test_a_child_given_no_time_is_never_waited_for(tmp_path, forking):
    """A busy machine may give the child little time (here: it is held in its first item): this process then
    reads itself every item the child has not begun, rather than wait, and the child skips those."""
    paths, jobs = _paths_and_jobs(tmp_path, 1)
    held, release = os.pipe()

    def held_first(item: str) -> list[prefetch.Job]:
        if item == "first":
            os.read(held, 1)  # in the child: until the test lets it go
            return []
        return jobs(item)

    ahead = prefetch.Prefetch(["first", *paths], held_first, 10**8)
    try:
        _until(lambda: ahead.at[0] == 0, "the child never began its first item")
        got = [ahead.take(n, p) for n, p in enumerate(paths, 1)]  # would hang if it waited
        assert got == [None] * len(paths) and ahead.at[1] == len(paths) + 1  # all read here
        os.write(release, b"x")
        assert ahead._receive(block=True) is None  # the child skipped them all and ended: nothing came
    finally:
        ahead.close()
        os.close(held)
        os.close(release)


INTERRUPTED = """
import os, sys
from trayburn.ledger import Ledger
from trayburn.sources import prefetch
os.environ[prefetch.ENV] = "1"
ledger = Ledger(sys.argv[1])
print(os.getpid(), flush=True)
try:
    ledger.refresh(sys.argv[2])
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


@needs_fork
def test_ctrl_c_mid_ingest_ends_the_child_too(tmp_path):
    sessions, _ = generated(tmp_path, 1500)
    db = tmp_path / "state" / "ledger.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED, str(db), str(sessions)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's Ctrl-C reaches it (and its child)
    )
    assert proc.stdout is not None
    pid = int(proc.stdout.readline())
    deadline = time.monotonic() + 60
    while not _children(pid) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.005)  # polling a real condition (the child's existence), with a deadline
    children = _children(pid)
    assert children, "the ingest ended before its child was seen"
    os.killpg(pid, signal.SIGINT)  # the whole group, as a terminal does
    out, _ = proc.communicate(timeout=60)
    assert "interrupted" in out
    deadline = time.monotonic() + 10
    while any(_alive(c) for c in children) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not any(_alive(c) for c in children)
    check = Ledger(db)  # the ledger is whole (what committed before Ctrl-C)
    assert check.query("PRAGMA integrity_check")[0][0] == "ok"
    check.close()


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(c) for c in fh.read().split()]
    except OSError:
        return []


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_an_ingest_in_many_slices_ends_as_one_in_one(tmp_path, monkeypatch):
    """Each slice after the first looks again only at the folders the last one had not found as last read
    (`cline_cli.Order`), the ones it read among them: the same ledger as one transaction for everything."""
    sessions, want = generated(tmp_path, 120)
    monkeypatch.setenv(prefetch.ENV, "0")
    whole = Ledger(tmp_path / "whole.db")
    whole.refresh(sessions)
    sliced = Ledger(tmp_path / "sliced.db", slice_s=0.005)  # a few sessions per slice (shorter: see the report)
    stats = sliced.refresh(sessions)
    assert stats.pending == 0 and stats.files_read == want.files
    for sql in TABLES.values():
        assert sliced.query(sql) == whole.query(sql)
    whole.close()
    sliced.close()


def test_a_file_written_in_the_last_tick_is_left_to_this_process(tmp_path):
    """The racy-timestamp rule judges the time of the read: the child may read a file seconds before the
    ledger records it, so a file it would read within 2 s of its mtime is left to this process to read."""
    path = tmp_path / "fresh.messages.json"
    path.write_bytes(b'{"messages": []}')  # written just now
    assert prefetch._read(str(path), bytes, 1 << 20) == ("raised",)  # "read it here"
    age(path)
    assert prefetch._read(str(path), bytes, 1 << 20)[0] == "ok"
