"""While a refresh writes, the ledger's connection takes a larger page cache and lets the write-ahead log grow further
before copying it in (ledger/store.py); after it, both are as they were, whether the refresh ended well or not, and
the cycle collector is as it was."""

from __future__ import annotations

import gc
import sqlite3

import pytest
from helpers.corpus import Ledger, a_minute_later, age_all, assistant, iso, make_session

from trayburn.ledger.schema import LedgerBusy

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
