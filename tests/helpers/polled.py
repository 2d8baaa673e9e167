"""The real recording, copied and polled as the tray polls it: the fixtures the inotify tests and the tests of
the skip-work paths share (`sessions`, `tray`), and `overflow`, which fills the kernel's event queue."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .corpus import Ledger, a_minute_later, age_all, copy_corpus, sessions_of


@pytest.fixture
def sessions(tmp_path):
    folder = sessions_of(copy_corpus(tmp_path / "cline"))
    age_all(folder)
    old = folder.stat().st_mtime - 600  # the sessions folder too: one changed a moment ago is listed again
    os.utime(folder, (old, old))
    return folder


@pytest.fixture
def tray(tmp_path, sessions):
    """A ledger polled as the tray polls it: refreshed until its scans are served from the watches."""
    ledger = Ledger(tmp_path / "state" / "ledger.db", wall_ns=a_minute_later)
    for _ in range(3):
        ledger.refresh(sessions)
    assert ledger.cline_source(sessions).listings.watcher is not None, "inotify_init1 failed on this machine"
    yield ledger
    ledger.close()


def overflow(folder: Path) -> None:
    """More events than the kernel keeps (two files in turn: it merges an event only into the same one)."""
    with open("/proc/sys/fs/inotify/max_queued_events", encoding="ascii") as fh:
        queue = int(fh.read())
    files = sorted(folder.iterdir())[:2]
    times = [(f, f.stat()) for f in files]
    for i in range(queue + 10):
        f, st = times[i % 2]
        os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
