"""Benchmark the ledger against the floors of the machine it runs on, in one run.

    .venv/bin/python bench/bench_ledger.py                  # 5,000 sessions x 20 calls (~0.5 GB)
    .venv/bin/python bench/bench_ledger.py --sessions 500 --json

Measures a cold ingest, a refresh with nothing changed, a refresh after one session grew, and the
peak memory of a cold ingest, each beside its floor measured in the same run: reading every file's
bytes, stat-ing every file. The page cache is warm (dropping it needs root): the floors run once to
warm it before anything is timed. Every timing is the best of --repeat runs.
Exit code 0 when every target is met, 1 otherwise.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import gen_corpus  # noqa: E402

from trayburn.ledger import store  # noqa: E402
from trayburn.sources.cline_cli import layout, parse  # noqa: E402
from trayburn.sources.cline_cli.source import ClineCliSource  # noqa: E402


class Ledger(store.Ledger):
    """`refresh(folder)`: the Cline CLI's sessions folder there, through one source kept between refreshes (its
    listings and watches), as `Engine.sources` keeps it for the app."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._cline: dict[str, ClineCliSource] = {}

    def refresh(self, source, *args, **kwargs):
        if isinstance(source, (str, os.PathLike)):
            if str(source) not in self._cline:
                self._cline[str(source)] = ClineCliSource(str(source), time.monotonic)
            source = self._cline[str(source)]
        return super().refresh(source, *args, **kwargs)

    def close(self) -> None:
        super().close()
        for source in self._cline.values():
            source.listings.close()


RACY_S = getattr(layout, "RACY_NS", 0) / 1e9 + 0.5
DIRTY = "GROWING"  # present while a session is grown; a corpus left with it is regenerated

# Peak RSS of the child itself. Linux: VmHWM, because ru_maxrss survives exec and so starts at the
# parent's size (this benchmark's parent is large); elsewhere ru_maxrss (bytes on macOS, KiB otherwise).
MEMORY_CHILD = """
import json, resource, sys, time
from pathlib import Path
from trayburn.ledger import Ledger
from trayburn.sources.cline_cli.source import ClineCliSource
ledger = Ledger(Path(sys.argv[1]))
started = time.perf_counter()
stats = ledger.refresh(ClineCliSource(sys.argv[2], time.monotonic)) if sys.argv[2] else None
seconds = time.perf_counter() - started
try:
    with open("/proc/self/status") as fh:
        kib = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
except (OSError, StopIteration):
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (1024 if sys.platform == "darwin" else 1)
print(json.dumps({"kib": kib, "seconds": seconds, "files_read": stats.files_read if stats else 0}))
"""


# ---- measuring ------------------------------------------------------------------------------------------


@dataclass
class Sample:
    seconds: list[float] = field(default_factory=list)
    extra: dict = field(default_factory=dict)

    @property
    def best(self) -> float:
        return min(self.seconds)

    def to_json(self) -> dict:
        return {
            "best": round(self.best, 4),
            "median": round(statistics.median(self.seconds), 4),
            "runs": [round(s, 4) for s in self.seconds],
            **self.extra,
        }


def timed(fn, repeat: int) -> Sample:
    sample = Sample()
    for _ in range(repeat):
        started = time.perf_counter()
        extra = fn()
        sample.seconds.append(time.perf_counter() - started)
        if isinstance(extra, dict):
            sample.extra = extra
    return sample


def list_files(sessions: Path) -> list[str]:
    """Every manifest and messages file, as a reader of Cline's layout finds them."""
    out = []
    for folder in os.scandir(sessions):
        if not folder.is_dir():
            continue
        for entry in os.scandir(folder.path):
            if entry.name == folder.name + ".json" or entry.name.endswith(".messages.json"):
                out.append(entry.path)
    return out


def floor_read(files: list[str]) -> dict:
    total = 0
    for path in files:
        with open(path, "rb") as fh:
            total += len(fh.read())
    return {"bytes": total}


def floor_stat(files: list[str]) -> dict:
    for path in files:
        os.stat(path)
    return {"files": len(files)}


def floor_walk(sessions: Path) -> dict:
    """scandir the sessions folder and every session folder, stat-ing the files a reader wants."""
    n = 0
    for folder in os.scandir(sessions):
        if not folder.is_dir():
            continue
        for entry in os.scandir(folder.path):
            if entry.name == folder.name + ".json" or entry.name.endswith(".messages.json"):
                entry.stat()
                n += 1
    return {"files": n}


