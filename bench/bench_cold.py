"""A first run on a long history: cold `trayburn today` (whole process) and a full cold ingest, per size.

    .venv/bin/python bench/bench_cold.py                       # 1,000 / 5,000 / 20,000 sessions, 15 % today
    .venv/bin/python bench/bench_cold.py --sizes 1000 --json
    .venv/bin/python bench/bench_cold.py --no-child            # parsing in the writing process only

Each corpus (bench/out/cold-<n>, gitignored) has 15 % of its sessions active today and the rest over the 60
days before, each file's mtime just after its session's last call (as Cline leaves them). Beside each figure,
in the same run: the read floor (open and read every file) and `python -c pass`. Figures: the best of
--repeat runs, each on a new empty state folder; peak RSS (VmHWM) and the write-ahead log's size after a
full ingest come from a child process. Targets: cold `today` under 0.5 s at 20,000 sessions; a full
in-process ingest at most 4x the read floor at 5,000; peak RSS under 60 MiB at 20,000.
Exit code 0 when every target is met, 1 otherwise. A cold ingest reads, parses and writes in one process (its
peak RSS is the whole tree's). trayburn 0.3.0 (`--tree`) read and parsed in a forked child: `--no-child`
measures it without (TRAYBURN_PARSE_PROCESS=0), and its peak RSS leaves out the child's own pages.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import gen_corpus  # noqa: E402

TODAY_SHARE = 0.15
TREE = [ROOT]  # the checkout whose trayburn/ the child processes run (--tree)

INGEST_CHILD = """
import json, os, sys, time
from trayburn.ledger import Ledger
try:
    from trayburn.sources.cline_cli.source import ClineCliSource
    source = ClineCliSource(sys.argv[2], time.monotonic)
except ImportError:  # trayburn 0.3.0 (--tree): its ledger took the folder
    source = sys.argv[2]
ledger = Ledger(sys.argv[1])
started = time.perf_counter()
stats = ledger.refresh(source)
seconds = time.perf_counter() - started
with open("/proc/self/status") as fh:
    kib = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
wal = sys.argv[1] + "-wal"
print(json.dumps({"seconds": seconds, "kib": kib, "files_read": stats.files_read,
                  "wal": os.path.getsize(wal) if os.path.exists(wal) else 0, "ledger": os.path.getsize(sys.argv[1]),
                  "counted": ledger.query("SELECT COUNT(*) FROM calls WHERE counted=1")[0][0]}))
