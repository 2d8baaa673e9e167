"""A running tray's polls on Linux: the kernel's inotify says which session folders changed, so the files of
sessions that ended are not stat-ed while nothing happens in their folders (cline/watch.py). Every test is on
real files and the real kernel; each checks that what the watcher skips could not have changed, and that what
it cannot vouch for (a full queue, no watch left, a folder that went away) is stat-ed as before."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from helpers.corpus import Ledger, a_minute_later, age_all, assistant, counted, dumps, user, write_in_place
from helpers.polled import overflow, sessions, tray  # noqa: F401 (fixtures: the real recording, polled as the tray polls it)

from trayburn import watch

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
LONG = "1796026909249_y8q37"  # a completed session of the real recording


def stats_during(monkeypatch, run) -> list[str]:
    """The paths os.stat was asked for while `run` ran (the scan looks os.stat up at each scan)."""
    seen: list[str] = []
    real = os.stat

    def counting(path, *args, **kwargs):
        seen.append(os.fsdecode(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", counting)
    try:
        run()
    finally:
        monkeypatch.setattr(os, "stat", real)
    return seen


def add_call(sessions: Path, sid: str) -> None:
    path = sessions / sid / f"{sid}.messages.json"
    doc = json.loads(path.read_bytes())
    call = assistant("msg_watch001", doc["messages"][-1]["ts"] + 1000, 1000, 10, cost=0.5)
    doc["messages"] += [user("u-watch", call["ts"]), call]
    write_in_place(path, dumps(doc))


def test_an_idle_poll_stats_no_file_of_an_ended_session(tray, sessions, monkeypatch):
    ended = sessions / LONG
    stats = stats_during(monkeypatch, lambda: tray.refresh(sessions))
    assert not [p for p in stats if p.startswith(str(ended))]
    assert tray.cline_source(sessions).listings.watcher.watched(str(sessions / LONG))


def test_a_call_added_to_an_ended_session_is_counted_at_the_next_poll(tray, sessions):
    before = counted(tray)
    add_call(sessions, LONG)  # the messages file only, in place, as a resumed session's first call
    stats = tray.refresh(sessions)
    assert stats.files_read == 1
    assert counted(tray)[0] == before[0] + 1
    assert counted(tray)[5] == pytest.approx(before[5] + 0.5, abs=1e-9)


def test_a_touch_a_new_file_and_a_removed_folder_are_each_seen(tray, sessions):
    before = counted(tray)[0]
    sub = sessions / LONG / "agent_x.messages.json"  # a subagent's file appears in an ended session
    sub.write_bytes(dumps({"agent": "subagent", "messages": [assistant("msg_sub00001", 1796026909999, 10, 1)]}))
    tray.refresh(sessions)
    assert counted(tray)[0] == before + 1
    shutil.rmtree(sessions / LONG)  # gone: its watch goes with it, its calls still count (money was spent)
    tray.refresh(sessions)
    assert not tray.cline_source(sessions).listings.watcher.watched(str(sessions / LONG))
    assert counted(tray)[0] == before + 1


def test_a_full_event_queue_means_every_folder_is_stat_ed(tray, sessions, monkeypatch):
    overflow(sessions / LONG)
    assert tray.cline_source(sessions).listings.watcher.changed() is None
    overflow(sessions / LONG)
    other = next(p for p in sessions.iterdir() if p.name != LONG)
    stats = stats_during(monkeypatch, lambda: tray.refresh(sessions))
    assert [p for p in stats if p.startswith(str(other))]  # an unrelated folder is stat-ed again


def test_without_a_watch_left_the_folders_are_stat_ed_as_before(tmp_path, sessions, monkeypatch):
    monkeypatch.setattr(watch, "MAX_WATCHES", 0)
    ledger = Ledger(tmp_path / "state" / "ledger.db", wall_ns=a_minute_later)
    for _ in range(3):
        ledger.refresh(sessions)
    before = counted(ledger)[0]
    add_call(sessions, LONG)
    assert ledger.refresh(sessions).files_read == 1
    assert counted(ledger)[0] == before + 1
    ledger.close()


def test_closing_the_ledger_gives_the_watches_back(tmp_path, sessions):
    ledger = Ledger(tmp_path / "state" / "ledger.db", wall_ns=a_minute_later)
    for _ in range(2):
        ledger.refresh(sessions)
    fd = ledger.cline_source(sessions).listings.watcher._fd
    assert os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify"
    ledger.close()
    assert not os.path.exists(f"/proc/self/fd/{fd}") or os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:inotify"


def test_a_folder_moved_away_and_another_made_in_its_place_is_watched_anew(tray, sessions):
    """The old folder's watch follows it to its new name; the folder now at the path is watched afresh,
    so a call added to it is seen at the next poll."""
    folder = sessions / LONG
    aside = sessions.parent / "aside"
    folder.rename(aside)
    shutil.copytree(aside, folder)  # another folder (another inode) with the same name and files
    age_all(folder)
    tray.refresh(sessions)
    before = counted(tray)[0]
    add_call(sessions, LONG)
    assert tray.refresh(sessions).files_read == 1
    assert counted(tray)[0] == before + 1


MOUNTS = """\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 253:0 / / rw,relatime - ext4 /dev/vda rw
90 27 0:50 / /home rw,relatime - nfs4 server:/home rw,vers=4.2
91 90 0:51 / /home/me/local\\040disk rw,relatime - ext4 /dev/vdb rw
92 27 0:52 / /mnt/box rw,nosuid - fuse.sshfs me@box:/ rw
93 27 0:53 / /mnt/host rw,relatime - virtiofs hostshare rw
94 27 0:54 / /media/sf_work rw,nodev - vboxsf work rw
95 27 0:55 / /srv/cluster rw,relatime - gfs2 /dev/mapper/shared rw
"""


@pytest.mark.parametrize(
    ("folder", "network"),
    [
        ("/home/me/.cline/data/sessions", True),  # on the NFS home
        ("/home/me/local disk/sessions", False),  # a local disk mounted inside it (the longest mount wins)
        ("/mnt/box/.cline", True),
        ("/srv/cline", False),
        ("/mnt/host/.cline", True),  # a virtual machine's folder shared from its host
        ("/media/sf_work/cline", True),  # VirtualBox's shared folder
        ("/srv/cluster/cline", True),  # a cluster file system another node writes
    ],
)
def test_a_network_file_system_gets_no_watcher(folder, network):
    """Changes another machine makes there reach no inotify watch here: such folders are stat-ed every poll."""
    assert watch._network(folder, MOUNTS) is network


def test_this_machines_own_folders_are_watched(tmp_path):
    assert not watch._network(str(tmp_path)) and watch.watcher(str(tmp_path)) is not None