def ref_decode(files: list[str], decode) -> dict:
    for path in files:
        with open(path, "rb") as fh:
            decode(fh.read())
    return {}


def ref_parse(files: list[str]) -> dict:
    """trayburn's own parser on every file, without the ledger."""
    calls = 0
    for path in files:
        with open(path, "rb") as fh:
            data = fh.read()
        if path.endswith(".messages.json"):
            calls += len(parse.parse_messages(data, "x").calls)
        else:
            parse.parse_manifest(data)
    return {"calls": calls}


def peak_memory(sessions: Path, work: Path) -> dict:
    """ru_maxrss of a child process that does a cold ingest, and of one that only opens the ledger."""

    def child(db: Path, target: str) -> dict:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE.parent), os.environ.get("PYTHONPATH", "")]))
        out = subprocess.run(
            [sys.executable, "-c", MEMORY_CHILD, str(db), target], env=env, capture_output=True, text=True, check=True
        ).stdout
        got = json.loads(out)
        got["mb"] = got["kib"] / 1024
        return got

    base = child(work / "mem-base.db", "")
    ingest = child(work / "mem-ingest.db", str(sessions))
    return {
        "peak_mb": round(ingest["mb"], 1),
        "baseline_mb": round(base["mb"], 1),
        "child_seconds": round(ingest["seconds"], 3),
        "files_read": ingest["files_read"],
    }


def profile(fn, path: Path, top: int = 25) -> str:
    prof = cProfile.Profile()
    prof.runcall(fn)
    prof.dump_stats(path)
    out = []

    class Sink:
        def write(self, s):
            out.append(s)

    pstats.Stats(prof, stream=Sink()).sort_stats("cumulative").print_stats(top)
    return "".join(out)


# ---- the corpus -----------------------------------------------------------------------------------------


def ensure_corpus(out: Path, sessions: int, calls: int, seed: int) -> tuple[dict, bool]:
    """Reuse OUT/corpus when it was generated with these parameters and left clean; else generate it."""
    stamp = gen_corpus.load_stamp(out)
    want = asdict(gen_corpus.Params(sessions, calls, seed))  # (all of them: else it never matches the stamp)
    if stamp and stamp["params"] == want and not (out / DIRTY).exists():
        return stamp["expected"], True
    print(f"generating {sessions} sessions x {calls} calls into {out} ...", file=sys.stderr)
    expected = gen_corpus.generate(out, sessions, calls, seed)
    return expected.to_json(), False


def counted_calls(ledger: Ledger) -> int:
    return ledger.query("SELECT count(*) FROM calls WHERE counted=1")[0][0]


# ---- the run --------------------------------------------------------------------------------------------


@dataclass
class Figure:
    name: str
    value: float
    unit: str
    floor_name: str = ""
    floor: float | None = None
    target: float | None = None  # the ratio (or, without a floor, the value) must stay at or below this
    exact: bool = False  # target is an exact value (bytes read = 0)

    @property
    def ratio(self) -> float | None:
        return self.value / self.floor if self.floor else None

    @property
    def passed(self) -> bool | None:
        if self.target is None:
            return None
        if self.exact:
            return self.value == self.target
        return (self.ratio if self.floor else self.value) <= self.target

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "value": round(self.value, 4),
            "unit": self.unit,
            "floor": self.floor_name or None,
            "floor_value": None if self.floor is None else round(self.floor, 4),
            "ratio": None if self.ratio is None else round(self.ratio, 3),
            "target": self.target,
            "pass": self.passed,
        }


