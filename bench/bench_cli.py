"""Whole-process CLI figures, as a person sees them typing `trayburn today` in a terminal.

    .venv/bin/python bench/bench_cli.py                      # 1,000 and 5,000 sessions x 20 calls
    .venv/bin/python bench/bench_cli.py --sessions 1000 --repeat 9 --json
    .venv/bin/python bench/bench_cli.py --tree /tmp/old-trayburn   # the same figures for another checkout
    .venv/bin/python bench/bench_cli.py --tree . --tree /tmp/old   # both, their runs interleaved
    .venv/bin/python bench/bench_cli.py --busy --sessions 5000 20000  # 15 % of the sessions today (bench_cold's)

Each figure is the median of `--repeat` runs of a fresh process (the interpreter's start-up included; the
best is in --json), as wall time and as CPU time (user + system: what the load of a shared machine changes
least), after one untimed run that brings the ledger and the prices cache up to date (warm).
Beside them, in the same run and on the same corpus: `python -c pass`, and a process that stats every file
under the sessions folder (a walk with scandir + stat: what a no-change refresh must at least do). With
several trees, each round runs every command of every tree once, so all see the same machine load. The
target: a warm `trayburn today` within 2x that stat floor in CPU time (the wall ratio is shown beside it).
Exits 1 when a target is missed. `--busy`: on
bench_cold.py's corpora instead (bench/out/cold-<n>: 15 % of the sessions active today, so 5,000 sessions hold
about 15,000 calls of today: a busy day), the figures of today's calls weighing in.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
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
        "report": [*run, "report"],
        "report --by project": [*run, "report", "--by", "project"],
        "doctor": [*run, "doctor"],
    }


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall time and CPU time (user + system, its children included) of one run."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):  # doctor exits 1 when something is wrong (no tray here)
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {err.decode()[-500:]}")
    return seconds, usage.ru_utime + usage.ru_stime


def setup(sessions: int, calls: int, tree: Path | None, busy: bool = False) -> tuple[dict[str, str], Path, Path]:
    if busy:
        import bench_cold

        corpus = bench_cold.ensure_corpus(sessions, calls)[0].parent.parent
    else:
        corpus = HERE / "out" / f"cli-{sessions}"
        ensure_corpus(corpus, sessions, calls, seed=1)
    # one state folder per tree: two versions of trayburn may not share a ledger (another schema)
    where = "tree-" + hashlib.blake2b(str(Path(tree).resolve()).encode(), digest_size=4).hexdigest() if tree else "here"
    state = HERE / "out" / f"cli-state-{sessions}{'-busy' if busy else ''}-{where}"
    return run_env(corpus, state, tree), state, gen_corpus.sessions_dir(corpus)


def run_env(corpus: Path, state: Path, tree: Path | None) -> dict[str, str]:
    """The environment of a trayburn run on `corpus` with its own `state` folder (made), from `tree` if given."""
    state.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "CLINE_DIR": str(corpus),
        "TRAYBURN_STATE_DIR": str(state),
        "TRAYBURN_CONFIG": str(state / "settings.toml"),
        "TRAYBURN_LOG_DIR": str(state / "log"),
        # an installed trayburn runs from bytecode: so do these runs (kept out of the checkouts themselves)
        "PYTHONPYCACHEPREFIX": str(HERE / "out" / "pycache"),
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if tree:  # (the processes run in the state folder, so `-m trayburn` does not find ./trayburn first)
        env["PYTHONPATH"] = str(tree)
    return env


def measure(sessions: int, calls: int, repeat: int, trees: list[Path | None], busy: bool = False) -> list[dict]:
    last_day = time.strftime("%Y-%m-%d", time.localtime(gen_corpus.END_MS / 1000 - 3600))
    runs = commands(last_day)
    ready = {tree: setup(sessions, calls, tree, busy) for tree in trees}
    Runs = dict[Path | None, dict[str, list[tuple[float, float]]]]
    floors: Runs = {t: {"python -c pass": [], "stat every file": []} for t in trees}
    times: Runs = {t: {name: [] for name in runs} for t in trees}
    for tree in trees:
        env, state, _ = ready[tree]
        # warm: the whole history read (a command reads only 0.1 s of what it has not read yet), then the
        # prices cache and whatever each command keeps up to date
        timed([sys.executable, "-m", "trayburn", "sessions", "--all"], env, state)
        for argv in runs.values():
            timed(argv, env, state)
    for _ in range(repeat):
        for tree in trees:
            env, state, folder = ready[tree]
            floors[tree]["python -c pass"].append(timed([sys.executable, "-c", "pass"], env, state))
            floors[tree]["stat every file"].append(timed([sys.executable, "-c", STAT_FLOOR, str(folder)], env, state))
            for name, argv in runs.items():
                times[tree][name].append(timed(argv, env, state))
    results = []
    for tree in trees:
        floor = {k: statistics.median(w for w, _ in v) for k, v in floors[tree].items()}
        figures = {k: statistics.median(w for w, _ in v) for k, v in times[tree].items()}
        stat = floor["stat every file"]
        cpu = {k: statistics.median(c for _, c in v) for k, v in times[tree].items()}
        stat_cpu = statistics.median(c for _, c in floors[tree]["stat every file"])
        results.append(
            {
                "sessions": sessions,
                "calls": calls,
                "busy": busy,
                "tree": str(tree) if tree else None,
                "repeat": repeat,
                "floors_s": floor,
                "figures_s": figures,
                "best_s": {k: min(w for w, _ in v) for k, v in times[tree].items()},
                "floors_cpu_s": {k: statistics.median(c for _, c in v) for k, v in floors[tree].items()},
                "figures_cpu_s": cpu,
                "ratio_to_stat_floor": {k: v / stat for k, v in figures.items()},
                "cpu_ratio_to_stat_floor": {k: v / stat_cpu for k, v in cpu.items()},
                # judged in CPU time, as the issue measured it: the load of a shared machine changes it least
                "target": {"today": TARGET, "passed": cpu["today"] / stat_cpu <= TARGET},
            }
        )
    return results


def render(results: list[dict]) -> str:
    with open("/proc/loadavg") as fh:
        lines = [f"median of {results[0]['repeat']} runs: wall, and CPU (user + system); load {fh.read().strip()}"]
    for r in results:
        lines.append(
            f"{r['sessions']:,} sessions x {r['calls']} calls"
            + (", 15 % today" if r["busy"] else "")
            + (f"  (code: {r['tree']})" if r["tree"] else "")
        )
        for name, s in r["floors_s"].items():
            cpu = r["floors_cpu_s"][name]
            lines.append(f"  {name:28} {s * 1000:7.0f} ms {cpu * 1000:6.0f} ms CPU   (floor)")
        for name, s in r["figures_s"].items():
            ratio, cpu = r["ratio_to_stat_floor"][name], r["figures_cpu_s"][name]
            cpu_ratio = r["cpu_ratio_to_stat_floor"][name]
            met = "met" if cpu_ratio <= TARGET else "MISSED"
            mark = f"   target <= {TARGET:g}x CPU: {met}" if name == "today" else ""
            cells = f"{s * 1000:7.0f} ms {cpu * 1000:6.0f} ms CPU   {ratio:4.1f}x / {cpu_ratio:4.2f}x CPU stat floor"
            lines.append(f"  trayburn {name:19} {cells}{mark}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, nargs="+", default=[1000, 5000])
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument(
        "--tree",
        type=Path,
        action="append",
        help="benchmark the trayburn package in this folder (PYTHONPATH); repeat it to compare checkouts",
    )
    ap.add_argument("--busy", action="store_true", help="bench_cold.py's corpora: 15 %% of the sessions today")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    trees: list[Path | None] = [t.resolve() for t in args.tree] if args.tree else [None]
    results = [r for n in args.sessions for r in measure(n, args.calls, args.repeat, trees, args.busy)]
    print(json.dumps(results, indent=2) if args.json else render(results))
    return 0 if all(r["target"]["passed"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
