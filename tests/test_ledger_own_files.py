"""The ledger's own files: private whatever the umask, never a planted link followed, a ledger that fails its
check moved aside (and one of a newer schema never)."""

from __future__ import annotations

import os
import sqlite3

import pytest
from helpers.corpus import (
    Ledger,
    age,
    set_tz,  # noqa: F401
)
from helpers.ledgers import cline, sessions  # noqa: F401  (fixtures)

from trayburn import files
from trayburn.ledger import LedgerError

# ---- the ledger's own files -------------------------------------------------------------------------------


def test_the_ledger_and_its_wal_are_private_under_umask_000(tmp_path, sessions):
    old = os.umask(0)
    try:
        led = Ledger(tmp_path / "state" / "ledger.db")
        led.refresh(sessions)
        modes = {p.name: p.stat().st_mode & 0o777 for p in (tmp_path / "state").iterdir()}
        led.close()
    finally:
        os.umask(old)
    assert (tmp_path / "state").stat().st_mode & 0o777 == 0o700
    assert modes.keys() >= {"ledger.db", "ledger.db-wal", "ledger.db-shm"}
    assert {modes[n] for n in ("ledger.db", "ledger.db-wal", "ledger.db-shm")} == {0o600}


@pytest.mark.parametrize("name", ["ledger.db", "ledger.db-wal"])
def test_a_planted_link_is_refused_and_its_target_untouched(tmp_path, name):
    state = tmp_path / "state"
    state.mkdir()
    target = tmp_path / "victim"
    target.write_bytes(b"precious")
    (state / name).symlink_to(target)
    with pytest.raises(LedgerError, match="symbolic link"):
        Ledger(state / "ledger.db")
    assert target.read_bytes() == b"precious"
    assert isinstance(files.Refused("link", target, "x"), OSError)


def test_a_failed_check_moves_aside_but_a_newer_schema_never(tmp_path):
    path = tmp_path / "state" / "ledger.db"
    Ledger(path).close()
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version=99")
    db.commit()
    db.close()
    with pytest.raises(LedgerError, match="newer"):
        Ledger(path)
    assert not [p for p in path.parent.iterdir() if ".broken-" in p.name]
    age(path)
