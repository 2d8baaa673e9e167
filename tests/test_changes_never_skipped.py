"""What changed is never skipped by the paths that skip work when nothing changed (inotify watches, the scan
digest) nor hidden by an open that runs no integrity check: sequences on real files, the real kernel and a real
SQLite ledger, each counted again by a fresh process."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from helpers.corpus import (
    Ledger,
    a_minute_later,
    age,
    age_all,
    assistant,
    counted,
    dumps,
    make_session,
    messages_doc,
    ms,
    user,
    write_in_place,
    write_json,
)
from helpers.ledgers import counted_fresh, same_size_other_cost
from helpers.polled import overflow, sessions, tray  # noqa: F401 (the real recording, polled as the tray polls it)

from trayburn.sources.cline_cli import layout

LONG = "1796026909249_y8q37"  # a completed session of the real recording
T0 = "2026-11-30T08:00:00.000Z"
linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


def with_call(path: Path) -> bytes:
    doc = json.loads(path.read_bytes())
    call = assistant("msg_review01", doc["messages"][-1]["ts"] + 1000, 1000, 10, cost=0.5)
    doc["messages"] += [user("u-review", call["ts"]), call]
    return dumps(doc)


def fresh_count(tmp_path: Path, sessions: Path) -> int:
    """What a new process (no watches, no memo) counts from the same files."""
    ledger = Ledger(tmp_path / "fresh" / "ledger.db", wall_ns=a_minute_later)
    try:
        ledger.refresh(sessions)
        return counted(ledger)[0]
    finally:
        ledger.close()


@linux
def test_a_sessions_folder_replaced_whole_is_stat_ed_again(tmp_path, tray, sessions):
    """The sessions folder moved aside and another put in its place (a restore from a backup, a sync tool,
    `mv sessions sessions.old && cp -a …`): its session folders' watches still watch the old ones."""
    aside = sessions.with_name("sessions.old")
    sessions.rename(aside)
    shutil.copytree(aside, sessions)  # the same names and files, other inodes
    age_all(sessions)
    tray.refresh(sessions)  # the sessions folder's own stamp changed: it is listed again
    before = counted(tray)[0]
    lead = sessions / LONG / f"{LONG}.messages.json"
    write_in_place(lead, with_call(lead))  # the resumed session writes into the folder now at the path
    tray.refresh(sessions)
    assert counted(tray)[0] == before + 1 == fresh_count(tmp_path, sessions)


@linux
def test_a_file_changed_through_another_hard_link_is_seen(tmp_path, sessions):
    """inotify reports a change only to the folder of the name written through: a folder holding a file with
    another name elsewhere is not vouched for (its files are stat-ed at every poll). A link made after the
    folder was listed gives the kernel no event to tell, and waits for the next full sweep."""
    lead = sessions / LONG / f"{LONG}.messages.json"
    other = tmp_path / "backup.messages.json"
    os.link(lead, other)
    tray = Ledger(tmp_path / "state" / "ledger.db", wall_ns=a_minute_later)
    try:
        for _ in range(3):
            tray.refresh(sessions)
        assert not tray.cline_source(sessions).listings.watcher.watched(str(sessions / LONG))
        before = counted(tray)[0]
        write_in_place(other, with_call(other))
        tray.refresh(sessions)
        assert counted(tray)[0] == before + 1 == fresh_count(tmp_path, sessions)
    finally:
        tray.close()


@linux
def test_the_kernels_silence_is_trusted_five_minutes_at_most(tmp_path, sessions):
    """A change in a watched ended session that no event reports (here: through a hard link made after the
    folder was listed, which inotify cannot tell) is found by the sweep of the ended sessions, every
    ENDED_SWEEP_S, long before the full sweep; events and active sessions do not wait for it at all."""
    clock = [0.0]
    ledger = Ledger(tmp_path / "state" / "ledger.db", clock=lambda: clock[0], wall_ns=a_minute_later)
    try:
        for _ in range(3):
            clock[0] += 1
            ledger.refresh(sessions)
        assert ledger.cline_source(sessions).listings.watcher.watched(str(sessions / LONG))
        lead = sessions / LONG / f"{LONG}.messages.json"
        other = tmp_path / "elsewhere.messages.json"
        os.link(lead, other)  # after the listing: the kernel has no event to give for writes through it
        before = counted(ledger)[0]
        write_in_place(other, with_call(other))
        clock[0] += 1
        ledger.refresh(sessions)  # may or may not be seen yet: the kernel said nothing
        clock[0] += layout.ENDED_SWEEP_S
        assert clock[0] < layout.FULL_SWEEP_S * layout.WATCHED_SWEEPS  # found without a full sweep
        ledger.refresh(sessions)
        assert counted(ledger)[0] == before + 1 == fresh_count(tmp_path, sessions)
    finally:
        ledger.close()


# ---- damage to the ledger made from outside SQLite -------------------------------------------------------


