"""A ledger that loses nothing to one bad page: every page of a real ledger (built from the recorded Cline
CLI corpus) damaged in turn, with the sessions of a third of the calls deleted from disk (so only the ledger
holds them). After the rebuild, no call is lost that the surviving pages or the newest backup hold, no call
counts twice, and every figure of a control session still on disk is right."""

from __future__ import annotations

import ctypes
import os
import select
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers.corpus import copy_corpus, isolated_env, sessions_of

from trayburn.engine import Engine
from trayburn.ledger import backups, salvage

CALL = "SELECT key, ts_ms, input, output, cache_read, cache_write, cost FROM calls WHERE counted=1"


def _counted(ledger_path: Path) -> set[tuple]:
    db = sqlite3.connect(ledger_path)
    try:
        return set(db.execute(CALL))
    finally:
        db.close()


def _watch_opens(path: Path) -> int:
    """An inotify descriptor that becomes readable when any process opens `path` (IN_OPEN)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_CLOEXEC)
    if fd < 0 or libc.inotify_add_watch(fd, os.fsencode(path), 0x20) < 0:
        raise OSError(ctypes.get_errno(), "inotify")
    return fd


# 512-byte pages: eight times the pages of the same ledger, so a sweep damaging each in turn takes seconds (`slow`)
@pytest.fixture(
    scope="module", params=[4096, pytest.param(512, marks=pytest.mark.slow)], ids=["4k-pages", "512-byte-pages"]
)
def built(request, tmp_path_factory):
    """A real ledger, its counted calls, the calls of sessions deleted from disk, and a backup of it."""
    root = tmp_path_factory.mktemp(f"built{request.param}")
    cline = copy_corpus(root / "cline")
    env = isolated_env(root, CLINE_DIR=str(cline))
    engine = Engine(env=env)
    engine.refresh()
    sessions = sorted(p.name for p in sessions_of(cline).iterdir())
    gone = sessions[::3]
    for sid in gone:  # their calls now live only in the ledger
        shutil.rmtree(sessions_of(cline) / sid)
    engine.refresh()
    engine.close()
    ledger = root / "state" / "ledger.db"
    if request.param != 4096:  # small pages: the calls table is a root over many leaves and interior pages
        db = sqlite3.connect(ledger)
        db.execute("PRAGMA journal_mode=DELETE")
        db.execute(f"PRAGMA page_size={request.param}")
        db.execute("VACUUM")
        db.execute("PRAGMA journal_mode=WAL")
        db.close()
    db = sqlite3.connect(ledger)
    try:
        kept = backups.make_backup(db, ledger)
        gone_keys = {
            r[0] for r in db.execute(f"SELECT key FROM calls WHERE session_id IN ({','.join('?' * len(gone))})", gone)
        }
    finally:
        db.close()
    assert kept is not None and (os.stat(kept).st_mode & 0o777) == 0o600
    truth = _counted(ledger)
    assert len(truth) > 50 and gone_keys
    return root, cline, ledger, kept, truth, gone_keys


def _rebuilt(built, tmp_path: Path, page: int, with_backup: bool) -> tuple[set[tuple], float, str | None]:
    root, cline, ledger, kept, truth, gone_keys = built
    state = tmp_path / f"p{page}{'b' if with_backup else ''}" / "state"
    state.mkdir(parents=True)
    damaged = state / "ledger.db"
    shutil.copy2(ledger, damaged)
    if with_backup:
        shutil.copy2(kept, state / kept.name)
    size = salvage.read_pages(damaged).size
    st = os.stat(damaged)
    with open(damaged, "r+b") as fh:
        fh.seek((page - 1) * size)
        fh.write(b"\0" * size)
    os.utime(damaged, ns=(st.st_atime_ns, st.st_mtime_ns))  # size and mtime kept, as a disk fault leaves them
    env = isolated_env(state.parent, CLINE_DIR=str(cline), TRAYBURN_STATE_DIR=str(state))
    t0 = time.perf_counter()
    engine = Engine(env=env)
    engine.refresh()  # damage this meets is rebuilt at once
    engine.check_integrity()  # doctor's check, and the tray's once a day: damage no refresh read is found here
    took = time.perf_counter() - t0
    notice = engine.ledger.notice
    engine.close()
    return _counted(damaged), took, notice


def _leaf_keys(ledger: Path) -> dict[int, set[str]]:
    """The call keys each page of the intact ledger holds (what a damaged page can take away)."""
    out: dict[int, set[str]] = {}
    for number, _rowid, values in salvage.read_pages(ledger).rows():
        if len(values) >= 15 and values[0] is None and isinstance(values[3], int):
            out.setdefault(number, set()).add(values[1])
    return out


def test_any_one_damaged_page_loses_no_call_the_backup_holds(built, tmp_path):
    root, cline, ledger, kept, truth, gone_keys = built
    n = salvage.read_pages(ledger).count
    times, rebuilt = [], 0
    for page in range(1, n + 1):
        got, took, notice = _rebuilt(built, tmp_path, page, with_backup=True)
        times.append(took)
        rebuilt += notice is not None
        assert got == truth, (page, notice, len(got), len(truth))
    print(
        f"\n{n} pages damaged in turn ({rebuilt} found damaged and rebuilt), with a backup: all {len(truth)} calls"
        f" every time; open + rebuild + refresh at most {max(times):.2f} s"
    )


def test_any_one_damaged_page_loses_only_what_that_page_alone_held(built, tmp_path):
    """Without a backup: what the surviving pages hold (read page by page, whatever page is damaged, root
    included) and what the files still on disk hold is all back; only the calls of deleted sessions whose
    rows were on the damaged page can be lost. Nothing counts twice, and nothing comes back changed."""
    root, cline, ledger, kept, truth, gone_keys = built
    on_page = _leaf_keys(ledger)
    n = salvage.read_pages(ledger).count
    by_key = {c[0]: c for c in truth}
    lost_total, times, rebuilt, worst = 0, [], 0, 0
    for page in range(1, n + 1):
        got, took, notice = _rebuilt(built, tmp_path, page, with_backup=False)
        times.append(took)
        rebuilt += notice is not None
        may_lose = on_page.get(page, set()) & gone_keys
        if page == 1:  # the header page: the page size is guessed (4096), the freelist unknown
            may_lose = gone_keys if salvage.read_pages(ledger).size != 4096 else may_lose
        assert got <= truth, (page, notice, sorted(got - truth)[:3])  # nothing forged, nothing doubled
        lost = {k for k in by_key if k not in {c[0] for c in got}}
        assert lost <= may_lose, (page, notice, sorted(lost - may_lose)[:3])
        lost_total += len(lost)
        worst = max(worst, len(lost))
    print(
        f"\n{n} pages damaged in turn ({rebuilt} rebuilt), no backup: {lost_total} calls lost in all (at most"
        f" {worst} of {len(truth)} for one page, of {len(gone_keys)} only the ledger held);"
        f" at most {max(times):.2f} s"
    )


def test_backups_are_daily_private_checked_and_the_last_seven_kept(built, tmp_path):
    """One a day (an open within the day makes none), 0600, no temp file left, the oldest beyond seven
    removed; a ledger whose copy fails SQLite's integrity check is not backed up (the good ones stay)."""
    root, cline, ledger, kept, truth, gone_keys = built
    state = tmp_path / "state"
    state.mkdir()
    here = state / "ledger.db"
    shutil.copy2(ledger, here)
    db = sqlite3.connect(here)
    try:
        day = 86400.0
        start = time.time() - 10 * day
        for i in range(9):
            assert backups.make_backup(db, here, now=start + i * day) is not None
        assert backups.daily_backup(db, here, now=start + 8.5 * day) is None  # made within the day: none
        assert backups.daily_backup(db, here, now=start + 9 * day) is not None  # a day after the last: one
    finally:
        db.close()
    made = backups.backups(here)
    assert len(made) == backups.BACKUPS_KEPT and all((os.stat(b).st_mode & 0o777) == 0o600 for b in made)
    assert not [n for n in os.listdir(state) if n.endswith(".tmp")]
    assert _counted(made[0]) == truth  # a backup is the ledger, whole
    size = salvage.read_pages(here).size
    with open(here, "r+b") as fh:  # a damaged page (the last): the copy fails its check, nothing is replaced
        fh.seek(-size, os.SEEK_END)
        fh.write(b"\xff" * size)
    db = sqlite3.connect(here)
    try:
        assert backups.make_backup(db, here) is None
    finally:
        db.close()
    assert backups.backups(here) == made
    assert not [n for n in os.listdir(state) if n.endswith(".tmp")]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="this platform has no FIFOs")
