"""The idle tray's cost: CPU seconds (from /proc) and RSS of a real tray polling every 30 s.

    python bench/bench_tray_idle.py [--minutes 10] [--sessions 5000] [--calls 20] [--recent]

Generates (once) the bench corpus with bench/gen_corpus.py, starts the tray on it on a real X
desktop (Xvfb + D-Bus + trayer, the tests' harness; the dummy backend where those tools are
missing), lets the first ingest finish, then samples /proc/PID/stat and VmRSS every poll for
the given minutes. The floor, measured in the same run and the same way: a bare poller (a process
that only calls `Engine.refresh()` on its own copy of the ledger at the same interval, no tray, no
GTK), sampled from /proc beside the tray: what any poller at that interval must spend.
`--recent`: the hour after calls. The tray reads a copy of the corpus (hard links) with one more session whose
calls ended 20 minutes ago, so today has spend and the "Last hour" line is live for the whole run (none of its
calls leaves the hour during a 10-minute run).
Targets: under 0.1 % of a core; RSS flat (within 2 MiB) after the first half.
"""

from __future__ import annotations

import argparse
import json
import os
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
    """The bench corpus; with `today_share`, that share of its sessions runs today (a busy day), their files
    left as written (not settled an hour after their start)."""
    busy = f"-today{round(today_share * 100)}" if today_share else ""
    out = ROOT / "bench" / "out" / f"corpus-{sessions}x{calls}{busy}"
    if not (out / "corpus.json").exists():
        gen = [sys.executable, str(ROOT / "bench" / "gen_corpus.py"), "--sessions", str(sessions)]
        gen += ["--today-share", str(today_share)] if today_share else []
        subprocess.run([*gen, "--calls", str(calls), "--out", str(out)], check=True)
    if not today_share:
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


def with_recent_session(cline: Path, work: Path) -> Path:
    """A Cline folder holding the corpus (hard links: nothing copied) and one session whose calls ended about
    20 minutes ago, written as Cline leaves it (bench/gen_corpus.py's writer, each file's mtime after its last
    call)."""
    sys.path.insert(0, str(ROOT / "bench"))
    import random

    import gen_corpus

    out = work / "corpus"  # (not work/cline: beside the settings file, that is the demo's layout)
    source, target = gen_corpus.sessions_dir(cline), gen_corpus.sessions_dir(out)
    for folder in source.iterdir():
        (target / folder.name).mkdir(parents=True)
        for f in folder.iterdir():
            os.link(f, target / folder.name / f.name)
    writer = gen_corpus.SessionWriter(gen_corpus._pool(random.Random(1)), target, 20)
    writer.dated = True
    writer.session(0, random.Random("recent"), int(time.time() * 1000) - 28 * 60 * 1000)  # ~8 min of calls
    return out


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


def start_bare_poller(config: Path, state: Path, interval: int) -> subprocess.Popen:
    argv = [sys.executable, "-P", "-c", BARE_POLLER, str(config), str(state), str(interval)]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


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
    args = parser.parse_args()
    cline = corpus(args.sessions, args.calls, BUSY_SHARE if args.busy else 0.0)
    work = Path(tempfile.mkdtemp(prefix="bench-tray-"))
    if args.recent:
        cline = with_recent_session(cline, work)
    config = work / "settings.toml"
    config.write_text(f'cline_dir = "{cline}"\nrefresh_seconds = {args.interval}\n')
    desk = None if args.headless else start_desktop(work / "desktop")
    env = dict(desk.env) if desk else {**os.environ, "PYSTRAY_BACKEND": "dummy"}
    env |= {"TRAYBURN_LOG_DIR": str(work / "log"), "PYSTRAY_BACKEND": env.get("PYSTRAY_BACKEND", "")}
    argv = [sys.executable, "-P", "-m", "trayburn", "--config", str(config), "--state-dir", str(work / "state")]
    tray = subprocess.Popen(argv, env=env, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    bare = start_bare_poller(config, work / "bare-state", args.interval)
    try:
        where = ("gtk on Xvfb+trayer" if desk else "dummy (headless)") + (
            ", calls in the last hour" if args.recent else ""
        )
        return _measure(tray, bare, args.minutes, f"{where}, refresh every {args.interval} s")
    finally:
        for proc in (tray, bare):
            proc.terminate()
            proc.wait(10)
        if desk:
            desk.close()


def _measure(tray: subprocess.Popen, bare: subprocess.Popen, minutes: float, where: str) -> int:
    _wait_for_first_ingest(tray.pid)
    _wait_for_first_ingest(bare.pid)
    samples = []  # (wall s, tray cpu s, tray rss MiB)
    bare_rss = [rss_mib(bare.pid)]
    start_wall, start_cpu, start_bare = time.monotonic(), cpu_seconds(tray.pid), cpu_seconds(bare.pid)
    end = start_wall + minutes * 60
    while time.monotonic() < end and tray.poll() is None:
        samples.append((time.monotonic() - start_wall, cpu_seconds(tray.pid) - start_cpu, rss_mib(tray.pid)))
        bare_rss.append(rss_mib(bare.pid))
        time.sleep(INTERVAL_S)  # a bench may wait: it measures the idle tray, nothing to poll for
    samples.append((time.monotonic() - start_wall, cpu_seconds(tray.pid) - start_cpu, rss_mib(tray.pid)))
    wall, cpu, _ = samples[-1]
    floor = cpu_seconds(bare.pid) - start_bare
    second_half = [r for t, _, r in samples if t >= wall / 2]
    result = {
        "backend": where,
        "minutes": round(wall / 60, 1),
        "cpu_seconds": round(cpu, 3),
        "core_percent": round(100 * cpu / wall, 4),
        "bare_poller_cpu_seconds": round(floor, 3),
        "bare_poller_core_percent": round(100 * floor / wall, 4),
        "ratio_to_floor": round(cpu / floor, 2) if floor else None,
        "rss_mib_start": round(samples[0][2], 1),
        "rss_mib_half": round(second_half[0], 1),
        "rss_mib_end": round(samples[-1][2], 1),
        "rss_drift_second_half_mib": round(max(second_half) - min(second_half), 2),
        "bare_poller_rss_mib_start": round(bare_rss[0], 1),
        "bare_poller_rss_mib_end": round(bare_rss[-1], 1),
    }
    print(json.dumps(result, indent=2))
    ok = result["core_percent"] < 0.1 and result["rss_drift_second_half_mib"] <= 2
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
