"""A first run on a long history: cold `trayburn today` (whole process) and a full cold ingest, per size.

    .venv/bin/python bench/bench_cold.py                       # 1,000 / 5,000 / 20,000 sessions, 15 % today
    .venv/bin/python bench/bench_cold.py --sizes 1000 --json
    .venv/bin/python bench/bench_cold.py --tree . --tree /tmp/old   # two checkouts, runs interleaved
    .venv/bin/python bench/bench_cold.py --no-child            # 0.3.0: parsing in the writing process only
    .venv/bin/python bench/bench_cold.py --sizes 20000 --commands --tree /work/main --tree .   # each command

Each corpus (bench/out/cold-<n>, gitignored; made once a day: 2 GB and about 30 s at 20,000) has 15 % of its
sessions active today and the rest over the 60 days before, each file's mtime just after its session's last call
(as Cline leaves them). Beside each figure, in the same run: the read floor (open and read every file) and `python
-c pass`. Each figure is the median of --repeat runs (the trees' runs interleaved), each on a new empty state
folder. Beside the ingest's CPU: the CPU of reading and decoding every file with msgspec (untyped; the floor of
any parse), in this process. A full cold ingest runs in a child process (`Ledger.refresh`); of it: the refresh's
own seconds, the whole process's wall time and CPU (user + system, its children included), its peak RSS as the
largest sum of VmRSS over its process tree sampled every 5 ms (bench/proctree.py; what `top` shows for it), the
process's own VmHWM and its children's largest `ru_maxrss` (0.3.0 read and parsed in a forked child), and the
write-ahead log's size after it. The cold `today` process's tree peak is shown too.
`--commands`: instead, every command a person types (`COMMANDS`) as a whole process, cold (a new empty state
folder each) and warm (a state folder that read the whole history once, each command run once untimed first),
each with its wall time, CPU and whole-tree peak RSS.
Targets: cold `today` under 0.5 s at 20,000 sessions; a full in-process ingest at most 4x the read floor at
5,000; the ingest's whole-tree peak RSS under 100 MiB at 20,000 (issue 20); with `--commands`, every command's
whole-tree peak under 100 MiB at 20,000, cold and warm (issue 29).
Exit code 0 when every target is met, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import asdict
from datetime import date
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import gen_corpus  # noqa: E402
from proctree import run_tree  # noqa: E402

TODAY_SHARE = 0.15
WARMED: set[Path] = set()  # trees whose bytecode is cached

INGEST_CHILD = """
import json, os, resource, sys, time
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
children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"seconds": seconds, "kib": kib, "children_kib": children, "files_read": stats.files_read,
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


def decode_floor(files: list[str]) -> float:
    """CPU seconds to read every file and decode it with msgspec (untyped: every field, nothing kept)."""
    import msgspec

    decode, started = msgspec.json.decode, time.process_time()
    for path in files:
        with open(path, "rb") as fh:
            decode(fh.read())
    return time.process_time() - started


COMMANDS = {
    "today": ["today"],
    "today --json": ["today", "--json"],
    "sessions": ["sessions"],
    "sessions --all --json": ["sessions", "--all", "--json"],
    "report": ["report"],
    "report --by project": ["report", "--by", "project"],
    "export": ["export"],
    "doctor": ["doctor"],
}