def test_a_fifo_or_a_link_named_like_a_backup_is_never_opened(built, tmp_path):
    """A FIFO named like the newest backup in the state folder (and a link to it): looking for the newest sound
    backup passes over both to the real one instead of waiting forever for a writer, and neither counts as the
    day's backup."""
    root, cline, ledger, kept, truth, gone_keys = built
    state = tmp_path / "state"
    state.mkdir()
    here = state / "ledger.db"
    shutil.copy2(ledger, here)
    real = state / "ledger.db.backup-20200101-000000"
    shutil.copy2(kept, real)
    os.utime(real, (1577836800, 1577836800))  # written in 2020, as its name says
    fifo = state / "ledger.db.backup-29991231-235959"  # the newest by its name
    os.mkfifo(fifo, 0o600)
    os.symlink(fifo, state / "ledger.db.backup-29991231-235958")
    found: list[Path | None] = []
    looking = threading.Thread(target=lambda: found.append(backups.newest_sound(here)), daemon=True)
    looking.start()
    looking.join(timeout=60)  # a guard, not a wait: it returns at once unless it opened the FIFO
    if looking.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # a writer's open lets the stuck reader's return
        looking.join()
        pytest.fail("newest_sound opened a FIFO named like a backup and waited on it")
    assert found == [real]
    assert backups.backups(here) == [real]
    assert backups.backup_due(here)  # the real one is years old; the FIFO is not the day's backup
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # left as it was