"""


def ensure_corpus(n: int, calls: int) -> tuple[Path, dict]:
    out = HERE / "out" / f"cold-{n}"
    want = asdict(gen_corpus.Params(n, calls, 1, today_share=TODAY_SHARE, day=date.today().isoformat()))
    stamp = gen_corpus.load_stamp(out)
    if not stamp or stamp["params"] != want:
        print(f"generating {n} sessions ({TODAY_SHARE:.0%} today) into {out} ...", file=sys.stderr)
        gen_corpus.generate(out, n, calls, 1, today_share=TODAY_SHARE)
        stamp = gen_corpus.load_stamp(out)
    assert stamp is not None
    return gen_corpus.sessions_dir(out), stamp["expected"]


def files_of(sessions: Path) -> list[str]:
    return [e.path for d in os.scandir(sessions) for e in os.scandir(d.path) if e.name.endswith(".json")]


def read_floor(files: list[str]) -> float:
    started = time.perf_counter()
    for path in files:
        with open(path, "rb") as fh:
            fh.read()
    return time.perf_counter() - started


def timed_process(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, check=True, cwd=TREE[0])
    return time.perf_counter() - started


def cold_today(sessions: Path, repeat: int) -> tuple[float, float]:
    """Best whole-process `trayburn today` on an empty state folder, and `python -c pass`."""
    runs, bare = [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            env = {
                **os.environ,
                "HOME": tmp,
                "TRAYBURN_STATE_DIR": str(Path(tmp) / "state"),
                "TRAYBURN_CONFIG": str(Path(tmp) / "settings.toml"),
                "CLINE_SESSION_DATA_DIR": str(sessions),
                "PYTHONPATH": str(TREE[0]),
            }
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            runs.append(timed_process([sys.executable, "-m", "trayburn", "today"], env))
            bare.append(timed_process([sys.executable, "-c", "pass"], env))
    return min(runs), min(bare)


def full_ingest(sessions: Path, repeat: int) -> dict:
    best: dict | None = None
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            env = {**os.environ, "PYTHONPATH": str(TREE[0])}
            out = subprocess.run(
                [sys.executable, "-c", INGEST_CHILD, str(Path(tmp) / "ledger.db"), str(sessions)],
                env=env,
                capture_output=True,
                check=True,
                text=True,
                cwd=TREE[0],
            ).stdout
            got = json.loads(out)
            if best is None or got["seconds"] < best["seconds"]:
                best = got
    assert best is not None
    return best


def measure(n: int, calls: int, repeat: int) -> dict:
    sessions, expected = ensure_corpus(n, calls)
    files = files_of(sessions)
    read_floor(files)  # warm the page cache
    floor = min(read_floor(files) for _ in range(repeat))
    today, bare = cold_today(sessions, repeat)
    ingest = full_ingest(sessions, repeat)
    assert ingest["counted"] == expected["calls"], (ingest["counted"], expected["calls"])
    return {
        "sessions": n,
        "files": len(files),
        "mb": round(expected["bytes"] / 1e6),
        "cold_today_s": round(today, 3),
        "python_pass_s": round(bare, 3),
        "ingest_s": round(ingest["seconds"], 3),
        "read_floor_s": round(floor, 3),
        "ingest_ratio": round(ingest["seconds"] / floor, 2),
        "peak_rss_mib": round(ingest["kib"] / 1024, 1),
        "wal_mb": round(ingest["wal"] / 1e6, 1),
        "ledger_mb": round(ingest["ledger"] / 1e6, 1),
    }


def targets(rows: list[dict]) -> list[str]:
    missed = []
    for r in rows:
        if r["sessions"] >= 20000 and r["cold_today_s"] >= 0.5:
            missed.append(f"cold today {r['cold_today_s']} s at {r['sessions']} (target < 0.5 s)")
        if r["sessions"] == 5000 and r["ingest_ratio"] > 4:
            missed.append(f"ingest {r['ingest_ratio']}x the read floor at 5000 (target <= 4x)")
        if r["sessions"] >= 20000 and r["peak_rss_mib"] >= 60:
            missed.append(f"peak RSS {r['peak_rss_mib']} MiB at {r['sessions']} (target < 60)")
    return missed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 20000])
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--clean", action="store_true", help="remove the corpora afterwards")
    ap.add_argument("--no-child", action="store_true", help="0.3.0 (--tree) without its parse child")
    ap.add_argument("--tree", type=Path, help="run another checkout's trayburn/ (e.g. the code before a change)")
    args = ap.parse_args(argv)
    if args.tree:
        TREE[0] = args.tree.resolve()
    if args.no_child:
        os.environ["TRAYBURN_PARSE_PROCESS"] = "0"  # (the children's environments are copies of ours)
    rows = [measure(n, args.calls, args.repeat) for n in args.sizes]
    missed = targets(rows)
    if args.json:
        print(json.dumps({"rows": rows, "missed": missed}, indent=2))
    else:
        print(f"{TODAY_SHARE:.0%} of sessions active today; best of {args.repeat}; warm page cache\n")
        head = (
            "sessions",
            "MB",
            "cold today",
            "python -c pass",
            "full ingest",
            "read floor",
            "ratio",
            "peak RSS",
            "WAL",
        )
        print("  ".join(f"{h:>14}" for h in head))
        for r in rows:
            cells = (
                f"{r['sessions']:,}", r["mb"], f"{r['cold_today_s']:.3f} s", f"{r['python_pass_s']:.3f} s",
                f"{r['ingest_s']:.3f} s", f"{r['read_floor_s']:.3f} s", f"{r['ingest_ratio']:.1f}x",
                f"{r['peak_rss_mib']:.0f} MiB", f"{r['wal_mb']:.1f} MB",
            )  # fmt: skip
            print("  ".join(f"{c:>14}" for c in cells))
        for m in missed:
            print("MISSED:", m)
    if args.clean:
        for n in args.sizes:
            shutil.rmtree(HERE / "out" / f"cold-{n}", ignore_errors=True)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