def garbage_over_a_calls_page(ledger: Ledger) -> None:
    """Garbage over the cells of the calls table's first leaf page, written to the file from outside SQLite
    (its mtime changes: a stat shows it) while `ledger` has it open."""
    ledger.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = ledger.query("SELECT pageno FROM dbstat WHERE name='calls' AND pagetype='leaf' ORDER BY pageno")[0][0]
    size = ledger.query("PRAGMA page_size")[0][0]
    st = ledger.path.stat()
    with open(ledger.path, "r+b") as fh:
        fh.seek((page - 1) * size + 8)
        fh.write(b"\xa5" * (size - 8))
    os.utime(ledger.path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # (a tick on, whatever the grain)


def test_damage_made_while_a_process_has_the_ledger_open_is_found_by_the_integrity_check(tmp_path, sessions):
    path = tmp_path / "state" / "ledger.db"
    tray = Ledger(path, wall_ns=a_minute_later)
    tray.refresh(sessions)
    garbage_over_a_calls_page(tray)  # (a stat shows it: size as before, another mtime)
    tray.close()  # the tray quits (or commits its next refresh)
    again = Ledger(path, wall_ns=a_minute_later)
    try:
        assert again.check_integrity() is not None  # doctor's check, and the tray's once a day
        assert again.notice and "recovered" in again.notice  # moved aside and rebuilt before any figure
    finally:
        again.close()


# ---- the scan digest (store.Ledger._refresh, ClineCliSource.digest / trusts_digest) -----------------------


def new_process_count(path: Path, sessions: Path) -> tuple:
    """A new process (`trayburn today`): opens the ledger, refreshes, reads the figures."""
    ledger = Ledger(path, wall_ns=a_minute_later)
    try:
        ledger.refresh(sessions)
        return counted(ledger)
    finally:
        ledger.close()


def test_a_messages_path_file_that_comes_back_is_read_by_a_new_process(tmp_path):
    sessions = tmp_path / "sessions"
    sid = "1796020000000_brokn"
    elsewhere = tmp_path / "elsewhere" / f"{sid}.messages.json"
    write_json(elsewhere, messages_doc(sid, [assistant("msg_remote01", ms(T0), 100, 1)]))
    make_session(sessions, sid, T0, None, messages_path=str(elsewhere))
    (sessions / sid / f"{sid}.messages.json").write_bytes(b"\x00\x01")  # the co-located file never parses
    age_all(tmp_path)  # (a broken file is retried for a minute after it changed)
    path = tmp_path / "state" / "ledger.db"
    assert new_process_count(path, sessions)[:2] == (1, 100)
    aside = elsewhere.with_name("aside.json")
    elsewhere.rename(aside)  # its disk unmounted for a while, say
    assert new_process_count(path, sessions)[:2] == (1, 100)  # (its calls still count: money was spent)
    doc = json.loads(aside.read_bytes())
    call = assistant("msg_remote02", ms(T0) + 1000, 200, 2)
    doc["messages"] += [user("u-remote02", call["ts"]), call]
    write_json(elsewhere, doc)  # back, with one call more
    age(elsewhere)
    assert new_process_count(tmp_path / "fresh" / "ledger.db", sessions)[:2] == (2, 300)  # what it holds
    assert new_process_count(path, sessions)[:2] == (2, 300)


@linux
def test_a_file_added_while_the_event_queue_overflowed_is_found(tmp_path, tray, sessions):
    before = counted(tray)[0]
    overflow(sessions / LONG)
    sub = sessions / LONG / "agent_x.messages.json"  # a subagent's file appears in an ended session
    sub.write_bytes(dumps({"agent": "subagent", "messages": [assistant("msg_sub00001", 1796026909999, 10, 1)]}))
    tray.refresh(sessions)  # the overflow: every folder stat-ed
    tray.refresh(sessions)  # and the next poll
    assert counted(tray)[0] == before + 1 == fresh_count(tmp_path, sessions)


@linux
def test_a_session_folder_link_pointed_elsewhere_is_stat_ed_again(tmp_path, sessions):
    real = tmp_path / "kept" / LONG
    real.parent.mkdir()
    (sessions / LONG).rename(real)
    (sessions / LONG).symlink_to(real)  # a session folder kept on another disk, linked in
    ledger = Ledger(tmp_path / "state" / "ledger.db", wall_ns=a_minute_later)
    try:
        for _ in range(3):
            ledger.refresh(sessions)
        before = counted(ledger)[0]
        other = tmp_path / "restored" / LONG
        shutil.copytree(real, other)
        lead = other / f"{LONG}.messages.json"
        write_in_place(lead, with_call(lead))
        age_all(other)
        (sessions / LONG).unlink()
        (sessions / LONG).symlink_to(other)  # the link now names a folder with one call more
        ledger.refresh(sessions)
        ledger.refresh(sessions)
        assert counted(ledger)[0] == before + 1 == fresh_count(tmp_path, sessions)
    finally:
        ledger.close()


# ---- a rewrite that keeps size, mtime and inode (issue 19) -----------------------------------------------


@pytest.mark.parametrize("process", ["running", "new"])
def test_a_rewrite_keeping_size_mtime_and_inode_is_read_again(tmp_path, sessions, process):
    """A tool that restores a file's times after rewriting it in place (same length, same inode): only the
    change time, which no program can set, says it changed; a running tray and a new process both see it."""
    path = tmp_path / "state" / "ledger.db"
    ledger = Ledger(path, wall_ns=a_minute_later)
    ledger.refresh(sessions)
    lead = sessions / LONG / f"{LONG}.messages.json"
    before_cost = counted(ledger)[5]
    st = lead.stat()
    write_in_place(lead, same_size_other_cost(lead))
    os.utime(lead, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = lead.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (st.st_size, st.st_mtime_ns, st.st_ino)
    if process == "new":
        ledger.close()
        ledger = Ledger(path, wall_ns=a_minute_later)
    try:
        ledger.refresh(sessions)
        assert counted(ledger)[5] != before_cost
        assert counted(ledger) == counted_fresh(tmp_path, sessions)
    finally:
        ledger.close()
