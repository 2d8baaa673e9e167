"""A warm `trayburn today` right after `chmod -R` of the sessions folder (every file's and folder's change time
moved, nothing else), beside a warm `today` with nothing changed, as a fresh process (CPU: user + system).

    .venv/bin/python bench/bench_chmod.py --corpus /tmp/copy-of-cold-5000 --tree /work/main --tree . --repeat 7

`--corpus`: a copy of a generated corpus (bench_cold.py's bench/out/cold-<n>; it is chmod-ed, so never the shared
one). Each round, for every tree: the history read whole (untimed, `sessions --all`), a warm `today` timed; then
one `chmod -R g+w` (or `g-w`, alternately: the mode really changes) of the sessions folder, a wait of RACY_NS so
the new change times are not "a moment ago", and `today` timed twice per tree (the first after the chmod, and the
next, which shows what the first left for later), the trees' order alternating.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gen_corpus  # noqa: E402
from bench_cli import run_env, timed  # noqa: E402

RACY_S = 2.0


def env_for(corpus: Path, tree: Path) -> tuple[dict[str, str], Path]:
    state = corpus.parent / ("chmod-state-" + hashlib.blake2b(str(tree).encode(), digest_size=4).hexdigest())
    return run_env(corpus, state, tree), state


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--tree", type=Path, action="append", required=True)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args(argv)
    corpus = args.corpus.resolve()
    sessions = gen_corpus.sessions_dir(corpus)
    trees = [t.resolve() for t in args.tree]
    ready = {t: env_for(corpus, t) for t in trees}
    today = [sys.executable, "-m", "trayburn", "today"]
    plain: dict[Path, list[tuple[float, float]]] = {t: [] for t in trees}
    after: dict[Path, list[tuple[float, float]]] = {t: [] for t in trees}
    second: dict[Path, list[tuple[float, float]]] = {t: [] for t in trees}
    for r in range(args.repeat):
        for t in trees:
            env, state = ready[t]
            timed([sys.executable, "-m", "trayburn", "sessions", "--all"], env, state)
            timed(today, env, state)
            plain[t].append(timed(today, env, state))
        subprocess.run(["chmod", "-R", "g+w" if r % 2 == 0 else "g-w", str(sessions)], check=True)
        time.sleep(RACY_S + 0.5)  # (the bench's own pause, so the change times are settled as a person's would be)
        for t in trees if r % 2 == 0 else reversed(trees):
            env, state = ready[t]
            after[t].append(timed(today, env, state))
            second[t].append(timed(today, env, state))
    with open("/proc/loadavg") as fh:
        print(f"median of {args.repeat} runs, wall / CPU (user + system); load {fh.read().strip()}")
    for t in trees:
        for name, runs in (("today, nothing changed", plain[t]), ("after chmod -R", after[t]), ("next", second[t])):
            wall, cpu = statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)
            print(f"  {str(t):32} {name:24} {wall * 1000:7.0f} ms {cpu * 1000:6.0f} ms CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
