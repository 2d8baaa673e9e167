"""The tray's first run on a long history (issue 20): its 1-s budgeted refreshes against one complete refresh.

    .venv/bin/python bench/bench_tray_first.py                   # 5,000 sessions x 20 calls
    .venv/bin/python bench/bench_tray_first.py --sessions 1000 --slice 0.2

The tray reads today's sessions first, then the history in slices of about `--slice` seconds, one refresh
per poll, each with the same `ClineCliSource` (the Engine keeps it). This runs those refreshes back to back
until nothing is pending, on an empty ledger, and a complete `refresh` on another empty ledger, and gives
the CPU time (process_time) and wall time of each, their ratio, and how many refreshes the loop took.
Target: the loop costs at most 1.5x the CPU of the complete refresh. Exit code 0 when it is met.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import gen_corpus  # noqa: E402

from trayburn.figures.periods import local_midnight_ms, now_date  # noqa: E402
from trayburn.ledger import Ledger  # noqa: E402
from trayburn.sources.cline_cli.source import ClineCliSource  # noqa: E402

TARGET = 1.5
TODAY_SHARE = 0.15  # as bench_cold: the rest over the 60 days before, each file dated after its last call
SUMS = "SELECT count(*), TOTAL(input), TOTAL(output), TOTAL(cost) FROM calls WHERE counted=1"


def _sums(path: Path) -> tuple:
    db = sqlite3.connect(path)
    try:
        return db.execute(SUMS).fetchone()
    finally:
        db.close()


def _complete(sessions: Path, state: Path) -> tuple[float, float]:
    ledger = Ledger(state / "ledger.db")
    ledger.backup_after_s = float("inf")
    c0, t0 = time.process_time(), time.perf_counter()
    ledger.refresh(ClineCliSource(str(sessions), time.monotonic))
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    ledger.db.close()
    return cpu, wall


def _sliced(sessions: Path, state: Path, slice_s: float) -> tuple[float, float, int]:
    ledger = Ledger(state / "ledger.db")
    ledger.backup_after_s = float("inf")
    source = ClineCliSource(str(sessions), time.monotonic)
    since = local_midnight_ms(now_date())
    c0, t0, n = time.process_time(), time.perf_counter(), 0
    while True:
        n += 1
        if not ledger.refresh(source, since, slice_s).pending:
            break
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    ledger.db.close()
    return cpu, wall, n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=5000)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--slice", type=float, default=1.0, help="the tray's budget per refresh (s)")
    ap.add_argument("--corpus", type=Path, default=None, help="a corpus folder to make or reuse")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-tray-first-"))
    corpus = args.corpus or work / "corpus"
    if not (corpus / gen_corpus.STAMP).exists():
        gen_corpus.generate(corpus, args.sessions, args.calls, 1, today_share=TODAY_SHARE)
    sessions = gen_corpus.sessions_dir(corpus)
    (work / "complete").mkdir()
    (work / "sliced").mkdir()
    full_cpu, full_wall = _complete(sessions, work / "complete")
    cpu, wall, n = _sliced(sessions, work / "sliced", args.slice)
    same = _sums(work / "complete" / "ledger.db") == _sums(work / "sliced" / "ledger.db")
    ratio = cpu / full_cpu
    print(f"complete refresh: {full_cpu:.2f} s CPU ({full_wall:.2f} s wall)")
    print(
        f"{n} refreshes of {args.slice:g} s: {cpu:.2f} s CPU ({wall:.2f} s wall), {ratio:.2f}x the complete"
        f" refresh's CPU (target at most {TARGET}x); same figures: {same}"
    )
    return 0 if ratio <= TARGET and same else 1


if __name__ == "__main__":
    sys.exit(main())
