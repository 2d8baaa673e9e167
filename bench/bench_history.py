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
import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
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
t0 = time.perf_counter()
from datetime import date
from trayburn.engine import Engine
try:
    from trayburn.figures import periods
except ImportError:  # trayburn 0.3.0 (--tree): before the figures/ package
    from trayburn import period as periods  # (0.3.0's name for the module)
t1 = time.perf_counter()
engine = Engine()
t2 = time.perf_counter()
engine.refresh()
t3 = time.perf_counter()
engine.book.call_cost("gpt-4o", 1000, 10, 0, 0)  # the first price: genai-prices' import and data
t4 = time.perf_counter()
span = periods.Period(date(2026, 9, 1), date(2026, 11, 30))
engine.history(span, "project")
t5 = time.perf_counter()
engine.sessions(None, None)
t6 = time.perf_counter()
month = periods.month_of(date(2026, 11, 1))
best = None
for _ in range(int(sys.argv[1])):
    t = time.perf_counter()
    engine.overview(month)  # what the window's period view asks for: by day, project, model, source
    engine.sessions(month.since, month.until)
    best = min(best or 1e9, time.perf_counter() - t)
window = None
if len(sys.argv) > 2:  # a display: the real window, built and drawn
    import tkinter as tk
    from trayburn.window.app import SummaryWindow
    times = []
    for _ in range(3):
        t = time.perf_counter()
        root = tk.Tk(screenName=sys.argv[2], className="trayburn")
        win = SummaryWindow(root, engine, day=date(2026, 11, 15), kind="month")
        win.render()
        root.update()
        times.append(time.perf_counter() - t)
        root.destroy()
    window = min(times)
print(json.dumps({"month_view_s": best, "window_month_s": window, "parts": {
    "import_s": t1 - t0, "open_s": t2 - t1, "refresh_s": t3 - t2, "first_price_s": t4 - t3,
    "report_by_project_s": t5 - t4, "sessions_all_s": t6 - t5}}))
"""


@contextlib.contextmanager
def xvfb() -> Iterator[str | None]:
    """A private X display for the window's figure (None when Xvfb is not installed)."""
    if not shutil.which("Xvfb"):
        yield None
        return
    read_end, write_end = os.pipe()
    proc = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_end), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
        pass_fds=(write_end,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_end)
    try:
        number = b""
        while not number.endswith(b"\n"):
            chunk = os.read(read_end, 16)
            if not chunk:
                raise RuntimeError("Xvfb did not start")
            number += chunk
        yield f":{int(number)}"
    finally:
        os.close(read_end)
        proc.terminate()
        proc.wait(timeout=10)


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
    with xvfb() as screen:
        inside = json.loads(
            subprocess.run(
                [sys.executable, "-c", IN_PROCESS, str(args.repeat), *([screen] if screen else [])],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        )
    month, window, parts = inside["month_view_s"], inside["window_month_s"], inside["parts"]

    result = {
        "corpus": {"sessions": expected["sessions"], "calls": expected["calls"], "reused": reused},
        "python_pass_s": floor,
        "today_s": today,
        "report_by_project_s": report,
        "sessions_all_s": sessions,
        "export_all": {"rows": rows, "s": export_s, "peak_mb": export_kb / 1024},
        "export_one_day": {"s": day_s, "peak_mb": day_kb / 1024},
        "window_month_view_s": month,
        "window_month_tk_s": window,
        "in_process_parts_s": parts,
        "date": date.today().isoformat(),
    }
    misses = [
        name
        for name, value, target in (
            ("report --by project", report, 0.3),
            ("sessions --all", sessions, 0.3),
            ("the window's month view", month, 0.5),
            ("the window's month view, drawn", window, 0.5),
        )
        if value is not None and value > target
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
        if window is not None:
            print(f"window month view, drawn    {window * 1000:7.0f} ms   (Tk on Xvfb, no refresh)   target < 500 ms")
        print("in one process: " + ", ".join(f"{k.removesuffix('_s')} {v * 1000:.0f} ms" for k, v in parts.items()))
        for name in misses:
            print(f"MISSED: {name}")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
