"""Benchmark sharing between machines: 3 machines x 5,000 sessions merged through one sync folder.

    .venv/bin/python bench/bench_sync.py                   # 3 x 5,000 sessions x 20 calls (~1.5 GB of corpora)
    .venv/bin/python bench/bench_sync.py --sessions 500 --json

Each machine has its own corpus (`gen_corpus.py`, seeds 1..N: distinct calls), sessions folder, state folder
and ledger; all share one sync folder. Measured, each the best of --repeat runs beside a floor from the same run:
- the machine file: its size per 1,000 calls and the time to write it (query + encode + gzip + atomic write);
- importing a changed machine file (one session of machine 2 grew, machine 2 shared it): machine 1's refresh
  of that one source, against the floor of reading + unpacking + decoding the same file;
- a no-change refresh of machine 1's machine sources: bytes read (target: 0) and time, against stat-ing the
  files.
The merged ledger's counted calls are checked against the sum of the corpora's distinct calls.
Exit code 0 when the targets are met (0 bytes read on no change, counts right), 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import gen_corpus  # noqa: E402

from trayburn.engine import Engine  # noqa: E402
from trayburn.sources.machine import decode  # noqa: E402
from trayburn.sync.share import Sharing  # noqa: E402


def corpus(out: Path, sessions: int, calls: int, seed: int) -> dict:
    stamp = gen_corpus.load_stamp(out)
    want = {"sessions": sessions, "calls": calls, "seed": seed}
    if stamp is None or {k: stamp["params"].get(k) for k in want} != want or (out / "GROWING").exists():
        print(f"generating {out} ({sessions} sessions, seed {seed}) ...", file=sys.stderr)
        gen_corpus.generate(out, sessions, calls, seed)
        stamp = gen_corpus.load_stamp(out)
    assert stamp is not None
    return stamp["expected"]


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


class Clock:
    """Sharing's clock, moved on by a minute at each write so a due write is never held back."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset


def machine(root: Path, sync: Path, i: int, sessions: Path) -> tuple[Engine, Clock]:
    home = root / f"m{i}"
    if home.exists():
        shutil.rmtree(home)
    home.mkdir(parents=True)
    config = home / "settings.toml"
    config.write_text(f'sessions_dir = "{sessions}"\nsync_dir = "{sync}"\nmachine_name = "machine {i}"\n')
    engine = Engine(config, home / "state", env={"HOME": str(home)})
    clock = Clock()
    engine.sharing = Sharing(engine.state_dir, engine.ledger, clock)
    return engine, clock


