"""The cost of `trayburn status --watch` left running in a bar: CPU seconds (from /proc) of the watch, idle, and
the latency of a new line after a Cline write.

    python bench/bench_status_watch.py [--minutes 5] [--sessions 2000] [--calls 20] [--interval 30]

Generates (once) the bench corpus with bench/gen_corpus.py (its files settled as Cline leaves finished
sessions), reads it all into a ledger (`trayburn sessions --all`: the warm ledger a tray user has), adds one
session with calls 20 minutes ago (today has spend, the rate is live and fades: the watch's clock wakes it a
minute on), then starts `status --watch --format waybar` on it and samples its CPU time for the given minutes.
The floor, measured in the same run and the same way: a bare poller (a process that only calls
`Engine.refresh_day()` on its own copy of the ledger at the same interval). Then one call is appended to the
recent session as Cline writes it, and the time to the watch's next line is measured.
Target: under 0.1 % of a core idle; a new line within a second of a write.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))
from bench_tray_idle import corpus, cpu_seconds, with_recent_session  # noqa: E402

BARE_POLLER = """
import sys, time
from trayburn.engine import Engine
from trayburn.figures import periods
engine = Engine(sys.argv[1], sys.argv[2])
while True:
    engine.refresh_day(periods.now_date(), 0.0)
    time.sleep(float(sys.argv[3]))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5)
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--interval", type=int, default=30, help="refresh_seconds")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-status-"))
    cline = with_recent_session(corpus(args.sessions, args.calls), work)
    config = work / "settings.toml"
    config.write_text(f'cline_dir = "{cline}"\nrefresh_seconds = {args.interval}\ndaily_budget = 50.0\n')
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    base = [sys.executable, "-P", "-m", "trayburn", "--config", str(config)]
    t0 = time.perf_counter()
    subprocess.run([*base, "--state-dir", str(work / "state"), "sessions", "--all", "--json"], env=env,
                   stdout=subprocess.DEVNULL, check=True)  # fmt: skip
    shutil.copytree(work / "state", work / "bare-state")
    print(f"ledger filled in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    argv = [*base, "--state-dir", str(work / "state"), "status", "--watch", "--format", "waybar"]
    watch = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True)
    bare = subprocess.Popen([sys.executable, "-P", "-c", BARE_POLLER, str(config), str(work / "bare-state"),
                             str(args.interval)], env=env, stdout=subprocess.DEVNULL)  # fmt: skip
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=_read, args=(watch, lines), daemon=True).start()
    try:
        lines.get(timeout=120)
        time.sleep(5)  # both past their first read
        return _measure(watch, bare, lines, args.minutes, cline)
    finally:
        for proc in (watch, bare):
            proc.terminate()
            proc.wait(10)
        shutil.rmtree(work, ignore_errors=True)


def _read(proc: subprocess.Popen, lines: queue.Queue) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.put((time.monotonic(), line))


def _measure(watch: subprocess.Popen, bare: subprocess.Popen, lines: queue.Queue, minutes: float, cline: Path) -> int:
    start, cpu0, bare0 = time.monotonic(), cpu_seconds(watch.pid), cpu_seconds(bare.pid)
    time.sleep(minutes * 60)  # a bench may wait: it measures the idle watch, nothing to poll for
    wall = time.monotonic() - start
    cpu, floor = cpu_seconds(watch.pid) - cpu0, cpu_seconds(bare.pid) - bare0
    printed = lines.qsize()  # lines printed while idle: the fading rate, a minute on at most
    from test_live import append_call

    recent = max((cline / "data" / "sessions").iterdir(), key=lambda p: p.name)
    while not lines.empty():
        lines.get()
    written = time.monotonic()
    append_call(recent, 0.5)
    at, _ = lines.get(timeout=30)
    result = {
        "minutes": round(wall / 60, 2),
        "cpu_seconds": round(cpu, 3),
        "core_percent": round(100 * cpu / wall, 4),
        "bare_poller_cpu_seconds": round(floor, 3),
        "bare_poller_core_percent": round(100 * floor / wall, 4),
        "lines_while_idle": printed,
        "new_line_after_write_s": round(at - written, 3),
    }
    print(json.dumps(result, indent=2))
    ok = result["core_percent"] < 0.1 and result["new_line_after_write_s"] < 1.0
    print("target (< 0.1 % of a core idle, a new line within a second):", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
