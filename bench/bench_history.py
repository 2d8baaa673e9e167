"""How fast history is on a big ledger: whole `trayburn` processes beside a `python -c pass` floor.

    .venv/bin/python bench/bench_history.py                  # 5,000 sessions x 20 calls (bench/out/corpus)
    .venv/bin/python bench/bench_history.py --sessions 500 --repeat 3 --json

Measured, each the best of --repeat warm runs (the ledger already up to date, as after the tray's poll):
- `trayburn report --by project` and `trayburn sessions --all` over the whole corpus: each a whole process,
  start-up and the no-change refresh included; target under 0.3 s;
- `trayburn export` of every call to a file: time and peak memory (VmHWM), beside an export of one day, so
  constant memory shows as the same peak for 100 calls and for 100,000;
- in one process, what the window's month view asks of the engine (`overview`: by day, project, model
  and source from one read; and the month's sessions), without the refresh; target under 0.5 s.
Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_ledger import RACY_S, ensure_corpus  # noqa: E402

SPAN = ("2026-09-01", "2026-11-30")  # gen_corpus spreads sessions over the 60 days before 2026-12-01
ONE_DAY = ("2026-11-15", "2026-11-15")
PEAK = """
import sys
from trayburn import cli
code = cli.main(sys.argv[1:])
status = open("/proc/self/status").read()
hwm = next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM"))
print(f"VmHWM {hwm}", file=sys.stderr)
sys.exit(code)
"""
IN_PROCESS = """
import json, sys, time
from datetime import date
from trayburn.engine import Engine
from trayburn import period
engine = Engine()
engine.refresh()
month = period.month_of(date(2026, 11, 1))
best = None
for _ in range(int(sys.argv[1])):
    t = time.perf_counter()
    engine.overview(month)  # what the window's period view asks for: by day, project, model, source
    engine.sessions(month.since, month.until)
    best = min(best or 1e9, time.perf_counter() - t)
print(json.dumps({"month_view_s": best}))
"""


def best_of(repeat: int, argv: list[str], env: dict) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    return min(times)


def peak_kb(argv: list[str], env: dict) -> tuple[float, int]:
    """(seconds, peak RSS in kB) of one run of the CLI with these arguments."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", PEAK, *argv],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    seconds = time.perf_counter() - started
    return seconds, int(done.stderr.rsplit("VmHWM", 1)[1].split()[0])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=5000)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", type=Path, default=HERE / "out")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    corpus = args.out / "corpus"
    expected, reused = ensure_corpus(corpus, args.sessions, args.calls, args.seed)
    generated_at = 0.0 if reused else time.time()
    state = args.out / f"history-state-{args.sessions}x{args.calls}"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CLINE_", "TRAYBURN_"))},
        "CLINE_DIR": str(corpus),
        "TRAYBURN_STATE_DIR": str(state),
        "TRAYBURN_CONFIG": str(args.out / "no-settings.toml"),
        "PYTHONPATH": str(HERE.parent),
    }
    cli = [sys.executable, "-m", "trayburn"]
    time.sleep(max(0.0, generated_at + RACY_S - time.time()))  # a corpus just written is listed at every scan
    subprocess.run([*cli, "today"], env=env, check=True, stdout=subprocess.DEVNULL)  # ingest, once
    out_file = args.out / "export-all.csv"
    whole = ["--since", SPAN[0], "--until", SPAN[1]]

    floor = best_of(args.repeat, [sys.executable, "-c", "pass"], env)
    report = best_of(args.repeat, [*cli, "report", *whole, "--by", "project"], env)
    sessions = best_of(args.repeat, [*cli, "sessions", "--all"], env)
    today = best_of(args.repeat, [*cli, "today"], env)
    export_s, export_kb = peak_kb(["export", *whole, "--output", str(out_file)], env)
    rows = sum(1 for _ in out_file.open(encoding="utf-8", newline="")) - 1  # titles are one line here
    day_s, day_kb = peak_kb(["export", "--since", ONE_DAY[0], "--until", ONE_DAY[1], "--output", str(out_file)], env)
    month = json.loads(
        subprocess.run(
            [sys.executable, "-c", IN_PROCESS, str(args.repeat)], env=env, check=True, capture_output=True, text=True
        ).stdout
    )["month_view_s"]

    result = {
        "corpus": {"sessions": expected["sessions"], "calls": expected["calls"], "reused": reused},
        "python_pass_s": floor,
        "today_s": today,
        "report_by_project_s": report,
        "sessions_all_s": sessions,
        "export_all": {"rows": rows, "s": export_s, "peak_mb": export_kb / 1024},
        "export_one_day": {"s": day_s, "peak_mb": day_kb / 1024},
        "window_month_view_s": month,
        "date": date.today().isoformat(),
    }
    misses = [
        name
        for name, value, target in (
            ("report --by project", report, 0.3),
            ("sessions --all", sessions, 0.3),
            ("the window's month view", month, 0.5),
        )
        if value > target
    ]
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        c = result["corpus"]
        print(f"corpus  {c['sessions']} sessions, {c['calls']} calls ({'reused' if reused else 'generated'})")
        print(f"python -c pass              {floor * 1000:7.0f} ms   (floor)")
        print(f"trayburn today              {today * 1000:7.0f} ms   {today / floor:4.1f}x floor")
        print(f"trayburn report --by project{report * 1000:7.0f} ms   {report / floor:4.1f}x floor   target < 300 ms")
        print(
            f"trayburn sessions --all     {sessions * 1000:7.0f} ms   {sessions / floor:4.1f}x floor   target < 300 ms"
        )
        print(f"trayburn export (all)       {export_s * 1000:7.0f} ms   {rows} calls, peak {export_kb / 1024:.0f} MB")
        print(f"trayburn export (one day)   {day_s * 1000:7.0f} ms   peak {day_kb / 1024:.0f} MB")
        print(f"window month view, engine   {month * 1000:7.0f} ms   (in process, no refresh)   target < 500 ms")
        for name in misses:
            print(f"MISSED: {name}")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
