"""The idle tray's cost: CPU seconds (from /proc) and RSS of a real tray polling every 30 s.

    python bench/bench_tray_idle.py [--minutes 10] [--sessions 5000] [--calls 20] [--recent] [--busy]
    python bench/bench_tray_idle.py --busy --minutes 5 --tree /work/main --tree .   # two checkouts side by side

Generates (once) the bench corpus with bench/gen_corpus.py, starts the tray on it on a real X
desktop (Xvfb + D-Bus + trayer, the tests' harness; the dummy backend where those tools are
missing), lets the first ingest finish, then samples /proc/PID/stat and VmRSS every poll for
the given minutes. The floor, measured in the same run and the same way: a bare poller (a process
that only calls `Engine.refresh()` on its own copy of the ledger at the same interval, no tray, no
GTK), sampled from /proc beside the tray: what any poller at that interval must spend.
The trays and pollers read a copy of the corpus (`copy_corpus`), made for the run.
`--recent`: the hour after calls. The copy has one more session whose
calls ended 20 minutes ago, so today has spend and the "Last hour" line is live for the whole run (none of its
calls leaves the hour during a 10-minute run).
`--busy`: bench_cold's busy-day corpus (15 % of the sessions active today) and BUSY_RECENT sessions started one
after another over the last hour (about 200 calls in it, leaving it as the run goes).
`--tree PATH` (repeatable; default: this checkout): that checkout's tray and its own bare poller (`PYTHONPATH=PATH`),
all of them side by side in one run, each on a state folder of its own.
Targets: under 0.1 % of a core; RSS flat (within 2 MiB) after the first half.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
TICK = os.sysconf("SC_CLK_TCK")
INTERVAL_S = 30


BUSY_SHARE = 0.15  # `--busy`: the share of the sessions active today (5,000 sessions: about 15,000 calls today)


def corpus(sessions: int, calls: int, today_share: float = 0.0) -> Path:
    """The bench corpus; with `today_share`, the busy-day corpus bench_cold.py makes (`cold-<n>`: that share of its
    sessions runs today, their files left as written, not settled an hour after their start; made again on
    another day)."""
    if today_share:
        sys.path.insert(0, str(ROOT / "bench"))
        import bench_cold

        assert today_share == bench_cold.TODAY_SHARE, "bench_cold makes busy corpora of its own share"
        return bench_cold.ensure_corpus(sessions, calls)[0].parent.parent
    out = ROOT / "bench" / "out" / f"corpus-{sessions}x{calls}"
    if not (out / "corpus.json").exists():
        gen = [sys.executable, str(ROOT / "bench" / "gen_corpus.py"), "--sessions", str(sessions)]
        subprocess.run([*gen, "--calls", str(calls), "--out", str(out)], check=True)
    settle(out)
    return out


def settle(out: Path) -> None:
    """Each session's files last written an hour after it started (its id's time), as Cline leaves a finished
    session: a corpus made today would otherwise be "today's files" to the tray and its floor alike (every one
    of them checked at each poll as written since midnight), which is not what an idle tray holds."""
    sessions = out / "data" / "sessions"
    for folder in sessions.iterdir():
        at_ns = (int(folder.name.split("_", 1)[0]) + 3600_000) * 10**6
        for f in folder.iterdir():
            if f.stat().st_mtime_ns != at_ns:
                os.utime(f, ns=(at_ns, at_ns))


def copy_corpus(cline: Path, work: Path) -> Path:
    """A Cline folder in `work` holding a copy of the corpus, each file's times kept (the corpus itself is never
    written; not hard links: a file with another link gets no inotify watch, so every poll would stat it)."""
    sys.path.insert(0, str(ROOT / "bench"))
    import gen_corpus

    out = work / "corpus"  # (not work/cline: beside the settings file, that is the demo's layout)
    shutil.copytree(gen_corpus.sessions_dir(cline), gen_corpus.sessions_dir(out), copy_function=shutil.copy2)
    return out


def with_recent_sessions(cline: Path, work: Path, count: int = 1) -> Path:
    """`copy_corpus` and `count` sessions written as Cline leaves them (bench/gen_corpus.py's writer, each file's
    mtime after its last call): one, whose calls (about 8 minutes of them) ended about 20 minutes ago; more, started
    one after another over the last hour (a busy hour: BUSY_RECENT of them, about 200 calls)."""
    import random

    import gen_corpus

    out = copy_corpus(cline, work)
    writer = gen_corpus.SessionWriter(gen_corpus._pool(random.Random(1)), gen_corpus.sessions_dir(out), 20)
    writer.dated = True
    now = int(time.time() * 1000)
    for i in range(count):
        ago = 28 if count == 1 else 58 - i * 40 // count  # minutes before now that it started
        writer.session(i, random.Random(f"recent{i or ''}"), now - ago * 60 * 1000)
    return out


BUSY_RECENT = 10  # `--busy`: sessions with calls in the last hour


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


BARE_POLLER = """
import sys, time
from trayburn.engine import Engine
engine = Engine(sys.argv[1], sys.argv[2])
while True:
    engine.refresh()
    time.sleep(float(sys.argv[3]))