def run(args: argparse.Namespace) -> dict:
    out = Path(args.out)
    sync = out / "sync"
    shutil.rmtree(sync, ignore_errors=True)
    sync.mkdir(parents=True)
    expected = [corpus(out / f"corpus-{i}", args.sessions, args.calls, i + 1) for i in range(args.machines)]
    machines = [
        machine(out / "homes", sync, i, gen_corpus.sessions_dir(out / f"corpus-{i}")) for i in range(args.machines)
    ]
    for engine, _ in machines:
        engine.refresh()  # cold ingest of its own corpus, then its machine file is written
    first, first_clock = machines[0]
    started = time.perf_counter()
    first.refresh()  # machine 0 reads the others' files for the first time
    first_import = time.perf_counter() - started
    merged = first.ledger.query("SELECT count(*) FROM calls WHERE counted=1")[0][0]
    want = sum(e["calls"] for e in expected)

    # the machine file: size and write time
    own = first.last_share
    assert own is not None and own.path
    m0 = first.sharing.machine(first.settings.machine_name)
    write_s = best(lambda: first.sharing.export(m0, False, int(time.time() * 1000)), args.repeat)
    size, calls = os.path.getsize(own.path), own.calls

    # importing a changed file: machine 1 grows a session and shares it; machine 0 refreshes that source
    second, clock = machines[1]
    source = next(s for s in first.sources() if s.origin == second.sharing.machine(None).id)
    target = gen_corpus.sessions_dir(out / "corpus-1")
    newest = max(target.iterdir(), key=lambda p: p.name)
    messages, manifest = newest / f"{newest.name}.messages.json", newest / f"{newest.name}.json"
    keep = (messages.read_bytes(), manifest.read_bytes())
    (out / "corpus-1" / "GROWING").write_text("")
    imports, floors, read = [], [], 0
    try:
        for n in range(args.repeat):
            gen_corpus.grow(messages, manifest, 5, seed=100 + n)
            clock.offset += 61
            second.refresh()
            path = source.path
            started = time.perf_counter()
            stats = first.ledger.refresh(source)
            imports.append(time.perf_counter() - started)
            read = stats.bytes_read
            started = time.perf_counter()
            with open(path, "rb") as fh:
                decode(fh.read())
            floors.append(time.perf_counter() - started)
    finally:
        gen_corpus.write_in_place(messages, keep[0])
        gen_corpus.write_in_place(manifest, keep[1])
        (out / "corpus-1" / "GROWING").unlink()

    # a no-change refresh of machine 0's machine sources
    others = [s for s in first.sources() if s.origin is not None]
    nothing = {"bytes": 0}

    def no_change() -> None:
        for s in others:
            nothing["bytes"] += first.ledger.refresh(s).bytes_read

    no_change_s = best(no_change, args.repeat)
    stat_s = best(lambda: [os.stat(s.path) for s in others], args.repeat)
    full_s = best(first.refresh, args.repeat)
    for engine, _ in machines:
        engine.close()
    return {
        "machines": args.machines,
        "sessions_each": args.sessions,
        "merged_counted_calls": merged,
        "expected_calls": want,
        "machine_file_bytes": size,
        "machine_file_calls": calls,
        "bytes_per_1000_calls": round(size / max(calls, 1) * 1000),
        "write_s": round(write_s, 4),
        "first_import_s": round(first_import, 4),
        "changed_import_s": round(min(imports), 4),
        "changed_import_floor_s": round(min(floors), 4),
        "changed_import_bytes_read": read,
        "no_change_s": round(no_change_s, 6),
        "no_change_floor_s": round(stat_s, 6),
        "no_change_bytes_read": nothing["bytes"],
        "full_no_change_refresh_s": round(full_s, 4),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--machines", type=int, default=3)
    ap.add_argument("--sessions", type=int, default=5000)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=str(HERE / "out" / "sync"))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    r = run(args)
    ok = r["no_change_bytes_read"] == 0 and r["merged_counted_calls"] == r["expected_calls"]
    if args.json:
        print(json.dumps({**r, "ok": ok}, indent=2))
    else:
        print(
            f"{r['machines']} machines x {r['sessions_each']:,} sessions: {r['merged_counted_calls']:,} calls merged "
            f"(expected {r['expected_calls']:,})"
        )
        print(
            f"machine file: {r['machine_file_bytes']:,} bytes for {r['machine_file_calls']:,} calls = "
            f"{r['bytes_per_1000_calls']:,} bytes per 1,000 calls; written in {r['write_s']:.3f} s"
        )
        print(f"first import of {r['machines'] - 1} files: {r['first_import_s']:.3f} s")
        ratio = r["changed_import_s"] / max(r["changed_import_floor_s"], 1e-9)
        print(
            f"changed file imported: {r['changed_import_s']:.3f} s (floor: read+unpack+decode "
            f"{r['changed_import_floor_s']:.3f} s, {ratio:.1f}x)"
        )
        print(
            f"no-change refresh of the machine sources: {r['no_change_s'] * 1000:.2f} ms, "
            f"{r['no_change_bytes_read']} bytes read (floor: stat {r['no_change_floor_s'] * 1000:.3f} ms); "
            f"whole refresh {r['full_no_change_refresh_s'] * 1000:.1f} ms"
        )
        print("OK" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
