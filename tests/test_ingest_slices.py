"""A long ingest comes in slices (write transactions of about a second). A slice that leaves sessions for
later marks nothing gone or removed, so it need not walk every folder of the scan; the slice that completes
the refresh marks what Cline removed, exactly as one complete transaction would."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers.corpus import Ledger, a_minute_later, age_all, assistant, counted, iso, make_session

START_MS = 1796000000000


def sessions_folder(root: Path, n: int, first: int = 0) -> Path:
    sessions = root / "sessions"
    for i in range(first, first + n):
        sid = f"{START_MS + i * 60_000}_s{i:04d}"
        calls = [assistant(f"msg_{i:04d}_{k}", START_MS + i * 60_000 + k, 100 + k, 10, cost=0.01) for k in range(3)]
        make_session(sessions, sid, iso(START_MS + i * 60_000), calls)
    age_all(sessions)
    return sessions


def marks(ledger: Ledger) -> tuple:
    files = ledger.query("SELECT path FROM files WHERE gone=1 ORDER BY path")
    sessions = ledger.query("SELECT id FROM sessions WHERE removed=1 ORDER BY id")
    return [Path(p).name for (p,) in files], [s for (s,) in sessions]


@pytest.mark.parametrize("slice_s", [1e-9, 60.0])
def test_a_sliced_ingest_marks_what_was_removed_at_its_end_as_one_transaction_would(tmp_path, slice_s):
    sessions = sessions_folder(tmp_path, 12)
    ledger = Ledger(tmp_path / "ledger.db", slice_s=slice_s, wall_ns=a_minute_later)
    ledger.refresh(sessions)
    before = counted(ledger)
    gone = sorted(p.name for p in sessions.iterdir())[:2]
    for name in gone:  # Cline deleted two sessions; then twenty more came
        shutil.rmtree(sessions / name)
    sessions_folder(tmp_path, 20, first=12)
    stats = ledger.refresh(sessions)
    assert stats.pending == 0 and stats.removed_sessions == 2
    assert marks(ledger) == (sorted(f"{s}{suffix}" for s in gone for suffix in (".json", ".messages.json")), gone)
    assert counted(ledger)[0] == before[0] + 60  # a removed session's calls still count
    again = ledger.refresh(sessions)
    assert again.files_read == 0 and not again.changed  # nothing present was marked gone on the way
    ledger.close()


def test_the_tray_s_slices_of_history_mark_what_was_removed_once_it_is_all_read(tmp_path):
    """The tray's poll: today first, then history with a budget, over several refreshes."""
    sessions = sessions_folder(tmp_path, 6)
    ledger = Ledger(tmp_path / "ledger.db", wall_ns=a_minute_later)
    ledger.refresh(sessions)
    victim = sorted(p.name for p in sessions.iterdir())[0]
    shutil.rmtree(sessions / victim)
    sessions_folder(tmp_path, 30, first=6)
    pending, polls = 1, 0
    while pending and polls < 100:
        pending = ledger.refresh(sessions, since_ms=START_MS + 10**9, budget_s=1e-9).pending
        polls += 1
    assert polls > 1 and pending == 0  # it took several polls, each at least one session
    assert marks(ledger)[1] == [victim]
    assert counted(ledger)[0] == 36 * 3
    assert ledger.refresh(sessions).files_read == 0
    ledger.close()
