"""Benchmark the rebuild of a damaged ledger at 5,000 sessions (issue 19): the calls table's root page zeroed.

    .venv/bin/python bench/bench_salvage.py                  # 5,000 sessions x 20 calls
    .venv/bin/python bench/bench_salvage.py --sessions 500

Builds a ledger from a generated corpus, deletes a fifth of the sessions from disk (their calls then live
only in the ledger), makes a backup (backup.make: timed), then damages one page and times `open_ledger`
(the page-by-page salvage and the merge with the backup) and the refresh that re-reads the files still on
disk, beside the floor measured in the same run: reading the ledger file's bytes once. Prints what was
recovered. Damages: the calls table's root, the sessions table's root, the files table's root.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import gen_corpus  # noqa: E402

from trayburn.ledger import Ledger, backups  # noqa: E402
from trayburn.ledger.schema import open_ledger  # noqa: E402
from trayburn.sources.cline_cli.source import ClineCliSource  # noqa: E402


def _cline(sessions: Path) -> ClineCliSource:
    return ClineCliSource(str(sessions), time.monotonic)


SUMS = "SELECT count(*), TOTAL(input), TOTAL(output), TOTAL(cost) FROM calls WHERE counted=1"


def _sums(path: Path) -> tuple:
    db = sqlite3.connect(path)
    try:
        return db.execute(SUMS).fetchone()
    finally:
        db.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=5000)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--keep", type=Path, default=None, help="a folder to keep the corpus and ledger in")
    args = ap.parse_args(argv)
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-salvage-"))
    corpus = work / "corpus"
    if not (corpus / gen_corpus.STAMP).exists():
        gen_corpus.generate(corpus, args.sessions, args.calls, 1)
    sessions = gen_corpus.sessions_dir(corpus)
    built = work / "built" / "ledger.db"
    if not built.exists():
        built.parent.mkdir(parents=True)
        t0 = time.perf_counter()
        ledger = Ledger(built)
        ledger.refresh(_cline(sessions))
        print(f"cold ingest: {time.perf_counter() - t0:.1f} s")
        for i, sid in enumerate(sorted(p.name for p in sessions.iterdir())):
            if i % 5 == 0:
                shutil.rmtree(sessions / sid)
        ledger.refresh(_cline(sessions))
        ledger.close()
    truth = _sums(built)
    db = sqlite3.connect(built)
    t0 = time.perf_counter()
    kept = backups.make_backup(db, built)
    made = time.perf_counter() - t0
    roots = dict(db.execute("SELECT name, rootpage FROM sqlite_master WHERE type='table'"))
    size = db.execute("PRAGMA page_size").fetchone()[0]
    db.close()
    t0 = time.perf_counter()
    built.read_bytes()
    floor = time.perf_counter() - t0
    print(f"ledger {built.stat().st_size / 1e6:.1f} MB, {truth[0]:,} counted calls; backup made in {made:.2f} s")
    print(f"floor: reading the ledger's bytes once {floor * 1000:.0f} ms")
    for table in ("calls", "sessions", "files"):
        for with_backup in (True, False):
            state = work / f"damaged-{table}-{with_backup}"
            shutil.rmtree(state, ignore_errors=True)
            state.mkdir()
            damaged = state / "ledger.db"
            shutil.copy2(built, damaged)
            if with_backup and kept is not None:
                shutil.copy2(kept, state / kept.name)
            with open(damaged, "r+b") as fh:
                fh.seek((roots[table] - 1) * size)
                fh.write(b"\0" * size)
            t0 = time.perf_counter()
            opened = open_ledger(damaged, 30)
            salvaged = time.perf_counter() - t0
            opened.db.close()
            ledger = Ledger(damaged)
            t0 = time.perf_counter()
            ledger.refresh(_cline(sessions))
            refreshed = time.perf_counter() - t0
            ledger.close()
            got = _sums(damaged)
            print(
                f"{table} root zeroed, {'with' if with_backup else 'no'} backup: open + salvage {salvaged:.2f} s"
                f" ({salvaged / floor:.0f}x the floor), refresh of the files on disk {refreshed:.1f} s;"
                f" {got[0]:,} of {truth[0]:,} calls, ${got[3]:.2f} of ${truth[3]:.2f}  [{opened.notice}]"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
