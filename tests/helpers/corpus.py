"""Test helpers: the recorded Cline corpus and its EXPECTED.json, hand-made sessions written the
way the Cline CLI writes them, and plain sums read straight from the ledger's SQLite.

Nothing here imports trayburn's engine internals beyond what a test would call anyway, and
nothing mocks them: tests run the real parser and ledger on real files and a real database.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from trayburn.ledger import store
from trayburn.sources.cline_cli.source import ClineCliSource

DATA = Path(__file__).resolve().parent.parent / "data"
CORPUS = DATA / "real-cline-v1"  # a CLINE_DIR recorded from the real Cline CLI
QUIRKS = DATA / "quirks"  # hand-made files for what the real CLI does not produce on demand
TOKEN_FIELDS = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens")
LEDGER_SUMS = "COUNT(*), TOTAL(input), TOTAL(output), TOTAL(cache_read), TOTAL(cache_write), TOTAL(cost)"
_OMIT = object()


# ---- Cline's cost formula, written independently of trayburn's ------------------------------------


def cline_estimate(book: Any, model: str, i: int, o: int, cr: int, cw: int, at_ms: int) -> float:
    """Cline's formula with the unit prices the PriceBook gives for `model` at the call's own time
    `at_ms` (never "now": DeepSeek's off-peak window would make a test pass or fail by the hour); 0 for
    a model without a price."""
    p = book.prices(model)
    if p is None:
        return 0.0
    r = p.rates_at(at_ms)
    cache_read = (r.cache_read or r.input).base
    cache_write = (r.cache_write or r.input).base
    return ((i - cr - cw) * r.input.base + o * r.output.base + cr * cache_read + cw * cache_write) / 1e6


# ---- the recorded corpus ------------------------------------------------------------------------


def expected() -> dict:
    return json.loads((CORPUS / "EXPECTED.json").read_text())


def expected_sessions() -> dict[str, dict]:
    return {s["session_id"]: s for s in expected()["sessions"]}


def copy_corpus(dest: Path) -> Path:
    """A writable copy of the corpus (a CLINE_DIR); returns its root."""
    shutil.copytree(CORPUS, dest)
    for path in [dest, *dest.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    return dest


def sessions_of(cline_dir: Path) -> Path:
    return cline_dir / "data" / "sessions"


def as_sums(totals: dict) -> tuple:
    """EXPECTED.json's {calls, *Tokens, cost} in the order of LEDGER_SUMS."""
    return (totals["calls"], *(totals[k] for k in TOKEN_FIELDS), totals["cost"])


# ---- reading the ledger back --------------------------------------------------------------------


def counted(ledger, where: str = "1", params: tuple = ()) -> tuple:
    """(calls, input, output, cache_read, cache_write, reported cost) of counted calls."""
    row = ledger.query(f"SELECT {LEDGER_SUMS} FROM calls WHERE counted=1 AND ({where})", params)[0]
    return (row[0], *(int(x) for x in row[1:5]), row[5])


def assert_sums(actual: tuple, wanted: tuple) -> None:
    assert actual[:5] == tuple(wanted[:5])
    assert actual[5] == pytest.approx(wanted[5], abs=1e-9)


# ---- hand-made sessions, written like the Cline CLI writes them -------------------------------------


def ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def iso(epoch_ms: int) -> str:
    return datetime.fromtimestamp(epoch_ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def assistant(
    mid: Any,
    ts: Any,
    input=1000,
    output=10,
    cache_read=0,
    cache_write=0,
    cost: Any = _OMIT,
    model: Any = "gpt-4o",
    tools=(),
    metrics: Any = _OMIT,
) -> dict:
    """An assistant message with one call's metrics (`cost` left out unless given)."""
    if metrics is _OMIT:
        metrics = {
            "inputTokens": input,
            "outputTokens": output,
            "cacheReadTokens": cache_read,
            "cacheWriteTokens": cache_write,
        }
        if cost is not _OMIT:
            metrics["cost"] = cost
    content = [{"type": "text", "text": "ok"}] + [
        {"type": "tool_use", "id": f"call_{i}", "name": name, "input": {}} for i, name in enumerate(tools)
    ]
    msg = {"id": mid, "role": "assistant", "content": content, "ts": ts}
    if model is not None:
        msg["modelInfo"] = {"id": model, "provider": "openai-compatible"}
    if metrics is not None:
        msg["metrics"] = metrics
    return {k: v for k, v in msg.items() if v is not _OMIT}


def user(mid: str, ts: int, text: str = "go") -> dict:
    return {"id": mid, "role": "user", "content": [{"type": "text", "text": text}], "ts": ts}


def messages_doc(sid: str, messages: list, agent: str = "lead", **extra) -> dict:
    return {
        "version": 1,
        "updated_at": iso(int(time.time() * 1000)),
        "agent": agent,
        "sessionId": sid,
        "messages": messages,
        **extra,
    }


def manifest(sid: str, started_at: str, **fields) -> dict:
    doc = {
        "version": 1,
        "session_id": sid,
        "source": "cli",
        "pid": 1,
        "started_at": started_at,
        "status": "completed",
        "interactive": False,
        "provider": "openai-compatible",
        "model": "gpt-4o",
        "cwd": f"/work/{sid}",
        "workspace_root": f"/work/{sid}",
        "prompt": f"[{sid}] do it",
        "metadata": {"title": f"[{sid}] do it"},
    }
    doc.update(fields)
    return doc


def dumps(doc: Any) -> bytes:
    """As the CLI writes: JSON.stringify(x, null, 2) + newline."""
    return (json.dumps(doc, indent=2) + "\n").encode()


def write_json(path: Path, doc: Any) -> bytes:
    data = dumps(doc)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data


def make_session(
    sessions_dir: Path,
    sid: str,
    started_at: str,
    messages: list | None = None,
    agents: dict[str, tuple[str, list]] | None = None,
    **manifest_fields,
) -> Path:
    """<sid>/<sid>.json, <sid>/<sid>.messages.json (unless messages is None), and agent files
    {file name: (agent kind, messages)}. Returns the folder."""
    folder = sessions_dir / sid
    write_json(folder / f"{sid}.json", manifest(sid, started_at, **manifest_fields))
    if messages is not None:
        write_json(folder / f"{sid}.messages.json", messages_doc(sid, messages))
    for name, (kind, msgs) in (agents or {}).items():
        write_json(folder / name, messages_doc(f"{sid}__{name}", msgs, agent=kind))
    return folder


def write_in_place(path: Path, data: bytes) -> None:
    """As the Cline CLI rewrites a file: opened without truncation, one write(), then truncate."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        written = os.write(fd, data)
        assert written == len(data)
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)


def age(path: Path, seconds: int = 600) -> None:
    """Move a file's mtime back: a file that has not changed for a while."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - seconds * 10**9))


def age_all(root: Path, seconds: int = 600) -> None:
    """`age` every file under `root`: files that have not changed for a while (so a refresh trusts their
    checkpoints at once, instead of reading a just-written file again under the racy-timestamp rule)."""
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            age(path, seconds)


def a_minute_later() -> int:
    """A wall clock (epoch ns) for a ledger that reads files as if a minute after they were written: the
    racy-timestamp rule (its own tests use the real clock) then trusts every checkpoint at once."""
    return time.time_ns() + 60 * 10**9


def bump_mtime(path: Path) -> None:
    """Move a file's mtime forward by a second (a rewrite the stat must see, whatever the clock's grain)."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))


# ---- environment ---------------------------------------------------------------------------------


def isolated_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """An environment that points trayburn and Cline only inside tmp_path."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {
        "HOME": str(home),
        "TRAYBURN_CONFIG": str(tmp_path / "settings.toml"),
        "TRAYBURN_STATE_DIR": str(tmp_path / "state"),
    }
    env.update(extra)
    return env


@pytest.fixture
def set_tz():
    """set_tz("America/New_York"): TZ for this test only (time.tzset() on the way in and out)."""
    with pytest.MonkeyPatch.context() as mp:

        def apply(name: str) -> None:
            mp.setenv("TZ", name)
            time.tzset()

        yield apply
    time.tzset()


class Ledger(store.Ledger):
    """The ledger as the tests drive it: `refresh(folder)` reads the Cline CLI's sessions folder there through one
    `ClineCliSource` per folder, kept between refreshes (its listings and watches) and closed with the ledger: what
    `Engine.sources` does for the app. `clock` is the sources' (it times their full sweeps)."""

    def __init__(self, *args: Any, clock: Callable[[], float] = time.monotonic, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.clock = clock
        self._cline: dict[str, ClineCliSource] = {}

    def cline_source(self, folder: str | os.PathLike[str]) -> ClineCliSource:
        key = str(folder)
        if key not in self._cline:
            self._cline[key] = ClineCliSource(key, self.clock)
        return self._cline[key]

    def refresh(self, source: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(source, (str, os.PathLike)):
            source = self.cline_source(source)
        return super().refresh(source, *args, **kwargs)

    def close(self) -> None:
        super().close()
        for source in self._cline.values():
            source.listings.close()


def refresh_in_process(state_dir: str, sessions_dir: str, start, out) -> None:
    """For multiprocessing: wait for the start signal, open the ledger, refresh once, report."""
    start.wait(30)
    ledger = Ledger(Path(state_dir) / "ledger.db")  # opening (and creating) races too
    stats = ledger.refresh(sessions_dir)
    out.put((os.getpid(), stats.files_read, dict(stats.errors)))
    ledger.close()


# ---- a Cline-like writer, for the rewrite tests (a thread or a process) ----------------------------------

REWRITE_SID = "1796030000000_rwrit"
REWRITE_START = "2026-11-30T10:00:00.000Z"


def rewrite_call(i: int) -> dict:
    """The i-th call of the rewritten session: distinct tokens and cost, so sums prove which calls count."""
    return assistant(
        f"msg_rw{i:06d}",
        ms(REWRITE_START) + 1000 * (i + 1),
        1000 + i,
        10 + i,
        100 * i,
        i % 3,
        cost=round(0.001 * (i + 1), 6),
    )


def rewrite_session(folder: Path, calls: int, ready, done, pad: int = 400_000) -> None:
    """Grow <sid>.messages.json call by call, rewriting it in place (and the manifest now and then)
    the way Cline does. Before each write it takes a token from `ready` (the reader is about to
    refresh), so every write races a refresh; `done` is set when the last write is on disk."""
    sid = REWRITE_SID
    messages: list = []
    for i in range(calls):
        messages += [user(f"u-{i}", ms(REWRITE_START) + 1000 * i + 1), rewrite_call(i)]
        doc = messages_doc(sid, messages, system_prompt="You are Cline. " * (pad // 14))
        ready.get(timeout=60)
        write_in_place(folder / f"{sid}.messages.json", dumps(doc))
        if i % 5 == 4 or i == calls - 1:
            status = "completed" if i == calls - 1 else "running"
            usage = {"inputTokens": 1, "outputTokens": 1, "cacheReadTokens": 0, "cacheWriteTokens": 0, "totalCost": 9.0}
            write_in_place(
                folder / f"{sid}.json",
                dumps(manifest(sid, REWRITE_START, status=status, metadata={"title": "rewrite", "usage": usage})),
            )
    done.set()
