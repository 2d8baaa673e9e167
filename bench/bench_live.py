"""Live latency: from a Cline call written to a running session's messages file to the tray's icon and tooltip,
where the time goes (`--phases`), and the idle tray's CPU beside it, at 5,000 sessions.

    python bench/bench_live.py [--writes 30] [--sessions 5000] [--calls 20] [--idle 300] [--interval 30]
    python bench/bench_live.py --busy --phases --idle 0                     # a busy day, the write's phases
    python bench/bench_live.py --busy --idle 0 --tree /work/main --tree .   # two checkouts, their runs in turn

The tray runs in this process (the dummy backend: it keeps what it would draw; the drawing itself is Pillow, the
same on every backend) on a copy of the bench corpus made for the run (the corpus itself is never written),
plus one running session of today, polling every 300 s so that only the inotify wake (trayburn/watch.py's Waker)
can explain a figure shown in under a second. Each write is the CLI's own in-place rewrite with one more call;
the latency is until the tray applied a view whose tooltip has the new total. Between writes it waits a random
0.2–2 s (a person's calls come at any moment relative to the waker). Then it polls at --interval (the default
30 s) and stays idle for --idle seconds, and reports the process's CPU over that time (utime + stime from /proc,
every thread: the poller's polls and the waker's thread). bench/bench_tray_idle.py measures the idle tray against
a bare poller's floor.

`--busy`: the busy-day corpus (bench_cold's `cold-<n>`: 15 % of the sessions active today, made once per day) and
BUSY_RECENT sessions with calls spread over the last hour, so the pace and "Last hour" lines are live.
`--phases`: for each write, the time from the write to the waker's wake (inotify and its debounce), to the tick's
start, and each step of that tick (refresh, health, glance, view, apply), with the tick's own CPU; medians.
`--tree PATH` (repeatable): run the tray of that checkout (`PYTHONPATH=PATH`) in a process of its own, `--rounds`
times each, the trees in turn, and print their figures side by side.
Targets: latency median under 0.3 s, max under 2 s; idle under 0.1 % of a core.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))
TICK = os.sysconf("SC_CLK_TCK")
PHASES = ("wake", "to_tick", "refresh", "health", "glance", "view", "apply", "tick_cpu")


def cpu_seconds() -> float:
    fields = Path(f"/proc/{os.getpid()}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=30)
    parser.add_argument("--sessions", type=int, default=5000)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--idle", type=float, default=300, help="seconds of idle tray measured after the writes")
    parser.add_argument("--interval", type=int, default=30, help="the poll interval while idle (the default)")
    parser.add_argument("--busy", action="store_true", help="15 %% of the sessions active today, a live last hour")
    parser.add_argument("--phases", action="store_true", help="where each write's time goes")
    parser.add_argument("--tree", type=Path, action="append", help="run this checkout's tray (repeatable)")
    parser.add_argument("--rounds", type=int, default=1, help="with --tree: runs of each tree, in turn")
    parser.add_argument("--json", action="store_true", help="print only the result as JSON")
    args = parser.parse_args()
    if args.tree:
        return compare(args)
    result = run(args)
    print(json.dumps(result, indent=None if args.json else 2))
    if args.json:
        return 0
    ok = result["latency_median_s"] < 0.3 and result["latency_max_s"] < 2
    ok = ok and (not args.idle or result["idle_core_percent"] < 0.1)
    print("targets (median < 0.3 s, max < 2 s, idle < 0.1 % of a core):", "met" if ok else "NOT met")
    return 0 if ok else 1


def compare(args: argparse.Namespace) -> int:
    """Each tree's tray in a process of its own (its code first on the path), the trees in turn, `rounds` times."""
    argv = [a for a in sys.argv[1:] if a not in {"--json"}]
    own: list[str] = []
    skip = False
    for a in argv:  # this script's arguments without --tree/--rounds (given again per child)
        if skip:
            skip = False
        elif a in ("--tree", "--rounds"):
            skip = True
        elif not a.startswith(("--tree=", "--rounds=")):
            own.append(a)
    results: dict[str, list[dict]] = {str(t): [] for t in args.tree}
    for _ in range(args.rounds):
        for tree in args.tree:
            env = {**os.environ, "PYTHONPATH": str(tree.resolve())}
            done = subprocess.run(
                [sys.executable, "-P", __file__, *own, "--json"], env=env, capture_output=True, text=True
            )
            if done.returncode != 0:
                raise SystemExit(f"{tree}: {done.stderr[-2000:]}")
            results[str(tree)].append(json.loads(done.stdout.strip().splitlines()[-1]))
    for tree, runs in results.items():
        medians = [r["latency_median_s"] for r in runs]
        print(f"{tree}: write -> icon median {statistics.median(medians):.3f} s (runs: {medians})")
        for r in runs:
            print("   ", json.dumps(r))
    return 0


