"""Kilo Code 7 databases for the tests: the real recordings unpacked, rows shaped as Kilo 7.7.9 writes them, and a
real `sqlite3` process writing into a database while trayburn reads it."""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).parent.parent / "data"
V1 = DATA / "real-kilo7-v1"
FORK = DATA / "real-kilo7-fork-v1"


def unpack(corpus: Path, dest: Path) -> Path:
    """The recording's files unpacked under `dest` (writable); returns `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(corpus / "kilo-files.tar.xz") as tar:
        tar.extractall(dest, filter="data")
    for p in dest.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    return dest


def expected(corpus: Path = V1, name: str = "EXPECTED.json") -> dict:
    return json.loads((corpus / name).read_text())


def as_trayburn(t: dict) -> tuple:
    """EXPECTED's figures in trayburn's meaning: (calls, input with both cache counts, output with reasoning,
    cache read, cache write, cost)."""
    return (t["calls"], t["input"] + t["cache_read"] + t["cache_write"], t["output"] + t["reasoning"],
            t["cache_read"], t["cache_write"], round(t["cost"], 9))  # fmt: skip


def assistant(mid: str, sid: str, created: int, tokens: tuple[int, int, int, int, int], cost: float,
              model: str = "fake-sonnet", provider: str = "fakeant", done: bool = True) -> dict:  # fmt: skip
    i, o, r, cr, cw = tokens
    doc: dict[str, Any] = {
        "parentID": "msg_user", "role": "assistant", "mode": "code", "agent": "code",
        "path": {"cwd": "/work/p", "root": "/work/p"}, "cost": cost,
        "tokens": {"total": sum(tokens), "input": i, "output": o, "reasoning": r, "cache": {"write": cw, "read": cr}},
        "modelID": model, "providerID": provider, "time": {"created": created},
    }  # fmt: skip
    if done:
        doc["time"]["completed"] = created + 900
        doc["finish"] = "stop"
    return doc


def step_finish(tokens: tuple[int, int, int, int, int], cost: float, start: int) -> dict:
    i, o, r, cr, cw = tokens
    return {"reason": "stop", "type": "step-finish", "time": {"start": start, "end": start + 800, "elapsed": 800},
            "tokens": {"total": sum(tokens), "input": i, "output": o, "reasoning": r,
                       "cache": {"write": cw, "read": cr}}, "cost": cost}  # fmt: skip


def q(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, (int, float)):
        return repr(value)
    text = value if isinstance(value, str) else json.dumps(value)
    return "'" + text.replace("'", "''") + "'"


def session_sql(sid: str, created: int, title: str, parent: str | None = None, directory: str = "/work/p") -> str:
    return (
        "INSERT INTO session(id, project_id, parent_id, slug, directory, title, version, time_created, time_updated)"
        f" VALUES({q(sid)}, (SELECT id FROM project LIMIT 1), {q(parent)}, 'slug', {q(directory)}, {q(title)},"
        f" '7.7.9', {created}, {created});"
    )


def message_sql(mid: str, sid: str, created: int, doc: dict) -> str:
    return (
        f"INSERT INTO message(id, session_id, time_created, time_updated, data) VALUES({q(mid)}, {q(sid)}, {created},"
        f" {created}, {q(doc)}) ON CONFLICT(id) DO UPDATE SET data=excluded.data, time_updated=excluded.time_updated;"
    )


def part_sql(pid: str, mid: str, sid: str, created: int, doc: dict) -> str:
    return (
        f"INSERT INTO part(id, message_id, session_id, time_created, time_updated, data) VALUES({q(pid)}, {q(mid)},"
        f" {q(sid)}, {created}, {created}, {q(doc)});"
    )


def step_sql(n: int, sid: str, created: int, tokens: tuple[int, int, int, int, int], cost: float, **kw: Any) -> str:
    """One finished assistant step: its message and its step-finish part (ids `msg_t<n>`, `prt_t<n>`)."""
    mid = f"msg_t{n:04d}"
    return message_sql(mid, sid, created, assistant(mid, sid, created, tokens, cost, **kw)) + part_sql(
        f"prt_t{n:04d}", mid, sid, created + 100, step_finish(tokens, cost, created + 10)
    )


class Writer:
    """A real `sqlite3` process with the database open in WAL mode, fed statements on its standard input. `run`
    returns once the process has executed them (it prints a marker after them): no sleep, no guess."""

    def __init__(self, db: Path, *pragmas: str):
        if shutil.which("sqlite3") is None:
            pytest.skip("apt-get install sqlite3 (the command-line shell the writer is)")
        self.proc = subprocess.Popen(
            ["sqlite3", "-batch", str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, bufsize=1,
        )  # fmt: skip
        self.run("PRAGMA journal_mode=WAL;", "PRAGMA foreign_keys=ON;", "PRAGMA wal_autocheckpoint=0;", *pragmas)

    def run(self, *sql: str) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("\n".join(sql) + "\n.print --done--\n")
        self.proc.stdin.flush()
        out = []
        for line in self.proc.stdout:
            if line.strip() == "--done--":
                text = "".join(out)
                if "error" in text.lower():
                    raise AssertionError(f"sqlite3: {text}")
                return text
            out.append(line)
        raise AssertionError(f"sqlite3 ended: {''.join(out)}")

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
