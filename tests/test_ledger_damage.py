"""A damaged ledger gives back what it still holds, and a ledger deleted or replaced under a running tray
keeps its history: real files, a real SQLite, the damage written over real pages."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.corpus import (
    Ledger,
    assert_sums,
    counted,
    set_tz,  # noqa: F401
)
from helpers.ledgers import (
    GONE,
    GONE_SUMS,
    cline,  # noqa: F401  (a fixture)
    removed_session,
    sessions,  # noqa: F401  (a fixture)
    total,
    with_gone,
)

from trayburn.engine import Engine
from trayburn.ledger import LedgerError, backups

# ---- a damaged ledger -------------------------------------------------------------------------------------


def damaged_ledger(path: Path, sessions: Path, keep_stat: bool = False) -> None:
    """A ledger of `sessions` and of a session since removed from disk (its calls are the calls table's last
    leaf page), then garbage over the cells of the table's first leaf page. `keep_stat`: the file's mtime
    put back as it was (damage no stat shows: a disk's, a program's that restores times)."""
    first = Ledger(path)
    first.refresh(sessions)
    removed_session(first, sessions)
    first.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the calls into the file, where their pages are found
    leaves = [
        r[0] for r in first.query("SELECT pageno FROM dbstat WHERE name='calls' AND pagetype='leaf' ORDER BY pageno")
    ]
    page_size = first.query("PRAGMA page_size")[0][0]
    first.close()
    for made in backups.backups(path):  # (the close made the day's backup: these tests are of the pages alone)
        made.unlink()
    assert len(leaves) >= 2, "the test needs the calls of the removed session apart from the damaged page"
    before = os.stat(path)
    with open(path, "r+b") as fh:
        fh.seek((leaves[0] - 1) * page_size + 8)
        fh.write(b"\xa5" * (page_size - 8))
    if keep_stat:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def recovered(notice: str | None) -> tuple[int, int]:
    assert notice and "recovered" in notice, notice
    got, of = (int(w) for w in notice.split("recovered ")[1].split(" calls")[0].split(" of "))
    return got, of


def test_a_corrupt_page_loses_only_that_page_and_removed_sessions_survive(tmp_path, sessions):
    path = tmp_path / "state" / "ledger.db"
    damaged_ledger(path, sessions)

    rebuilt = Ledger(path)
    assert rebuilt.notice is None  # an open never checks: the full check is doctor's and the tray's daily one
    assert rebuilt.check_integrity() is not None
    got, of = recovered(rebuilt.notice)
    assert 0 < got < of  # some rows lost with the damaged page, the rest copied
    assert [p.name for p in path.parent.iterdir() if ".broken-" in p.name]  # kept, never deleted
    assert counted(rebuilt, "session_id=?", (GONE,)) == GONE_SUMS  # history of a session gone from disk
    rebuilt.refresh(sessions)  # what the damaged page held comes back from Cline's files
    assert_sums(counted(rebuilt), with_gone(total()))
    rebuilt.close()
    again = Ledger(path)
    assert again.notice is None
    assert_sums(counted(again), with_gone(total()))
    again.close()


def test_damage_no_stat_shows_is_found_by_the_first_query_and_rebuilt_at_the_next_refresh(tmp_path, sessions):
    """An open never runs the integrity check: damage that changes no size, mtime or inode surfaces when a
    query reads the page, as a clear error, and the next refresh checks and rebuilds."""
    path = tmp_path / "state" / "ledger.db"
    damaged_ledger(path, sessions, keep_stat=True)
    ledger = Ledger(path)
    assert ledger.notice is None  # not checked at open
    with pytest.raises(LedgerError, match="is damaged .*rebuilds it"):
        counted(ledger)
    ledger.refresh(sessions)
    got, of = recovered(ledger.notice)
    assert 0 < got < of
    assert [p.name for p in path.parent.iterdir() if ".broken-" in p.name]
    assert counted(ledger, "session_id=?", (GONE,)) == GONE_SUMS
    assert_sums(counted(ledger), with_gone(total()))
    ledger.close()
    again = Ledger(path)
    assert again.notice is None and again.check_integrity() is None  # the rebuilt ledger is sound
    again.close()


def test_a_ledger_that_is_not_a_database_is_rebuilt_and_said_so(tmp_path, sessions):
    path = tmp_path / "state" / "ledger.db"
    path.parent.mkdir()
    path.write_bytes(b"not a database" * 400)
    led = Ledger(path)
    assert led.notice and "rebuilt" in led.notice and "recovered" not in led.notice
    led.refresh(sessions)
    assert_sums(counted(led), total())
    led.close()


# ---- a ledger deleted or replaced under a running tray --------------------------------------------------


def test_a_ledger_deleted_under_a_running_tray_keeps_its_history(tmp_path, sessions):
    state = tmp_path / "state"
    env = {"CLINE_SESSION_DATA_DIR": str(sessions)}
    tray = Engine(tmp_path / "settings.toml", state, env=env)
    tray.refresh()
    removed_session(tray.ledger, sessions, tray.refresh)
    for name in ("ledger.db", "ledger.db-wal", "ledger.db-shm"):
        (state / name).unlink(missing_ok=True)

    window = Engine(tmp_path / "settings.toml", state, env=env)  # opens a new, empty ledger at the same path
    window.refresh()
    assert_sums(counted(window.ledger), total())  # only what is on disk: the removed session is not there

    tray.refresh()  # the tray notices, and copies its history into the file now at its place
    assert tray.ledger.notice and "replaced" in tray.ledger.notice
    assert_sums(counted(tray.ledger), with_gone(total()))
    assert_sums(counted(window.ledger), with_gone(total()))  # the window reads the same figures now
    tray.close()
    window.close()
    restarted = Engine(tmp_path / "settings.toml", state, env=env)
    assert_sums(counted(restarted.ledger), with_gone(total()))
    restarted.close()


@pytest.mark.parametrize("names", [("ledger.db", "ledger.db-wal", "ledger.db-shm"), ("ledger.db",)])
def test_a_ledger_deleted_with_nothing_in_its_place_is_recreated_from_the_open_one(tmp_path, sessions, names):
    path = tmp_path / "state" / "ledger.db"
    led = Ledger(path)
    led.refresh(sessions)
    removed_session(led, sessions)
    for name in names:  # or only ledger.db, its WAL and SHM left beside it
        (path.parent / name).unlink(missing_ok=True)
    led.refresh(sessions)
    assert led.notice and "deleted" in led.notice
    assert path.exists()
    led.close()
    again = Ledger(path)
    assert_sums(counted(again), with_gone(total()))
    again.close()
