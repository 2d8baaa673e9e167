"""A property over the whole ledger: random sessions (renamed copies, forks, subagent files, rollups,
messages with and without ids) and faults (a truncated file, a FIFO, a folder name that is not UTF-8,
a lone surrogate, a time that is not one, an absurd cost, a folder removed) give the totals an independent sum over
the files gives; written, closed and reopened they are the same; folders deleted, unchanged."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from helpers.corpus import Ledger, dumps, manifest, messages_doc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

T0 = 1796020000000
FAULTS = ("none", "none", "none", "truncated", "fifo", "odd_name")


@dataclass
class Msg:
    mid: str | None
    index: int
    ts: int | str
    model: str
    input: int
    output: int
    cost: float | None = None  # reported; over $10,000 for one call it is garbage, estimated instead

    @property
    def used_cost(self) -> float | None:
        return self.cost if self.cost is not None and self.cost <= 10_000 else None


@dataclass
class Sess:
    sid: str
    start_ms: int
    lead: list[Msg] = field(default_factory=list)
    agent: list[Msg] = field(default_factory=list)  # one subagent file, if any
    rollup: tuple[int, int] | None = None  # the manifest's usage (input, output)
    fault: str = "none"  # of the lead file, or of the folder's name


@st.composite
def messages(draw, tag: str) -> list[Msg]:
    out = []
    for i in range(draw(st.integers(0, 3))):
        mid = draw(st.sampled_from([f"m-{tag}-{i}", None]))
        ts = draw(st.sampled_from([T0 + 1000 * i, T0 + 7, "not a time"]))
        model = draw(st.sampled_from(["gpt-4o", "glm-\ud83d", "kimi"]))
        cost = draw(st.sampled_from([None, 0.0, 0.25, 1e308]))
        out.append(Msg(mid, 2 * i + 1, ts, model, draw(st.integers(1, 5000)), draw(st.integers(0, 50)), cost))
    return out


@st.composite
def ledgers(draw) -> list[Sess]:
    sessions: list[Sess] = []
    for n in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["new", "new", "copy", "fork"])) if sessions else "new"
        sid, start = f"{T0 + n * 60_000}_s{n}", T0 + n * 60_000
        if kind == "new":
            s = Sess(sid, start, draw(messages(f"{n}")), draw(messages(f"{n}a")))
            if draw(st.booleans()):
                s.rollup = (draw(st.integers(1, 900)), draw(st.integers(1, 9)))
        else:  # a renamed copy, or a fork (its messages so far, then its own)
            base = draw(st.sampled_from(sessions))
            extra = draw(messages(f"{n}f")) if kind == "fork" else []
            after = max((m.index for m in base.lead), default=-1) + 1  # the fork's own messages follow its parent's
            extra = [replace(m, index=m.index + after) for m in extra]  # at their real index in the file
            s = Sess(sid, start, [*base.lead, *extra], list(base.agent), base.rollup)
        s.fault = draw(st.sampled_from(FAULTS))
        sessions.append(s)
    return sessions


def message_doc(m: Msg) -> dict:
    doc: dict = {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "ts": m.ts}
    if m.mid is not None:
        doc["id"] = m.mid
    doc["modelInfo"] = {"id": m.model, "provider": "openai"}
    doc["metrics"] = {"inputTokens": m.input, "outputTokens": m.output, "cacheReadTokens": 0, "cacheWriteTokens": 0}
    if m.cost is not None:
        doc["metrics"]["cost"] = m.cost
    return doc


def with_users(msgs: list[Msg]) -> list[dict]:
    """User messages between, so each assistant message sits at its own index."""
    out: list[dict] = []
    for m in msgs:
        while len(out) < m.index:
            out.append({"role": "user", "content": [{"type": "text", "text": "go"}], "ts": T0})
        out.append(message_doc(m))
    return out


def write(sessions_dir: Path, s: Sess) -> Path:
    name = os.fsdecode(os.fsencode(s.sid) + b"\xff") if s.fault == "odd_name" else s.sid
    folder = sessions_dir / name
    folder.mkdir(parents=True)
    started = f"2026-11-30T08:{(s.start_ms - T0) // 60_000:02d}:00.000Z"
    fields: dict = {}
    if s.rollup is not None:
        usage = {"inputTokens": s.rollup[0], "outputTokens": s.rollup[1], "cacheReadTokens": 0, "cacheWriteTokens": 0}
        fields["metadata"] = {"title": "t", "usage": usage}
    (folder / f"{name}.json").write_bytes(dumps(manifest(name, started, **fields)))
    lead = folder / f"{name}.messages.json"
    data = dumps(messages_doc(name, with_users(s.lead)))
    if s.fault == "fifo":
        os.mkfifo(lead)
    else:
        lead.write_bytes(data[: len(data) // 2] if s.fault == "truncated" else data)
    if s.agent:
        agent_doc = messages_doc(f"{name}__a", with_users(s.agent), agent="subagent")
        (folder / "agent_1.messages.json").write_bytes(dumps(agent_doc))
    return folder


def oracle(sessions: list[Sess]) -> tuple[int, int, int, float]:
    """(calls, input, output, reported cost), each call once: by its id, else by its content and its
    file's name."""
    seen: dict[tuple, tuple[int, int, float]] = {}
    for s in sessions:
        files = [("lead", s.lead if s.fault not in ("truncated", "fifo") else []), ("agent_1", s.agent)]
        any_metrics = False
        for within, msgs in files:
            for m in msgs:
                key = ("id", m.mid) if m.mid else (within, m.index, m.ts, m.model, m.input, m.output, m.used_cost)
                seen.setdefault(key, (m.input, m.output, m.used_cost or 0.0))
                any_metrics = True
        if s.rollup is not None and not any_metrics:
            seen[("rollup", s.sid)] = (*s.rollup, 0.0)
    calls = seen.values()
    return len(seen), sum(v[0] for v in calls), sum(v[1] for v in calls), round(sum(v[2] for v in calls), 9)


def totals(ledger: Ledger) -> tuple[int, int, int, float]:
    sql = "SELECT COUNT(*), TOTAL(input), TOTAL(output), TOTAL(cost) FROM calls WHERE counted=1"
    n, i, o, cost = ledger.query(sql)[0]
    return n, int(i), int(o), round(cost, 9)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ledgers(), st.data())
def test_whole_ledger_totals_equal_an_independent_sum(sessions, data):
    want = oracle(sessions)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "sessions"
        root.mkdir()
        folders = [write(root, s) for s in sessions]
        path = Path(tmp) / "state" / "ledger.db"
        ledger = Ledger(path)
        ledger.refresh(root)
        assert totals(ledger) == want
        ledger.close()
        ledger = Ledger(path)  # written, closed, reopened
        assert totals(ledger) == want
        gone = data.draw(st.lists(st.sampled_from(folders), unique=True), label="removed")
        for folder in gone:
            shutil.rmtree(folder)
        ledger.refresh(root)
        assert totals(ledger) == want  # removed from disk: still counted
        ledger.close()
