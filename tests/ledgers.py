"""What the ledger tests share: the real recording copied, empty sessions folders, a ledger on them, and
the sums they compare."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from corpus import (
    CORPUS,
    Ledger,
    as_sums,
    copy_corpus,
    dumps,
    expected,
    sessions_of,
    user,
    write_in_place,
)

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