"""


def start_bare_poller(config: Path, state: Path, interval: int, env: dict[str, str]) -> subprocess.Popen:
    argv = [sys.executable, "-P", "-c", BARE_POLLER, str(config), str(state), str(interval)]
    return subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def start_desktop(logs: Path):
    from helpers import desktop as harness

    if harness.missing_tools():
        return None
    return harness.start_desktop(logs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--sessions", type=int, default=5000)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--interval", type=int, default=INTERVAL_S, help="the tray's refresh_seconds")
    parser.add_argument("--headless", action="store_true", help="the dummy backend: no desktop, no GTK")
    parser.add_argument("--recent", action="store_true", help="the hour after calls: one session ended 20 min ago")
    parser.add_argument("--busy", action="store_true", help=f"{BUSY_SHARE * 100:.0f} %% of the sessions active today")
    parser.add_argument("--tree", type=Path, action="append", help="this checkout's tray and poller (repeatable)")
    args = parser.parse_args()
    trees = [t.resolve() for t in args.tree] if args.tree else [ROOT]
    cline = corpus(args.sessions, args.calls, BUSY_SHARE if args.busy else 0.0)
    work = Path(tempfile.mkdtemp(prefix="bench-tray-"))
    if args.recent or args.busy:
        cline = with_recent_sessions(cline, work, BUSY_RECENT if args.busy else 1)
    else:
        cline = copy_corpus(cline, work)
    config = work / "settings.toml"
    config.write_text(f'cline_dir = "{cline}"\nrefresh_seconds = {args.interval}\n')
    desk = None if args.headless else start_desktop(work / "desktop")
    env = dict(desk.env) if desk else {**os.environ, "PYSTRAY_BACKEND": "dummy"}
    env |= {"TRAYBURN_LOG_DIR": str(work / "log"), "PYSTRAY_BACKEND": env.get("PYSTRAY_BACKEND", "")}
    procs: list[tuple[Path, subprocess.Popen, subprocess.Popen]] = []
    try:
        for i, tree in enumerate(trees):  # each tree's tray and bare poller on states of their own
            mine = {**env, "PYTHONPATH": str(tree)}
            argv = [sys.executable, "-P", "-m", "trayburn", "--config", str(config), "--state-dir", str(work / f"s{i}")]
            tray = subprocess.Popen(argv, env=mine, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            procs.append((tree, tray, start_bare_poller(config, work / f"bare-s{i}", args.interval, mine)))
        where = ("gtk on Xvfb+trayer" if desk else "dummy (headless)") + (
            ", a busy day" if args.busy else ", calls in the last hour" if args.recent else ""
        )
        return _measure(procs, args.minutes, f"{where}, refresh every {args.interval} s")
    finally:
        for _, tray, bare in procs:
            for proc in (tray, bare):
                proc.terminate()
                proc.wait(10)
        if desk:
            desk.close()
        shutil.rmtree(work, ignore_errors=True)  # (the corpus's copy: half a gigabyte at 5,000 sessions)


def _measure(procs: list[tuple[Path, subprocess.Popen, subprocess.Popen]], minutes: float, where: str) -> int:
    for _, tray, bare in procs:
        _wait_for_first_ingest(tray.pid)
        _wait_for_first_ingest(bare.pid)
    # a bench may wait: two polls more, so that each process's second and third scans (every folder listed once more
    # and watched: a quarter of a second at 5,000 sessions, done once) fall before the measure, not in one of them
    time.sleep(2 * INTERVAL_S + 5)
    pids = [p.pid for _, tray, bare in procs for p in (tray, bare)]
    samples: list[tuple[float, dict[int, float], dict[int, float]]] = []  # (wall s, cpu s by pid, rss MiB by pid)
    start_wall, start_cpu = time.monotonic(), {pid: cpu_seconds(pid) for pid in pids}

    def sample() -> None:
        cpu = {pid: cpu_seconds(pid) - start_cpu[pid] for pid in pids}
        samples.append((time.monotonic() - start_wall, cpu, {pid: rss_mib(pid) for pid in pids}))

    end = start_wall + minutes * 60
    while time.monotonic() < end and all(tray.poll() is None for _, tray, _ in procs):
        sample()
        time.sleep(INTERVAL_S)  # a bench may wait: it measures the idle tray, nothing to poll for
    sample()
    wall = samples[-1][0]
    ok = True
    for tree, tray, bare in procs:
        cpu, floor = samples[-1][1][tray.pid], samples[-1][1][bare.pid]
        second_half = [r[tray.pid] for t, _, r in samples if t >= wall / 2]
        result = {
            "code": str(tree),
            "backend": where,
            "minutes": round(wall / 60, 1),
            "cpu_seconds": round(cpu, 3),
            "core_percent": round(100 * cpu / wall, 4),
            "bare_poller_cpu_seconds": round(floor, 3),
            "bare_poller_core_percent": round(100 * floor / wall, 4),
            "ratio_to_floor": round(cpu / floor, 2) if floor else None,
            "rss_mib_start": round(samples[0][2][tray.pid], 1),
            "rss_mib_half": round(second_half[0], 1),
            "rss_mib_end": round(samples[-1][2][tray.pid], 1),
            "rss_drift_second_half_mib": round(max(second_half) - min(second_half), 2),
            "bare_poller_rss_mib_start": round(samples[0][2][bare.pid], 1),
            "bare_poller_rss_mib_end": round(samples[-1][2][bare.pid], 1),
        }
        print(json.dumps(result, indent=2))
        ok = ok and result["core_percent"] < 0.1 and result["rss_drift_second_half_mib"] <= 2
    print("target (< 0.1 % of a core, RSS within 2 MiB after the first half):", "met" if ok else "NOT met")
    return 0 if ok else 1


def _wait_for_first_ingest(pid: int, quiet_s: float = 10, timeout_s: float = 600) -> None:
    """Until the tray's CPU time stops growing for `quiet_s` (the first ingest is done)."""
    deadline = time.monotonic() + timeout_s
    last, since = cpu_seconds(pid), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(1)
        now = cpu_seconds(pid)
        if now - last > 0.05:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return
    raise SystemExit("the tray kept busy: the first ingest did not finish")


if __name__ == "__main__":
    sys.exit(main())
