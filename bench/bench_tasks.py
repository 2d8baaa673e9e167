"""Editor task folders beside the CLI's sessions: a cold ingest and a no-change refresh, next to floors.

    .venv/bin/python bench/bench_tasks.py                     # 2,000 Cline tasks x 10 requests + 5,000 sessions
    .venv/bin/python bench/bench_tasks.py --tasks 500 --sessions 1000 --repeat 5 --json

The sessions come from gen_corpus.py (bench/out/tasks-cli-<n>, reused); the tasks are written here as the Cline
extension 3.40+ writes them (one-line ui_messages.json whose api_req_started texts embed the prompt, a
pretty task_metadata.json, state/taskHistory.json) under a HOME's `.config/Code/User/globalStorage`. Figures,
in process, on a warm page cache:
- cold ingest: `Engine.refresh()` on an empty ledger (both sources), beside the read floor (open and read every
  file of both trees once);
- no-change refresh: the best of `--repeat` `Engine.refresh()` with nothing changed, beside the stat floor
  (scandir + stat of every file in both trees). Target: within 3x the stat floor (a task source stats two
  files per task and lists each task root; the CLI source keeps its own digest).
The ledger's counted task calls are checked against what the generator wrote. Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import gen_corpus  # noqa: E402
from bench_ledger import ensure_corpus  # noqa: E402

TARGET = 3.0
T0 = 1_790_000_000_000


def write_tasks(gs: Path, tasks: int, requests: int, seed: int = 1) -> int:
    """`tasks` Cline task folders of `requests` api_req_started each; returns the calls a reader must count."""
    rng = random.Random(seed)
    history, calls = [], 0
    for n in range(tasks):
        tid = str(T0 + n * 60_000)
        folder = gs / "tasks" / tid
        folder.mkdir(parents=True, exist_ok=True)
        t = int(tid)
        model = {"modelId": "claude-sonnet-4-5", "providerId": "anthropic", "mode": "act"}
        ui = [{"ts": t, "type": "say", "say": "task", "text": f"task {n}", "modelInfo": model}]
        for _ in range(requests):
            t += rng.randint(500, 20_000)
            prompt = f"# Current Working Directory (/work/p{n % 40}) Files\n" + "x" * rng.randint(500, 4000)
            usage = {"request": prompt, "tokensIn": rng.randint(1, 50), "tokensOut": rng.randint(10, 900),
                     "cacheWrites": rng.randint(0, 3000), "cacheReads": rng.randint(0, 60000),
                     "cost": round(rng.random() / 50, 6)}  # fmt: skip
            ui.append({"ts": t, "type": "say", "say": "api_req_started", "text": json.dumps(usage), "modelInfo": model})
            ui.append({"ts": t + 1, "type": "say", "say": "text", "text": "ok " * 40, "modelInfo": model})
            calls += 1
        (folder / "ui_messages.json").write_text(json.dumps(ui, separators=(",", ":")))
        meta = {"files_in_context": [], "model_usage": [{"ts": int(tid), "model_id": "claude-sonnet-4-5",
                "model_provider_id": "anthropic", "mode": "act"}],
                "environment_history": [{"ts": int(tid), "host_name": "Visual Studio Code"}]}  # fmt: skip
        (folder / "task_metadata.json").write_text(json.dumps(meta, indent=2))
        history.append({"id": tid, "ts": t, "task": f"task {n}", "tokensIn": 0, "tokensOut": 0, "totalCost": 0})
    (gs / "state").mkdir(parents=True, exist_ok=True)
    (gs / "state" / "taskHistory.json").write_text(json.dumps(history, separators=(",", ":")))
    return calls


def files_under(*roots: Path) -> list[str]:
    out = []
    for root in roots:
        for folder, _, names in os.walk(root):
            out += [os.path.join(folder, n) for n in names]
    return out


def stat_floor(roots: list[Path]) -> float:
    def walk(path: str) -> int:
        n = 0
        with os.scandir(path) as it:
            for entry in it:
                if entry.is_dir(follow_symlinks=False):
                    n += walk(entry.path)
                else:
                    os.stat(entry.path)
                    n += 1
        return n

    start = time.perf_counter()
    for r in roots:
        walk(str(r))
    return time.perf_counter() - start


def read_floor(files: list[str]) -> float:
    start = time.perf_counter()
    for f in files:
        with open(f, "rb") as fh:
            fh.read()
    return time.perf_counter() - start


def measure(tasks: int, requests: int, sessions: int, repeat: int) -> dict:
    from trayburn.engine import Engine

    corpus = HERE / "out" / f"tasks-cli-{sessions}"
    ensure_corpus(corpus, sessions, 20, seed=1)
    work = HERE / "out" / f"tasks-{tasks}x{requests}"
    home = work / "home"
    gs = home / ".config" / "Code" / "User" / "globalStorage" / "saoudrizwan.claude-dev"
    if not (gs / "state" / "taskHistory.json").exists():
        shutil.rmtree(work, ignore_errors=True)
        print(f"writing {tasks} tasks x {requests} requests into {gs} ...", file=sys.stderr)
        write_tasks(gs, tasks, requests)
    wanted = tasks * requests
    env = {"HOME": str(home), "CLINE_DIR": str(corpus), "TRAYBURN_CONFIG": str(work / "settings.toml")}
    roots = [gen_corpus.sessions_dir(corpus), gs / "tasks"]
    files = files_under(*roots)
    old = time.time() - 3600  # files older than the racy-timestamp window (else every refresh reads them again)
    for f in files:
        if os.stat(f).st_mtime > old:
            os.utime(f, (old, old))
    read_floor(files)  # warm the page cache
    floor_read = min(read_floor(files) for _ in range(max(1, repeat // 2)))
    floor_stat = min(stat_floor(roots) for _ in range(repeat))
    state = work / "state"
    shutil.rmtree(state, ignore_errors=True)
    engine = Engine(state_dir=state, env=env)
    start = time.perf_counter()
    engine.refresh()
    cold = time.perf_counter() - start
    got = engine.ledger.query("SELECT count(*) FROM calls WHERE counted=1 AND session_id LIKE 'cline:%'")[0][0]
    engine.refresh()  # (the racy-timestamp rule reads the newest files once more)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        stats = engine.refresh()
        times.append(time.perf_counter() - start)
        assert stats.files_read == 0, stats
    engine.close()
    warm = min(times)
    from trayburn.ledger import Ledger
    from trayburn.sources.editor_tasks.places import BY_NAME, Place
    from trayburn.sources.editor_tasks.source import TaskSource

    alone = Ledger(work / "alone" / "ledger.db")
    start = time.perf_counter()
    alone.refresh(TaskSource(BY_NAME["cline"], [Place("cline", gs, "bench")]))
    tasks_cold = time.perf_counter() - start
    alone.close()
    shutil.rmtree(work / "alone")
    tasks_floor = min(read_floor([f for f in files if f.startswith(str(gs))]) for _ in range(3))
    return {
        "tasks": tasks,
        "requests": requests,
        "sessions": sessions,
        "files": len(files),
        "task_calls_counted": got,
        "task_calls_written": wanted,
        "cold_ingest_s": round(cold, 3),
        "read_floor_s": round(floor_read, 3),
        "cold_ratio": round(cold / floor_read, 2),
        "tasks_alone_cold_s": round(tasks_cold, 3),
        "tasks_read_floor_s": round(tasks_floor, 3),
        "no_change_refresh_s": round(warm, 4),
        "stat_floor_s": round(floor_stat, 4),
        "no_change_ratio": round(warm / floor_stat, 2),
        "passed": got == wanted and warm / floor_stat <= TARGET,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", type=int, default=2000)
    ap.add_argument("--requests", type=int, default=10)
    ap.add_argument("--sessions", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    r = measure(args.tasks, args.requests, args.sessions, args.repeat)
    if args.json:
        print(json.dumps(r, indent=2))
    else:
        met = "met" if r["no_change_ratio"] <= TARGET else "MISSED"
        print(
            f"{r['tasks']:,} tasks x {r['requests']} requests beside {r['sessions']:,} sessions, {r['files']:,} files"
        )
        cold, floor = r["cold_ingest_s"], r["read_floor_s"]
        print(f"  cold ingest        {cold:8.3f} s   read floor {floor:.3f} s ({r['cold_ratio']}x)")
        warm, stat = r["no_change_refresh_s"] * 1000, r["stat_floor_s"] * 1000
        print(f"  no-change refresh  {warm:8.1f} ms  stat floor {stat:.1f} ms ({r['no_change_ratio']}x: {met})")
        print(f"  tasks alone, cold  {r['tasks_alone_cold_s']:8.3f} s   read floor {r['tasks_read_floor_s']:.3f} s")
        print(f"  task calls counted {r['task_calls_counted']:,} of {r['task_calls_written']:,} written")
    return 0 if r["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
