"""What the ledger tests share: the real recording copied, empty sessions folders, a ledger on them, and
the sums they compare."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from .corpus import (
    CORPUS,
    Ledger,
    a_minute_later,
    as_sums,
    assistant,
    copy_corpus,
    counted,
    dumps,
    expected,
    make_session,
    ms,
    sessions_of,
    user,
    write_in_place,
)

REAL = sessions_of(CORPUS)
LONG = "1796026909249_y8q37"  # i_long: 51 calls
PLAIN = "1796026733097_tvgzu"  # a_plain: 1 call
T0 = "2026-11-30T08:00:00.000Z"
GONE = "1796020000000_gone"  # a session whose folder is removed from disk after it was counted
GONE_SUMS = (2, 3000, 30, 0, 0, 0.75)
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


def with_gone(wanted: tuple) -> tuple:
    return tuple(a + b for a, b in zip(wanted, GONE_SUMS, strict=True))


def removed_session(ledger: Ledger, sessions: Path, refresh: Callable[[], object] | None = None) -> None:
    """A session counted by the ledger, then removed from disk (its calls must keep counting). `refresh`: how the
    ledger is refreshed (an Engine's `refresh` for the engine's ledger), else `ledger.refresh(sessions)`."""
    refresh = refresh or (lambda: ledger.refresh(sessions))
    folder = make_session(
        sessions,
        GONE,
        T0,
        [assistant("g1", ms(T0), 1000, 10, cost=0.25), assistant("g2", ms(T0) + 1, 2000, 20, cost=0.5)],
    )
    refresh()
    shutil.rmtree(folder)
    refresh()
    assert counted(ledger, "session_id=?", (GONE,)) == GONE_SUMS


def same_size_other_cost(path: Path) -> bytes:
    """The file with its last reported cost changed, keeping its length (one digit for another)."""
    data = path.read_bytes()
    at = data.rindex(b'"cost": ') + len(b'"cost": ')
    digit = next(i for i in range(at, at + 20) if data[i : i + 1].isdigit())
    other = b"7" if data[digit : digit + 1] != b"7" else b"3"
    return data[:digit] + other + data[digit + 1 :]


def counted_fresh(tmp_path: Path, sessions: Path) -> tuple:
    """What a new ledger, in a folder of its own, counts from the same files."""
    ledger = Ledger(tmp_path / "fresh2" / "ledger.db", wall_ns=a_minute_later)
    try:
        ledger.refresh(sessions)
        return counted(ledger)
    finally:
        ledger.close()