def run(args) -> dict:
    out = args.out.resolve()
    corpus_root = out / "corpus"
    expected, reused = ensure_corpus(corpus_root, args.sessions, args.calls, args.seed)
    args.generated_at = 0.0 if reused else time.time()
    sessions = gen_corpus.sessions_dir(corpus_root)
    work = Path(tempfile.mkdtemp(prefix="ledgers-", dir=out))
    try:
        return _measure(args, sessions, corpus_root, work, expected, reused)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _measure(args, sessions: Path, corpus_root: Path, work: Path, expected: dict, reused: bool) -> dict:
    files = list_files(sessions)
    log = (lambda *a: None) if args.json else (lambda *a: print(*a, file=sys.stderr))
    log(f"corpus: {len(files)} files, {expected['bytes'] / 1e6:.0f} MB ({'reused' if reused else 'generated'})")
    floor_read(files), floor_stat(files), floor_walk(sessions)  # warm the page cache and the dentry cache
    floors = {
        "read": timed(lambda: floor_read(files), args.repeat),
        "stat": timed(lambda: floor_stat(files), args.repeat),
        "walk": timed(lambda: floor_walk(sessions), args.repeat),
    }
    refs = {}
    if not args.no_refs:
        import msgspec

        log("references: json.loads, msgspec.json.decode, trayburn's parser ...")
        refs["json.loads"] = timed(lambda: ref_decode(files, json.loads), 1)
        refs["msgspec.decode"] = timed(lambda: ref_decode(files, msgspec.json.decode), 1)
        refs["trayburn parse"] = timed(lambda: ref_parse(files), 1)

    log("cold ingest ...")
    n = [0]

    def cold():
        n[0] += 1
        ledger = Ledger(work / f"cold-{n[0]}.db")
        stats = ledger.refresh(sessions)
        assert stats.files_read == len(files), (stats.files_read, len(files))
        got = counted_calls(ledger)
        assert got == expected["calls"], f"counted {got} calls, expected {expected['calls']}"
        ledger.close()
        return {"files_read": stats.files_read, "bytes_read": stats.bytes_read, "calls": got}

    cold_s = timed(cold, args.repeat)
    ledger = Ledger(work / f"cold-{n[0]}.db")

    log("no-change refresh ...")

    def unchanged(led: Ledger):
        stats = led.refresh(sessions)
        return {"bytes_read": stats.bytes_read, "files_read": stats.files_read, "files_stat": stats.files_stat}

    # Folders changed in the last RACY_NS are listed again at every scan; a corpus written moments ago
    # would measure that, not the steady state of a poller over a corpus of past sessions.
    time.sleep(max(0.0, args.generated_at + RACY_S - time.time()))
    ledger.refresh(sessions)  # a first pass, as the tray's poller has done by then
    same_s = timed(lambda: unchanged(ledger), args.repeat)
    # the first refresh of a new process (`trayburn today`): nothing cached in memory yet
    fresh = [Ledger(work / f"cold-{n[0]}.db") for _ in range(args.repeat)]
    opened = time.perf_counter()
    fresh.append(Ledger(work / f"cold-{n[0]}.db"))
    open_s = time.perf_counter() - opened

    def first_refresh():
        led = fresh.pop(0)
        try:
            return unchanged(led)
        finally:
            led.close()

    same_new = timed(first_refresh, args.repeat)
    same_new.extra["open_seconds"] = round(open_s, 4)
    for led in fresh:
        led.close()

    log("refresh after one session grew ...")
    grown = _grow_run(args, sessions, ledger, expected)
    ledger.close()

    log("peak memory (child process, cold ingest) ...")
    mem = peak_memory(sessions, work)

    profiles = {}
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
        led = Ledger(work / "profile.db")
        profiles["cold"] = profile(lambda: led.refresh(sessions), args.profile / "cold.prof")
        led.refresh(sessions)  # the first refresh after a change reloads what the ledger knows; profile the next
        profiles["no-change"] = profile(lambda: led.refresh(sessions), args.profile / "no-change.prof")
        led.close()

    grow_floor = floors["stat"].best + grown["read_floor"]
    figures = [
        Figure("cold ingest", cold_s.best, "s", "read", floors["read"].best, 2.0),
        Figure("no-change refresh", same_s.best, "s", "stat", floors["stat"].best, 1.5),
        Figure("  bytes read", same_s.extra["bytes_read"], "B", target=0, exact=True),
        Figure("  same, against the walk floor", same_s.best, "s", "walk", floors["walk"].best),
        Figure("no-change refresh, new process", same_new.best, "s", "walk", floors["walk"].best),
        Figure("refresh after one session grew", grown["sample"].best, "s", "stat+read1", grow_floor),
        Figure("peak memory (cold ingest)", mem["peak_mb"], "MB", target=150),
    ]
    return {
        "corpus": {"path": str(sessions), "reused": reused, "files": len(files), **expected},
        "repeat": args.repeat,
        "floors": {k: v.to_json() for k, v in floors.items()},
        "references": {k: v.to_json() for k, v in refs.items()},
        "runs": {
            "cold": cold_s.to_json(),
            "no_change": same_s.to_json(),
            "no_change_reopened": same_new.to_json(),
            "grew": grown["sample"].to_json(),
            "memory": mem,
        },
        "figures": [f.to_json() for f in figures],
        "profiles": profiles,
        "ok": all(f.passed is not False for f in figures),
    }