def _env(tree: Path, **more: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONPYCACHEPREFIX": str(HERE / "out" / "pycache"), **more}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed trayburn runs from bytecode (kept out of the trees)
    return env


def _run(argv: list[str], env: dict[str, str], cwd: Path, codes: tuple[int, ...] = (0,)) -> dict:
    got = run_tree(argv, env=env, cwd=cwd)
    if got.returncode not in codes:
        raise SystemExit(f"{' '.join(argv[:3])} failed ({got.returncode}): {got.stderr[-800:]}")
    return {
        "wall_s": got.wall_s,
        "cpu_s": got.cpu_s,
        "tree_kib": got.peak_tree_kib,
        "delay_s": got.run_delay_s,
        "stdout": got.stdout,
    }


def cold_today(sessions: Path, tree: Path) -> dict:
    """A whole-process `trayburn today` on an empty state folder, and `python -c pass` beside it."""
    with tempfile.TemporaryDirectory() as tmp:
        env = _state_env(tree, sessions, Path(tmp))
        today = _run([sys.executable, "-m", "trayburn", "today"], env, Path(tmp))
        bare = _run([sys.executable, "-c", "pass"], env, Path(tmp))
    return {"today": today, "pass": bare}


def _state_env(tree: Path, sessions: Path, home: Path) -> dict[str, str]:
    return _env(
        tree,
        HOME=str(home),
        TRAYBURN_STATE_DIR=str(home / "state"),
        TRAYBURN_CONFIG=str(home / "settings.toml"),
        CLINE_SESSION_DATA_DIR=str(sessions),
    )


def command(argv: list[str], sessions: Path, tree: Path, home: Path) -> dict:
    """`trayburn <argv>` as a whole process in `home`'s state folder (doctor exits 1 when it finds a problem)."""
    got = _run([sys.executable, "-m", "trayburn", *argv], _state_env(tree, sessions, home), home, codes=(0, 1))
    del got["stdout"]
    return got


def commands(n: int, calls: int, repeat: int, trees: list[Path]) -> list[dict]:
    """Every command of COMMANDS, cold and warm, per tree (the trees' runs interleaved)."""
    sessions, _ = ensure_corpus(n, calls)
    read_floor(files_of(sessions))  # warm the page cache
    runs: dict[tuple[Path, str, str], list[dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        warm = {tree: Path(tmp) / f"warm-{i}" for i, tree in enumerate(trees)}
        for tree, home in warm.items():  # the whole history read once, then each command once (untimed)
            home.mkdir()
            command(["sessions", "--all"], sessions, tree, home)
            for argv in COMMANDS.values():
                command(argv, sessions, tree, home)
        for _ in range(repeat):
            for name, argv in COMMANDS.items():
                for tree in trees:
                    with tempfile.TemporaryDirectory(dir=tmp) as cold:
                        runs.setdefault((tree, name, "cold"), []).append(command(argv, sessions, tree, Path(cold)))
                    runs.setdefault((tree, name, "warm"), []).append(command(argv, sessions, tree, warm[tree]))
    return [
        {
            "sessions": n,
            "tree": str(tree),
            "command": name,
            "state": state,
            "repeat": repeat,
            "wall_s": round(_median(got, "wall_s"), 3),
            "cpu_s": round(_median(got, "cpu_s"), 3),
            "peak_tree_mib": round(_median(got, "tree_kib") / 1024, 1),
            "peak_tree_runs_mib": [round(r["tree_kib"] / 1024, 1) for r in got],
        }
        for (tree, name, state), got in runs.items()
    ]


def render_commands(rows: list[dict]) -> str:
    lines = [f"{'sessions':>8}  {'tree':>12}  {'command':24} {'state':5} {'wall':>9} {'CPU':>9} {'tree peak':>10}"]
    for r in sorted(rows, key=lambda r: (r["sessions"], r["state"], list(COMMANDS).index(r["command"]), r["tree"])):
        lines.append(
            f"{r['sessions']:>8,}  {Path(r['tree']).name:>12}  {r['command']:24} {r['state']:5}"
            f" {r['wall_s']:7.2f} s {r['cpu_s']:7.2f} s {r['peak_tree_mib']:6.0f} MiB"
        )
    return "\n".join(lines)


def full_ingest(sessions: Path, tree: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        got = _run(
            [sys.executable, "-c", INGEST_CHILD, str(Path(tmp) / "ledger.db"), str(sessions)], _env(tree), Path(tmp)
        )
    return {**json.loads(got.pop("stdout")), **got}


def _median(runs: list[dict], *path: str) -> float:
    values: list[float] = []
    for run in runs:
        value: Any = run
        for key in path:
            value = value[key]
        values.append(value)
    return statistics.median(values)


def measure(n: int, calls: int, repeat: int, trees: list[Path]) -> list[dict]:
    sessions, expected = ensure_corpus(n, calls)
    files = files_of(sessions)
    read_floor(files)  # warm the page cache
    floor = statistics.median(read_floor(files) for _ in range(repeat))
    decode = statistics.median(decode_floor(files) for _ in range(repeat))
    for tree in trees:
        if tree not in WARMED:  # untimed: Python compiles the tree's modules into the bytecode cache once
            cold_today(sessions, tree)
            WARMED.add(tree)
    todays: dict[Path, list[dict]] = {t: [] for t in trees}
    ingests: dict[Path, list[dict]] = {t: [] for t in trees}
    for _ in range(repeat):  # the trees interleaved: each sees the same machine load
        for tree in trees:
            todays[tree].append(cold_today(sessions, tree))
            got = full_ingest(sessions, tree)
            assert got["counted"] == expected["calls"], (tree, got["counted"], expected["calls"])
            ingests[tree].append(got)
    rows = []
    for tree in trees:
        t, i = todays[tree], ingests[tree]
        ingest_s = _median(i, "seconds")
        rows.append(
            {
                "sessions": n,
                "tree": str(tree),
                "files": len(files),
                "mb": round(expected["bytes"] / 1e6),
                "repeat": repeat,
                "cold_today_s": round(_median(t, "today", "wall_s"), 3),
                "cold_today_cpu_s": round(_median(t, "today", "cpu_s"), 3),
                "cold_today_tree_mib": round(_median(t, "today", "tree_kib") / 1024, 1),
                "python_pass_s": round(_median(t, "pass", "wall_s"), 3),
                "ingest_s": round(ingest_s, 3),
                "ingest_runs_s": [round(r["seconds"], 3) for r in i],
                "ingest_process_s": round(_median(i, "wall_s"), 3),
                "ingest_cpu_s": round(_median(i, "cpu_s"), 3),
                "ingest_run_delay_s": round(_median(i, "delay_s"), 3),
                "ingest_cpu_runs_s": [round(r["cpu_s"], 3) for r in i],
                "read_floor_s": round(floor, 3),
                "decode_floor_cpu_s": round(decode, 3),
                "ingest_cpu_to_decode": round(_median(i, "cpu_s") / decode, 2),
                "ingest_ratio": round(ingest_s / floor, 2),
                "peak_tree_mib": round(_median(i, "tree_kib") / 1024, 1),
                "peak_tree_runs_mib": [round(r["tree_kib"] / 1024, 1) for r in i],
                "peak_rss_mib": round(_median(i, "kib") / 1024, 1),  # the ingest process's own VmHWM
                "peak_children_mib": round(_median(i, "children_kib") / 1024, 1),
                "wal_mb": round(_median(i, "wal") / 1e6, 1),
                "ledger_mb": round(_median(i, "ledger") / 1e6, 1),
            }
        )
    return rows


def targets(rows: list[dict]) -> list[str]:
    missed = []
    for r in rows:
        if "command" in r:
            if r["sessions"] >= 20000 and r["peak_tree_mib"] >= 100:
                missed.append(f"{r['state']} {r['command']}'s tree peak RSS {r['peak_tree_mib']} MiB (target < 100)")
            continue
        if r["sessions"] >= 20000 and r["cold_today_s"] >= 0.5:
            missed.append(f"cold today {r['cold_today_s']} s at {r['sessions']} (target < 0.5 s)")
        if r["sessions"] == 5000 and r["ingest_ratio"] > 4:
            missed.append(f"ingest {r['ingest_ratio']}x the read floor at 5000 (target <= 4x)")
        if r["sessions"] >= 20000 and r["peak_tree_mib"] >= 100:
            missed.append(f"ingest's tree peak RSS {r['peak_tree_mib']} MiB at {r['sessions']} (target < 100)")
    return missed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 20000])
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--clean", action="store_true", help="remove the corpora afterwards")
    ap.add_argument("--commands", action="store_true", help="every command, cold and warm, instead of the ingest")
    ap.add_argument("--no-child", action="store_true", help="0.3.0 (--tree) without its parse child")
    ap.add_argument(
        "--tree",
        type=Path,
        action="append",
        help="run this checkout's trayburn/ (e.g. the code before a change); repeat it to compare checkouts",
    )
    args = ap.parse_args(argv)
    trees = [t.resolve() for t in args.tree] if args.tree else [ROOT]
    if args.no_child:
        os.environ["TRAYBURN_PARSE_PROCESS"] = "0"  # (the children's environments are copies of ours)
    with open("/proc/loadavg") as fh:
        load = fh.read().split()[:3]
    bench = commands if args.commands else measure
    rows = [row for n in args.sizes for row in bench(n, args.calls, args.repeat, trees)]
    missed = targets(rows)
    if args.json:
        print(json.dumps({"load": load, "rows": rows, "missed": missed}, indent=2))
    elif args.commands:
        print(f"{TODAY_SHARE:.0%} of sessions active today; median of {args.repeat}; load {' '.join(load)}")
        print(render_commands(rows))
        for m in missed:
            print("MISSED:", m)
    else:
        load_s = " ".join(load)
        print(f"{TODAY_SHARE:.0%} of sessions active today; median of {args.repeat}; warm page cache; load {load_s}")
        head = (
            "sessions", "tree", "MB", "cold today", "python -c pass", "full ingest", "ingest process", "CPU",
            "run delay", "read floor", "ratio", "msgspec CPU", "CPU/msgspec", "tree peak RSS", "own VmHWM",
            "children", "WAL",
        )  # fmt: skip
        print("  ".join(f"{h:>14}" for h in head))
        for r in rows:
            cells = (
                f"{r['sessions']:,}", Path(r["tree"]).name, r["mb"], f"{r['cold_today_s']:.3f} s",
                f"{r['python_pass_s']:.3f} s", f"{r['ingest_s']:.3f} s", f"{r['ingest_process_s']:.3f} s",
                f"{r['ingest_cpu_s']:.3f} s", f"{r['ingest_run_delay_s']:.3f} s", f"{r['read_floor_s']:.3f} s",
                f"{r['ingest_ratio']:.1f}x", f"{r['decode_floor_cpu_s']:.3f} s", f"{r['ingest_cpu_to_decode']:.1f}x",
                f"{r['peak_tree_mib']:.0f} MiB", f"{r['peak_rss_mib']:.0f} MiB", f"{r['peak_children_mib']:.0f} MiB",
                f"{r['wal_mb']:.1f} MB",
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
