"""Whole-process CLI figures, as a person sees them typing `trayburn today` in a terminal.

    .venv/bin/python bench/bench_cli.py                      # 1,000 and 5,000 sessions x 20 calls
    .venv/bin/python bench/bench_cli.py --sessions 1000 --repeat 9 --json
    .venv/bin/python bench/bench_cli.py --tree /tmp/old-trayburn   # the same figures for another checkout

Each figure is the best of `--repeat` runs of a fresh process (the interpreter's start-up included),
after one untimed run that brings the ledger and the prices cache up to date (warm). Beside them, in
the same run and on the same corpus: `python -c pass`, and a process that stats every file under
the sessions folder (a walk with scandir + stat: what a no-change refresh must at least do). The
target: a warm `trayburn today` within 2x that stat floor. Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gen_corpus  # noqa: E402
from bench_ledger import ensure_corpus  # noqa: E402

TARGET = 2.0
STAT_FLOOR = """
import os, sys
def walk(path):
    n = 0
    with os.scandir(path) as it:
        for entry in it:
            if entry.is_dir(follow_symlinks=False):
                n += walk(entry.path)
            else:
                os.stat(entry.path)
                n += 1
    return n
print(walk(sys.argv[1]))
"""


def commands(day: str) -> dict[str, list[str]]:
    run = [sys.executable, "-m", "trayburn"]
    return {
        "today": [*run, "today"],
        f"today --date {day}": [*run, "today", "--date", day],
        "today --json": [*run, "today", "--json"],
        "sessions": [*run, "sessions"],
        "doctor": [*run, "doctor"],
    }


def best_of(argv: list[str], env: dict[str, str], repeat: int, cwd: Path) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.perf_counter() - start)
        if done.returncode not in (0, 1):  # doctor exits 1 when something is wrong (no tray here)
            raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    return min(times)


def measure(sessions: int, calls: int, repeat: int, tree: Path | None) -> dict:
    corpus = HERE / "out" / f"cli-{sessions}"
    ensure_corpus(corpus, sessions, calls, seed=1)
    # one state folder per tree: two versions of trayburn may not share a ledger (another schema)
    where = "tree-" + hashlib.blake2b(str(Path(tree).resolve()).encode(), digest_size=4).hexdigest() if tree else "here"
    state = HERE / "out" / f"cli-state-{sessions}-{where}"
    state.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "CLINE_DIR": str(corpus),
        "TRAYBURN_STATE_DIR": str(state),
        "TRAYBURN_CONFIG": str(state / "settings.toml"),
        "TRAYBURN_LOG_DIR": str(state / "log"),
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed trayburn runs from bytecode: so do these runs
    if tree:  # (the processes run in the state folder, so `-m trayburn` does not find ./trayburn first)
        env["PYTHONPATH"] = str(tree)
    folder = gen_corpus.sessions_dir(corpus)
    last_day = time.strftime("%Y-%m-%d", time.localtime(gen_corpus.END_MS / 1000 - 3600))
    floors = {
        "python -c pass": best_of([sys.executable, "-c", "pass"], env, repeat, state),
        "stat every file": best_of([sys.executable, "-c", STAT_FLOOR, str(folder)], env, repeat, state),
    }
    figures = {}
    for name, argv in commands(last_day).items():
        best_of(argv, env, 1, state)  # warm: the ledger and the prices cache up to date
        figures[name] = best_of(argv, env, repeat, state)
    stat = floors["stat every file"]
    return {
        "sessions": sessions,
        "calls": calls,
        "tree": str(tree) if tree else None,
        "floors_s": floors,
        "figures_s": figures,
        "ratio_to_stat_floor": {k: v / stat for k, v in figures.items()},
        "target": {"today": TARGET, "passed": figures["today"] / stat <= TARGET},
    }


def render(results: list[dict]) -> str:
    lines = []
    for r in results:
        lines.append(
            f"{r['sessions']:,} sessions x {r['calls']} calls" + (f"  (code: {r['tree']})" if r["tree"] else "")
        )
        for name, s in r["floors_s"].items():
            lines.append(f"  {name:28} {s * 1000:7.0f} ms   (floor)")
        for name, s in r["figures_s"].items():
            ratio = r["ratio_to_stat_floor"][name]
            mark = f"   target <= {TARGET:g}x: {'met' if ratio <= TARGET else 'MISSED'}" if name == "today" else ""
            lines.append(f"  trayburn {name:19} {s * 1000:7.0f} ms   {ratio:4.1f}x stat floor{mark}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, nargs="+", default=[1000, 5000])
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--tree", type=Path, help="benchmark the trayburn package in this folder (PYTHONPATH)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    results = [measure(n, args.calls, args.repeat, args.tree) for n in args.sessions]
    print(json.dumps(results, indent=2) if args.json else render(results))
    return 0 if all(r["target"]["passed"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
