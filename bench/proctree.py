"""Run a command and measure its whole process tree: wall time, CPU and peak RSS.

    from proctree import run_tree
    got = run_tree([sys.executable, "-c", "..."], env=env, cwd=cwd)
    got.peak_tree_kib, got.cpu_s, got.wall_s, got.stdout

Peak RSS of the tree: the largest sum of `VmRSS` over the process and every descendant (found through
`/proc/<pid>/task/<tid>/children`), sampled every `interval` seconds while it runs. Pages a forked child
shares with its parent count in both, as `ps` and `top` show them. A peak shorter than the interval can be
missed, so this is a lower bound of the true peak of the sum; the processes' own peaks (VmHWM, read by the
measured program itself; `ru_maxrss` of its waited-for children) bound it from above. CPU: user + system
time of the process and of every descendant it waited for (the rusage of `os.wait4`). Run delay: how long
the tree's processes waited for a CPU while ready to run (`/proc/<pid>/schedstat`, as last sampled): on a
shared machine, what the load added to the wall time.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO


@dataclass
class TreeRun:
    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    cpu_s: float  # user + system: the process and its waited-for descendants
    peak_tree_kib: int  # the largest sampled sum of VmRSS over the tree
    peak_processes: int  # how many processes the tree had at that sample
    samples: int
    run_delay_s: float  # time the tree's processes spent ready to run but waiting for a CPU (schedstat)


def status_kib(pid: int | str, field: bytes) -> int:
    """A `kB` field of /proc/<pid>/status (b"VmRSS:", b"VmHWM:"); 0 if the process is gone."""
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(field):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def tree(pid: int) -> list[int]:
    """The process and all its descendants (children of every thread)."""
    pids, todo = [], [pid]
    while todo:
        p = todo.pop()
        pids.append(p)
        try:
            tids = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{p}/task/{tid}/children", "rb") as fh:
                    todo.extend(int(c) for c in fh.read().split())
            except (OSError, ValueError):
                pass
    return pids


def run_delay_ns(pid: int) -> int:
    """Nanoseconds the process (all its threads) waited on a run queue so far (/proc/<pid>/schedstat)."""
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as fh:
            return int(fh.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _drain(stream: IO[bytes], into: list[bytes]) -> None:
    into.append(stream.read())


def run_tree(
    argv: list[str], env: dict[str, str] | None = None, cwd: str | Path | None = None, interval: float = 0.005
) -> TreeRun:
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out: list[bytes] = []
    err: list[bytes] = []
    readers = [
        threading.Thread(target=_drain, args=(proc.stdout, out), daemon=True),
        threading.Thread(target=_drain, args=(proc.stderr, err), daemon=True),
    ]  # (drained by threads: a chatty child never blocks on a full pipe)
    for t in readers:
        t.start()
    peak = peak_n = samples = 0
    delays: dict[int, int] = {}  # pid -> its run delay at its last sample
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        pids = tree(proc.pid)
        total = sum(status_kib(p, b"VmRSS:") for p in pids)
        for p in pids:
            delays[p] = max(delays.get(p, 0), run_delay_ns(p))
        samples += 1
        if total > peak:
            peak, peak_n = total, len(pids)
        time.sleep(interval)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    for t in readers:
        t.join()
    return TreeRun(
        proc.returncode,
        b"".join(out).decode(errors="replace"),
        b"".join(err).decode(errors="replace"),
        wall,
        usage.ru_utime + usage.ru_stime,
        peak,
        peak_n,
        samples,
        sum(delays.values()) / 1e9,
    )