@pytest.mark.skipif(sys.platform != "linux", reason="inotify (which says when the child opens the backup) is Linux's")
def test_a_rebuild_killed_mid_salvage_loses_nothing_at_the_next_open(tmp_path):
    """A `today` killed while it salvages a damaged ledger (SIGKILL: a power cut, a closed laptop) leaves the
    damaged file at its place, so the next open rebuilds it again and every call comes back: the calls of
    sessions deleted since the backup (only the damaged file's pages hold them) and the backup's."""
    cline = copy_corpus(tmp_path / "cline")
    sessions = sorted(p.name for p in sessions_of(cline).iterdir())
    later = sessions[1::2]
    held = tmp_path / "held"
    held.mkdir()
    for sid in later:  # not there yet when the backup is made
        shutil.move(sessions_of(cline) / sid, held / sid)
    env = isolated_env(tmp_path, CLINE_DIR=str(cline))
    ledger = tmp_path / "state" / "ledger.db"
    engine = Engine(env=env)
    engine.refresh()
    engine.close()  # makes the day's backup
    (kept,) = backups.backups(ledger)
    for sid in later:
        shutil.move(held / sid, sessions_of(cline) / sid)
    engine = Engine(env=env)
    engine.refresh()
    engine.close()
    for sid in sessions[::3]:  # from now on only the ledger holds their calls (the backup some of them)
        shutil.rmtree(sessions_of(cline) / sid)
    truth = _counted(ledger)
    only_pages = {c for c in truth if c not in _counted(kept)}
    assert len(truth) > 50 and only_pages
    db = sqlite3.connect(ledger)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    with open(ledger, "r+b") as fh:  # the header page: any open says "file is not a database"
        fh.write(b"\0" * salvage.read_pages(ledger).size)

    # The salvage reads the newest backup after the damaged file's pages. This test holds an exclusive lock on
    # it, so the child waits inside the salvage (SQLite's busy wait: seconds) once it opens the backup; the
    # kernel says when it does (inotify's IN_OPEN), and the child is killed there.
    lock = sqlite3.connect(kept, isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")
    opened = _watch_opens(kept)
    child = subprocess.Popen(
        [sys.executable, "-m", "trayburn", "today"],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        reached, _, _ = select.select([opened], [], [], 120)  # a guard: a child that never opens it fails the test
        assert reached, "the rebuild never opened the backup"
        assert child.poll() is None, child.communicate()
        child.send_signal(signal.SIGKILL)
        child.communicate()
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
        os.close(opened)
        lock.execute("ROLLBACK")
        lock.close()

    engine = Engine(env=env)
    engine.refresh()
    notice = engine.ledger.notice
    engine.close()
    assert notice is not None and "recovered" in notice, notice
    assert _counted(ledger) == truth
    assert [p for p in ledger.parent.iterdir() if ".broken-" in p.name]  # the damaged file, kept as evidence


def test_the_days_backup_is_made_after_the_figures_never_at_open(built, tmp_path):
    """Opening the ledger (a command's first step) makes no backup: the first command of the day gives its
    figures as fast as any other; its close makes the day's backup, whole. A long-lived process (the tray)
    makes it after a refresh once it has been open for `backup_after_s`; a sound integrity check too."""
    root, cline, ledger, kept, truth, gone_keys = built
    state = tmp_path / "state"
    state.mkdir()
    here = state / "ledger.db"
    shutil.copy2(ledger, here)
    env = isolated_env(tmp_path, CLINE_DIR=str(cline), TRAYBURN_STATE_DIR=str(state))
    engine = Engine(env=env)
    engine.refresh()
    assert backups.backups(here) == []  # open and refresh: none yet
    engine.close()
    (made,) = backups.backups(here)
    assert _counted(made) == _counted(here) == truth
    engine = Engine(env=env)
    engine.refresh()
    engine.close()
    assert backups.backups(here) == [made]  # made within the day: no other

    made.unlink()
    engine = Engine(env=env)
    engine.ledger.backup_after_s = 0  # as the tray is after an hour
    engine.refresh()
    assert len(backups.backups(here)) == 1
    engine.close()
    backups.backups(here)[0].unlink()
    engine = Engine(env=env)
    assert engine.check_integrity() is None
    assert len(backups.backups(here)) == 1  # doctor's check, and the tray's daily one
    engine.close()