def _grow_run(args, sessions: Path, ledger: Ledger, expected: dict) -> dict:
    """Grow the most recent session by --grow-calls calls, refresh, and restore its files afterwards."""
    sid = max(p.name for p in sessions.iterdir() if p.is_dir())
    messages, manifest = sessions / sid / f"{sid}.messages.json", sessions / sid / f"{sid}.json"
    originals = {p: p.read_bytes() for p in (messages, manifest)}
    dirty = sessions.parent.parent / DIRTY  # the corpus root
    dirty.write_text("a session is being grown; regenerate\n")
    sample, added, read = Sample(), 0, 0.0
    try:
        for i in range(args.repeat):
            added += gen_corpus.grow(messages, manifest, args.grow_calls, seed=1000 + i)
            started = time.perf_counter()
            stats = ledger.refresh(sessions)
            sample.seconds.append(time.perf_counter() - started)
            sample.extra = {
                "files_read": stats.files_read,
                "bytes_read": stats.bytes_read,
                "calls_upserted": stats.calls_upserted,
            }
            t0 = time.perf_counter()
            floor_read([str(messages), str(manifest)])
            read = time.perf_counter() - t0
            got = counted_calls(ledger)
            assert got == expected["calls"] + added, f"counted {got}, expected {expected['calls'] + added}"
    finally:
        for path, data in originals.items():
            gen_corpus.write_in_place(path, data)
        dirty.unlink(missing_ok=True)
    return {"sample": sample, "read_floor": read}


# ---- output ---------------------------------------------------------------------------------------------


def render(result: dict) -> str:
    c = result["corpus"]
    lines = [
        f"corpus  {c['sessions']} sessions, {c['files']} files, {c['bytes'] / 1e6:.0f} MB, {c['calls']} calls "
        f"({'reused' if c['reused'] else 'generated'}: {c['path']})",
        f"timings are the best of {result['repeat']} runs, warm page cache",
        "",
        "floors      " + "   ".join(f"{k} {v['best']:.3f} s" for k, v in result["floors"].items()),
    ]
    if result["references"]:
        lines.append("references  " + "   ".join(f"{k} {v['best']:.2f} s" for k, v in result["references"].items()))
    lines += ["", f"{'figure':<36} {'value':>10} {'floor':>11} {'floor value':>11} {'ratio':>7} {'target':>8}  result"]
    for f in result["figures"]:
        unit = f["unit"]
        value = f"{f['value']:.3f} s" if unit == "s" else f"{f['value']:g} {unit}"
        floor = f"{f['floor_value']:.3f} s" if f["floor_value"] is not None else ""
        ratio = f"{f['ratio']:.2f}x" if f["ratio"] is not None else ""
        if f["target"] is None:
            target = ""
        elif f["floor"]:
            target = f"<= {f['target']:g}x"
        else:
            target = f"{'=' if f['name'].strip() == 'bytes read' else '<'} {f['target']:g}"
        verdict = {True: "PASS", False: "FAIL", None: "-"}[f["pass"]]
        lines.append(
            f"{f['name']:<36} {value:>10} {f['floor'] or '':>11} {floor:>11} {ratio:>7} {target:>8}  {verdict}"
        )
    runs = result["runs"]
    lines += [
        "",
        f"cold ingest: {runs['cold']['files_read']} files, {runs['cold']['bytes_read'] / 1e6:.0f} MB read; "
        f"grew: {runs['grew']['files_read']} files, {runs['grew']['calls_upserted']} calls upserted; "
        f"memory: {runs['memory']['baseline_mb']} MB before the ingest; "
        f"opening the ledger: {runs['no_change_reopened']['open_seconds']:.3f} s",
    ]
    for name, text in result["profiles"].items():
        lines += ["", f"---- profile: {name} ----", text]
    lines.append("ALL TARGETS MET" if result["ok"] else "SOME TARGETS MISSED")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=5000)
    ap.add_argument("--calls", type=int, default=20, help="model calls per session's lead file")
    ap.add_argument("--repeat", type=int, default=3, help="runs per timing; the best is reported")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--grow-calls", type=int, default=5, help="calls appended to the grown session")
    ap.add_argument("--out", type=Path, default=HERE / "out", help="corpus and scratch ledgers (default bench/out)")
    ap.add_argument("--no-refs", action="store_true", help="skip the json.loads / msgspec reference decodes")
    ap.add_argument("--profile", type=Path, metavar="DIR", help="also cProfile a cold ingest and a no-change refresh")
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    result = run(args)
    print(json.dumps(result, indent=2) if args.json else render(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