def run(args: argparse.Namespace) -> dict:
    from helpers.corpus import assistant, make_session, user
    from helpers.live import append_call, now_ms, started_now

    import trayburn.tray.app
    from trayburn.engine import Engine
    from trayburn.tray import host
    from trayburn.tray.app import TrayApp

    work = Path(tempfile.mkdtemp(prefix="bench-live-"))
    cline = mirror(args.sessions, args.calls, args.busy, work)
    running_root = cline / "data" / "sessions"
    sid = f"{int(time.time() * 1000)}_bench"
    running = make_session(
        running_root,
        sid,
        started_now(),
        [user("u0", now_ms()), assistant("msg_b0000", now_ms(), 10, 1, cost=0.01)],
        status="running",
    )
    config = work / "settings.toml"
    config.write_text(f'cline_dir = "{cline}"\nrefresh_seconds = 300\n')
    app = TrayApp(Engine(config, work / "state"), host.load_pystray("dummy"), host.capabilities("dummy"))
    cond, shown = threading.Condition(), [""]
    ticks: list[dict[str, float]] = []  # the phases of each tick, in order
    clock = time.perf_counter
    woke = [0.0]

    class Wake(threading.Event):
        def set(self) -> None:
            woke[0] = clock()
            super().set()

    app._wake = Wake()
    engine = app.engine

    def timed(name: str, fn):
        def wrapper(*a, **k):
            t0 = clock()
            try:
                return fn(*a, **k)
            finally:
                if ticks:
                    ticks[-1][name] = ticks[-1].get(name, 0.0) + clock() - t0

        return wrapper

    engine.refresh = timed("refresh", engine.refresh)  # type: ignore[method-assign]
    engine.health = timed("health", engine.health)  # type: ignore[method-assign]
    engine.glance = timed("glance", engine.glance)  # type: ignore[method-assign]
    trayburn.tray.app.build_view = timed("view", trayburn.tray.app.build_view)  # type: ignore[attr-defined]
    tick = app.tick

    def traced_tick() -> bool:
        ticks.append({"start": clock(), "woke": woke[0]})
        cpu = time.thread_time()
        try:
            return tick()
        finally:
            ticks[-1]["tick_cpu"] = time.thread_time() - cpu

    app.tick = traced_tick  # type: ignore[method-assign]
    applied = app._apply

    def apply(view):  # the bench's stopwatch: when the tray applied a view, and which
        t0 = clock()
        applied(view)
        if ticks:
            ticks[-1]["apply"] = clock() - t0
        with cond:
            shown[0] = view.tooltip
            cond.notify_all()

    app._apply = apply  # type: ignore[method-assign]
    thread = threading.Thread(target=app.run, daemon=True)
    started = time.monotonic()
    thread.start()
    phases: dict[str, list[float]] = {p: [] for p in PHASES}
    try:
        with cond:
            if not cond.wait_for(lambda: app.engine.progress is None and app.view is not None, 1800):
                raise SystemExit("the first ingest did not finish")
        ingest_s = time.monotonic() - started
        latencies = []
        rng = random.Random(7)
        for _n in range(args.writes):
            time.sleep(rng.uniform(0.2, 2.0))  # a bench may wait: the moment of the next call
            before = shown[0]
            t0 = clock()
            append_call(running, 0.01)
            with cond:
                ok = cond.wait_for(lambda before=before: shown[0] != before, 10)
            latencies.append(clock() - t0 if ok else float("inf"))
            if ok and ticks:
                _phases(ticks[-1], t0, phases)
        config.write_text(f'cline_dir = "{cline}"\nrefresh_seconds = {args.interval}\n')  # idle: the real interval
        idle_cpu = idle_wall = 0.0
        if args.idle:
            app.do_refresh()
            time.sleep(3)  # let the last write's tick and the settings' reload end
            cpu0, wall0 = cpu_seconds(), time.monotonic()
            time.sleep(args.idle)  # the idle tray: nothing to do but wait
            idle_cpu, idle_wall = cpu_seconds() - cpu0, time.monotonic() - wall0
        figures = app.glance
    finally:
        app.do_quit()
        thread.join(10)
        app.engine.close()
        shutil.rmtree(work, ignore_errors=True)  # (the corpus's copy: half a gigabyte at 5,000 sessions)
    lat = sorted(latencies)
    result = {
        "code": str(Path(trayburn.__file__).parent.parent),
        "sessions": args.sessions,
        "busy": args.busy,
        "calls_today": figures.day.report.calls if figures else None,
        "calls_last_hour": figures.last_hour.calls if figures else None,
        "first_ingest_s": round(ingest_s, 1),
        "writes": len(lat),
        "latency_median_s": round(statistics.median(lat), 3),
        "latency_p95_s": round(lat[max(0, int(len(lat) * 0.95) - 1)], 3),
        "latency_max_s": round(lat[-1], 3),
        "latency_min_s": round(lat[0], 3),
    }
    if args.phases:
        result["phases_median_s"] = {p: round(statistics.median(v), 4) for p, v in phases.items() if v}
    if args.idle:
        result |= {
            "idle_seconds": round(idle_wall, 1),
            "idle_interval_s": args.interval,
            "idle_cpu_seconds": round(idle_cpu, 3),
            "idle_core_percent": round(100 * idle_cpu / idle_wall, 4),
        }
    return result


def _phases(tick: dict[str, float], written: float, out: dict[str, list[float]]) -> None:
    """The phases of the tick that showed a write (made at `written`, perf_counter)."""
    woke = tick.get("woke", 0.0)
    if woke >= written:
        out["wake"].append(woke - written)
        out["to_tick"].append(tick["start"] - woke)
    for name in ("refresh", "health", "glance", "view", "apply", "tick_cpu"):
        if name in tick:
            out[name].append(tick[name])


def mirror(sessions: int, calls: int, busy: bool, work: Path) -> Path:
    """A Cline folder in `work` holding a copy of the bench corpus, with BUSY_RECENT sessions of the last hour
    when `busy`."""
    from bench_tray_idle import BUSY_RECENT, BUSY_SHARE, copy_corpus, corpus, with_recent_sessions

    source = corpus(sessions, calls, BUSY_SHARE if busy else 0.0)
    if busy:
        return with_recent_sessions(source, work, BUSY_RECENT)
    return copy_corpus(source, work)


if __name__ == "__main__":
    sys.exit(main())
