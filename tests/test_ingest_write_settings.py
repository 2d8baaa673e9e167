"""While a refresh writes, the ledger's connection takes a larger page cache and lets the write-ahead log grow further
before copying it in (ledger/store.py); after it, both are as they were, whether the refresh ended well or not, and
the cycle collector is as it was. From one slice of a long ingest to the next it carries the feed's sessions, unless
another process wrote the ledger in between."""

from __future__ import annotations

import gc
import os
import sqlite3
import time

import pytest
from helpers.corpus import Ledger, a_minute_later, age_all, assistant, iso, make_session

from trayburn.ledger.schema import LedgerBusy
from trayburn.sources.cline_cli.source import ClineCliSource

START_MS = 1796000000000


def settings(ledger: Ledger) -> tuple:
    return tuple(ledger.db.execute(f"PRAGMA {name}").fetchone()[0] for name in ("cache_size", "wal_autocheckpoint"))


def sessions_folder(root, n):
    sessions = root / "sessions"
    for i in range(n):
        sid = f"{START_MS + i * 60_000}_s{i:04d}"
        make_session(sessions, sid, iso(START_MS + i * 60_000), [assistant(f"msg_{i}", START_MS + i * 60_000)])
    age_all(sessions)
    return sessions


def test_the_write_settings_are_given_back_after_a_refresh(tmp_path):
    ledger = Ledger(tmp_path / "ledger.db", slice_s=1e-9, wall_ns=a_minute_later)
    before = settings(ledger)
    assert before == (-2000, 1000)  # SQLite's own
    stats = ledger.refresh(sessions_folder(tmp_path, 5))
    assert stats.files_read == 10
    assert settings(ledger) == before
    assert gc.isenabled()
    ledger.close()


def test_and_after_a_refresh_that_failed(tmp_path):
    ledger = Ledger(tmp_path / "ledger.db", wall_ns=a_minute_later)
    before = settings(ledger)
    sessions = sessions_folder(tmp_path, 2)
    blocker = sqlite3.connect(tmp_path / "ledger.db", timeout=0)
    blocker.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    ledger.busy_timeout_s = 0
    ledger.db.execute("PRAGMA busy_timeout=0")
    with pytest.raises(LedgerBusy):
        ledger.refresh(sessions)
    blocker.rollback()
    blocker.close()
    assert settings(ledger) == before
    assert gc.isenabled()
    ledger.refresh(sessions)
    assert settings(ledger) == before
    ledger.close()


class AnotherProcessBetweenSlices(ClineCliSource):
    """The Cline CLI's folder, and another trayburn process that stores a session's row between the first two
    slices of an ingest (the ledger asks `needs_work` before each slice, outside its write transaction)."""

    def __init__(self, folder, ledger_path, row):
        super().__init__(str(folder), time.monotonic)
        self.ledger_path, self.row, self.asked = ledger_path, row, 0

    def needs_work(self, known):
        self.asked += 1
        if self.asked == 2:
            other = sqlite3.connect(self.ledger_path)
            other.execute("INSERT INTO sessions(id, started_ms, status) VALUES(?, ?, 'completed')", self.row)
            other.commit()
            other.close()
        return super().needs_work(known)


def test_a_session_stored_by_another_process_between_two_slices_is_known_to_the_later_ones(tmp_path):
    """Its manifest is caught mid-write now, so only the session's row (stored by the other process) lets its
    messages be read (a folder whose manifest never parsed is not a session): had a later slice reused the
    sessions as the first slice read them, the session's call would be missing."""
    sessions = tmp_path / "sessions"
    for i in range(4):
        sid = f"{START_MS + i * 60_000}_s{i}"
        make_session(sessions, sid, iso(START_MS + i * 60_000), [assistant(f"msg_{i}", START_MS + i * 60_000 + 5)])
    late = f"{START_MS - 60_000}_late"
    make_session(sessions, late, iso(START_MS - 60_000), [assistant("msg_late", START_MS - 55_000, cost=0.5)])
    (sessions / late / f"{late}.json").write_text('{"session_id": "')  # caught mid-write
    now = time.time()
    for folder in sessions.iterdir():  # read newest first: the late session last, well after the other process
        age = 600 if folder.name == late else 300 - int(folder.name[:13]) % 1000
        for f in folder.iterdir():
            os.utime(f, (now - age, now - age))
    ledger = Ledger(tmp_path / "ledger.db", slice_s=1e-9, wall_ns=a_minute_later)
    source = AnotherProcessBetweenSlices(sessions, tmp_path / "ledger.db", (late, START_MS - 60_000))
    stats = ledger.refresh(source)
    assert source.asked >= 3 and stats.pending == 0
    keys = {k for (k,) in ledger.query("SELECT key FROM calls WHERE counted=1")}
    assert keys == {"msg_0", "msg_1", "msg_2", "msg_3", "msg_late"}
    ledger.close()
