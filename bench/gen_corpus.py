"""Generate a synthetic corpus of Cline CLI sessions, in the exact shape the real CLI writes.

    python bench/gen_corpus.py --sessions 5000 --calls 20 --out bench/out/corpus

writes OUT/data/sessions/<id>/<id>.json and <id>.messages.json (so `CLINE_DIR=OUT trayburn today`
works), plus a few subagent (`agent_*.messages.json`) and teammate (`<agent>__<task>.messages.json`)
files, forks that copy part of their parent, killed sessions and rollup-only sessions.

Files are `JSON.stringify(x, null, 2)` + newline, as Cline writes them (checked against
`json.dumps(indent=2, ensure_ascii=False)` on the first session). Deterministic for a given seed.
OUT/corpus.json records the parameters and what a correct reader should count.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import time
import uuid
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime
from pathlib import Path

import msgspec

GENERATOR_VERSION = 1
STAMP = "corpus.json"
END_MS = 1796083200000  # 2026-12-01T00:00:00Z: sessions end before it
SPAN_MS = 60 * 86400 * 1000  # spread over the 60 days before
ID_CHARS = "0123456789abcdefghijklmnopqrstuvwxyz"
MSG_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"

# (provider, model id, family, prices per token or None when the route does not price calls, share)
ROUTES = [
    ("anthropic", "claude-sonnet-4-5", "claude-sonnet", (3e-6, 15e-6, 0.3e-6, 3.75e-6), 40),
    ("openai-compatible", "gpt-4o", None, None, 20),
    ("deepseek", "deepseek-chat", None, (0.27e-6, 1.1e-6, 0.07e-6, 0.27e-6), 20),
    ("cline-pass", "z-ai/glm-5.2", None, (0, 0, 0, 0), 10),
    ("openrouter", "anthropic/claude-sonnet-4.5", "claude-sonnet", (3e-6, 15e-6, 0.3e-6, 3.75e-6), 10),
]
WORDS = [
    "self",
    "request",
    "response",
    "payload",
    "config",
    "session",
    "ledger",
    "value",
    "result",
    "items",
    "index",
    "count",
    "total",
    "cache",
    "token",
    "model",
    "price",
    "report",
    "folder",
    "path",
    "stats",
    "error",
    "reason",
    "handle",
    "parse",
    "read",
    "write",
    "update",
    "refresh",
    "build",
    "render",
    "window",
    "menu",
    "icon",
    "state",
    "query",
    "rows",
    "calls",
    "files",
    "manifest",
    "messages",
    "agent",
    "cost",
    "usage",
]
SYSTEM_PROMPT_PARAS = [
    "You are Cline, an AI coding agent. Your primary goal is to assist users with various coding tasks by "
    "leveraging your knowledge and the tools at your disposal.",
    "Always gather all the necessary context before starting to work on a task. For example, if you are "
    "generating a unit test or new code, make sure you understand the requirement, the naming conventions, "
    "frameworks and libraries used and aligned in the current codebase.",
    "Review each question carefully and answer it with detailed, accurate information. If you need more "
    "information, use one of the available tools or ask for clarification instead of making assumptions.",
    "- Always adhere to existing code conventions and patterns.\n- Use only libraries and frameworks that are "
    "confirmed to be in use in the current codebase.\n- Provide complete and functional code.",
]


@dataclass
class Expected:
    """What a correct reader finds in the corpus."""

    sessions: int = 0
    files: int = 0  # manifests + messages files
    bytes: int = 0
    calls: int = 0  # distinct model calls (forks' copies counted once, rollups included)
    subagent_files: int = 0
    teammate_files: int = 0
    forks: int = 0
    rollups: int = 0
    killed: int = 0
    reported_cost: float = 0.0  # sum of reported costs over distinct calls

    def to_json(self) -> dict:
        return {**asdict(self), "reported_cost": round(self.reported_cost, 6)}


@dataclass
class Params:
    sessions: int
    calls: int
    seed: int = 1
    version: int = GENERATOR_VERSION
    today_share: float = 0.0  # > 0: that share of the sessions runs today (see `generate`)
    day: str = ""  # the local day "today" was when such a corpus was made


# ---- text pools (built once; tool results pick from them) --------------------------------------------


def _code_line(rng: random.Random) -> str:
    a, b, c = rng.choice(WORDS), rng.choice(WORDS), rng.choice(WORDS)
    kind = rng.randrange(6)
    indent = " " * (4 * rng.randrange(3))
    if kind == 0:
        return f"{indent}def {a}_{b}(self, {c}, timeout=30):"
    if kind == 1:
        return f'{indent}{a} = self.{b}.get("{c}", {rng.randrange(1000)})'
    if kind == 2:
        return f"{indent}for {a} in {b}_{c}:"
    if kind == 3:
        return f'{indent}log.info("{a} {b}: %s", {c})'
    if kind == 4:
        return f"{indent}return {a}.{b}({c})"
    return f"{indent}# {a} {b} {c} — {rng.choice(WORDS)}"


def _pool(rng: random.Random) -> dict[str, list[str]]:
    files, outputs = [], []
    for _ in range(96):
        n = int(rng.lognormvariate(4.2, 0.6))  # ~70 lines median
        files.append("\n".join(f"{i + 1} | {_code_line(rng)}" for i in range(n)))
    for _ in range(48):
        n = int(rng.lognormvariate(3.3, 0.8))
        lines = [
            f"tests/test_{rng.choice(WORDS)}.py::test_{rng.choice(WORDS)}_{rng.choice(WORDS)} PASSED" for _ in range(n)
        ]
        outputs.append("\n".join(lines) + f"\n{n} passed in {rng.uniform(0.1, 9):.2f}s\n")
    prompt = "\n\n".join(SYSTEM_PROMPT_PARAS * 6)
    return {"files": files, "outputs": outputs, "system": [prompt]}


# ---- one session --------------------------------------------------------------------------------------


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _msg_id(rng: random.Random) -> str:
    return "msg_" + "".join(rng.choices(MSG_CHARS, k=8))


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _num(x: float) -> float | int:
    """A cost as JSON.stringify prints it: 0 is `0`; no exponent notation (values ≥ 1e-4 or 0)."""
    x = round(x, 12)
    return 0 if x == 0 else max(x, 0.0001)


class SessionWriter:
    def __init__(self, pool: dict, sessions_dir: Path, calls: int):
        self.pool, self.dir, self.calls = pool, sessions_dir, calls
        self.dated = False  # set each file's mtime just after its session's last call
        self.expected = Expected()
        self.recent: list[tuple[str, list]] = []  # (sid, lead messages) of recent sessions, for forks

    # -- messages

    def _tool(self, rng: random.Random, cwd: str, tid: str) -> tuple[dict, dict]:
        """A tool_use block and the tool_result block answering it."""
        kind = rng.choices(
            ["read_files", "run_commands", "search_codebase", "editor", "fetch_web_content"], [40, 30, 12, 14, 4]
        )[0]
        if kind == "read_files":
            path = f"{cwd}/src/{rng.choice(WORDS)}/{rng.choice(WORDS)}.py"
            args = {"files": [{"path": path}]}
            result: object = [{"query": path, "result": rng.choice(self.pool["files"]), "success": True}]
        elif kind == "run_commands":
            cmds = (
                ["python -m pytest -q"] if rng.random() < 0.5 else [f"grep -rn {rng.choice(WORDS)} src", "git status"]
            )
            cmds_arg: object = cmds if rng.random() < 0.8 else json.dumps(cmds)
            args = {"commands": cmds_arg}
            result = [{"query": c, "result": rng.choice(self.pool["outputs"]), "success": True} for c in cmds]
        elif kind == "search_codebase":
            q = f"def {rng.choice(WORDS)}"
            args = {"queries": [q]}
            result = [{"query": q, "result": rng.choice(self.pool["files"])[:2000], "success": True}]
        elif kind == "editor":
            old = rng.choice(self.pool["files"])[:600]
            args = {
                "command": "str_replace",
                "path": f"{cwd}/src/{rng.choice(WORDS)}.py",
                "old_str": old,
                "new_str": old.replace("self", "this"),
            }
            result = f"The file {args['path']} has been edited.\n" + old[:1500]
        else:
            url = f"https://docs.example.org/{rng.choice(WORDS)}/{rng.choice(WORDS)}"
            args = {"requests": [{"url": url, "prompt": "Summarise the API"}]}
            result = [{"query": url, "result": rng.choice(self.pool["files"]), "success": True}]
        use = {"type": "tool_use", "id": tid, "name": kind, "input": args}
        return use, {"type": "tool_result", "tool_use_id": tid, "name": kind, "content": result}

    def _metrics(self, rng: random.Random, route: tuple, k: int) -> dict:
        prices = route[3]
        inp = 9000 + 2600 * k + rng.randrange(800)
        out = 40 + rng.randrange(900)
        cached = route[0] in ("anthropic", "openrouter", "deepseek")
        read = int(inp * rng.uniform(0.6, 0.9)) if cached and k else 0
        write = rng.randrange(200, 3000) if cached else 0
        m = {"inputTokens": inp, "outputTokens": out, "cacheReadTokens": read, "cacheWriteTokens": write}
        if prices is not None:
            pi, po, pr, pw = prices
            m["cost"] = _num((inp - read - write) * pi + out * po + read * pr + write * pw)
        return m

    def _conversation(self, rng, sid, route, cwd, ts, n_calls, first_text, metrics=True, spawn=()):
        """User prompt, then n_calls assistant calls, each but the last followed by tool results."""
        provider, model, family = route[0], route[1], route[2]
        info = {"id": model, "provider": provider} | ({"family": family} if family else {})
        msgs = [{"id": _uuid(rng), "role": "user", "content": [{"type": "text", "text": first_text}], "ts": ts}]
        spawn = list(spawn)
        for k in range(n_calls):
            ts += rng.randrange(800, 40000)
            content: list[dict] = []
            if rng.random() < 0.2:
                content.append({"type": "thinking", "thinking": " ".join(rng.choices(WORDS, k=60))})
            if rng.random() < 0.5 or k == n_calls - 1:
                content.append({"type": "text", "text": " ".join(rng.choices(WORDS, k=rng.randrange(8, 80)))})
            results = []
            if k < n_calls - 1:
                if spawn:
                    task = spawn.pop(0)
                    tid = f"toolu_{k:04d}_0"
                    content.append(
                        {
                            "type": "tool_use",
                            "id": tid,
                            "name": "spawn_agent",
                            "input": {"systemPrompt": "You are a sub-agent. Be brief.", "task": task},
                        }
                    )
                    results.append(
                        {
                            "type": "tool_result",
                            "tool_use_id": tid,
                            "name": "spawn_agent",
                            "content": json.dumps({"text": "done", "iterations": 3, "finishReason": "completed"}),
                        }
                    )
                else:
                    for j in range(2 if rng.random() < 0.15 else 1):
                        use, res = self._tool(rng, cwd, f"toolu_{k:04d}_{j}")
                        content.append(use)
                        results.append(res)
            msg = {"id": _msg_id(rng), "role": "assistant", "content": content, "ts": ts, "modelInfo": info}
            if metrics:
                msg["metrics"] = self._metrics(rng, route, k)
            msgs.append(msg)
            for res in results:  # parallel tool calls: one user message per result
                ts += rng.randrange(50, 3000)
                msgs.append({"id": _msg_id(rng), "role": "user", "content": [res], "ts": ts})
        return msgs, ts

    def _doc(self, sid: str, agent: str, file_sid: str, ts: int, msgs: list, extra: dict) -> dict:
        origin = {"source": "cli", "mode": "user" if agent == "lead" else agent, "sessionId": file_sid}
        doc = {
            "version": 1,
            "updated_at": _iso(ts),
            "agent": agent,
            "sessionId": file_sid,
            **extra,
            "origin": origin | ({"parentThreadId": sid} if agent != "lead" else {}) | {"version": "3.0.65"},
            "messages": msgs,
        }
        if agent == "lead":
            doc["system_prompt"] = self.pool["system"][0]
        return doc

    def session(self, i: int, rng: random.Random, start: int) -> None:
        e = self.expected
        sid = f"{start}_{''.join(rng.choices(ID_CHARS, k=5))}"
        folder = self.dir / sid
        folder.mkdir(parents=True, exist_ok=True)
        route = rng.choices(ROUTES, [r[4] for r in ROUTES])[0]
        cwd = f"/home/dev/projects/{rng.choice(WORDS)}-{rng.choice(WORDS)}"
        title = f"Fix the {rng.choice(WORDS)} {rng.choice(WORDS)} when the {rng.choice(WORDS)} is empty"
        fate = rng.random()
        killed, rollup = fate < 0.005, 0.005 <= fate < 0.008
        fork = None if killed or rollup or not self.recent or rng.random() >= 0.01 else rng.choice(self.recent)
        n_sub = rng.choice([1, 2]) if rng.random() < 0.03 and not (killed or rollup) else 0
        teammate = rng.random() < 0.005 and not (killed or rollup)
        files: list[tuple[Path, dict]] = []

        spawn_tasks = [f"Inspect the {rng.choice(WORDS)} module and report." for _ in range(n_sub)]
        msgs, end = self._conversation(
            rng,
            sid,
            route,
            cwd,
            start + 200,
            self.calls,
            f'<user_input mode="act">{title}</user_input>',
            metrics=not rollup,
            spawn=spawn_tasks,
        )
        copied = 0
        if fork:
            parent_msgs = fork[1]
            cut = next(
                (j for j in range(len(parent_msgs) // 2, len(parent_msgs)) if parent_msgs[j]["role"] == "assistant"),
                len(parent_msgs),
            )
            head = parent_msgs[:cut]
            copied = sum(1 for m in head if "metrics" in m)
            tail = [m for m in msgs[1:]]
            # keep self.calls model calls in this file: drop as many of our own as we copied
            own_calls = [j for j, m in enumerate(tail) if m["role"] == "assistant"]
            tail = tail[own_calls[copied] :] if copied < len(own_calls) else []
            msgs = head + tail
            e.forks += 1
        if killed:  # stream cut mid-reply: the last assistant message has no metrics
            msgs[-1].pop("metrics", None)
        calls = [m["metrics"] for m in msgs if "metrics" in m]
        own = calls[copied:]
        e.calls += len(own)
        e.reported_cost += sum(m.get("cost", 0) for m in own)
        files.append((folder / f"{sid}.messages.json", self._doc(sid, "lead", sid, end, msgs, {})))

        usage = {
            "inputTokens": sum(m["inputTokens"] for m in calls),
            "outputTokens": sum(m["outputTokens"] for m in calls),
            "cacheReadTokens": sum(m["cacheReadTokens"] for m in calls),
            "cacheWriteTokens": sum(m["cacheWriteTokens"] for m in calls),
            "totalCost": _num(sum(m.get("cost", 0) for m in calls)),
        }
        if rollup:
            usage = {
                "inputTokens": 52000,
                "outputTokens": 1800,
                "cacheReadTokens": 0,
                "cacheWriteTokens": 0,
                "totalCost": _num(0.18 if route[3] else 0),
            }
            e.calls += 1
            e.rollups += 1
            e.reported_cost += usage["totalCost"] if route[3] else 0
        agg = dict(usage)
        for s in range(n_sub):
            aid = f"agent_{start + 300 + s}_{''.join(rng.choices(ID_CHARS, k=6))}"
            sub, _ = self._conversation(
                rng,
                sid,
                route,
                cwd,
                start + 300 + s,
                rng.randrange(2, 6),
                spawn_tasks[s] if s < len(spawn_tasks) else "Help.",
            )
            files.append(
                (
                    folder / f"{aid}.messages.json",
                    self._doc(sid, "subagent", f"{sid}__{aid}", end, sub, {"taskType": "subagent_task"}),
                )
            )
            sub_calls = [m["metrics"] for m in sub if "metrics" in m]
            e.calls += len(sub_calls)
            e.reported_cost += sum(m.get("cost", 0) for m in sub_calls)
            e.subagent_files += 1
        if teammate:
            agent_id, task = "worker", "".join(rng.choices(MSG_CHARS[:62], k=6))
            team, _ = self._conversation(rng, sid, route, cwd, start + 400, rng.randrange(2, 5), "Do your part.")
            files.append(
                (
                    folder / f"{agent_id}__{task}.messages.json",
                    self._doc(
                        sid, "teammate", f"{sid}__teamtask__{agent_id}__{task}", end, team, {"taskType": "team_task"}
                    ),
                )
            )
            team_calls = [m["metrics"] for m in team if "metrics" in m]
            e.calls += len(team_calls)
            e.reported_cost += sum(m.get("cost", 0) for m in team_calls)
            agg = {
                k: (v + sum(m.get(k if k != "totalCost" else "cost", 0) for m in team_calls)) for k, v in agg.items()
            }
            agg["totalCost"] = _num(agg["totalCost"])
            e.teammate_files += 1

        meta: dict = {"sessionHistoryOrigin": {"mode": "user", "version": "3.0.65"}, "title": title}
        if not killed:
            meta |= {
                "totalCost": usage["totalCost"],
                "aggregatedAgentsCost": agg["totalCost"],
                "usage": usage,
                "aggregateUsage": agg,
            }
        if fork:
            meta["fork"] = {"forkedFromSessionId": fork[0], "forkedAt": _iso(start)}
        if rng.random() < 0.6:
            meta["git"] = {"url": f"git@github.com:dev/{cwd.rsplit('/', 1)[1]}.git", "branch": "main"}
        manifest = {
            "version": 1,
            "session_id": sid,
            "source": "cli",
            "pid": 20000 + rng.randrange(40000),
            "started_at": _iso(start),
        }
        if not killed:
            manifest |= {"ended_at": _iso(end + 300), "exit_code": 0}
        manifest |= {
            "status": "running" if killed else "completed",
            "interactive": rng.random() < 0.5,
            "provider": route[0],
            "model": route[1],
            "cwd": cwd,
            "workspace_root": cwd,
        }
        if teammate:
            manifest["team_name"] = f"team-{''.join(rng.choices(MSG_CHARS[:62], k=5))}"
        manifest |= {
            "enable_tools": True,
            "enable_spawn": True,
            "enable_teams": bool(teammate),
            "prompt": title,
            "metadata": meta,
            "messages_path": str(folder / f"{sid}.messages.json"),
        }
        files.insert(0, (folder / f"{sid}.json", manifest))
        e.killed += killed
        e.sessions += 1
        for path, doc in files:
            data = encode(doc)
            if i == 0:
                assert data == (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode(), "format drifted"
            path.write_bytes(data)
            if self.dated:  # as Cline leaves it: written last just after its last call
                os.utime(path, ns=((end + 1000) * 10**6,) * 2)
            e.files += 1
            e.bytes += len(data)
        self.recent = (self.recent + [(sid, msgs)])[-50:]


def encode(doc: object) -> bytes:
    """`JSON.stringify(doc, null, 2) + "\\n"` (for the values this generator produces)."""
    return msgspec.json.format(msgspec.json.encode(doc), indent=2) + b"\n"


# ---- the corpus ---------------------------------------------------------------------------------------


def sessions_dir(out: Path) -> Path:
    return Path(out) / "data" / "sessions"


def generate(out: Path, sessions: int, calls: int, seed: int = 1, today_share: float = 0.0) -> Expected:
    """Write the corpus into OUT (replacing what was there) and return what it holds.

    `today_share` > 0: that share of the sessions starts today (local time, before now) and the rest over
    the 60 days before today, and each file's mtime is set just after its session's last call, as Cline
    would have left it (a corpus for `today` first; see bench_cold.py)."""
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    target = sessions_dir(out)
    target.mkdir(parents=True)
    writer = SessionWriter(_pool(random.Random(seed)), target, calls)
    rng = random.Random(f"{seed}:starts")
    day = ""
    if today_share > 0:
        writer.dated = True
        midnight = int(datetime.combine(date.today(), datetime.min.time()).timestamp() * 1000)
        now = int(time.time() * 1000)
        n_today = round(sessions * today_share)
        latest = max(midnight + 1, now - 3600 * 1000)  # today's sessions end before now (an hour of calls)
        old = [rng.randrange(midnight - SPAN_MS, midnight - 3600 * 1000) for _ in range(sessions - n_today)]
        starts = sorted(old) + sorted(rng.randrange(midnight, latest) for _ in range(n_today))
        day = date.today().isoformat()
    else:
        starts = sorted(rng.randrange(END_MS - SPAN_MS, END_MS - 3 * 3600 * 1000) for _ in range(sessions))
    for i, start in enumerate(starts):
        writer.session(i, random.Random(f"{seed}:{i}"), start)
    params = Params(sessions, calls, seed, today_share=today_share, day=day)
    stamp = {"params": asdict(params), "expected": writer.expected.to_json()}
    (out / STAMP).write_text(json.dumps(stamp, indent=2) + "\n")
    return writer.expected


def load_stamp(out: Path) -> dict | None:
    try:
        return json.loads((Path(out) / STAMP).read_text())
    except (OSError, ValueError):
        return None


def grow(messages_path: Path, manifest_path: Path, calls: int, seed: int = 7) -> int:
    """Append `calls` model calls to a lead messages file and update its manifest, rewriting both in place
    as Cline does (open without truncation, one write, truncate). Returns the calls added."""
    rng = random.Random(seed)
    doc = msgspec.json.decode(messages_path.read_bytes())
    manifest = msgspec.json.decode(manifest_path.read_bytes())
    route = next((r for r in ROUTES if r[1] == manifest["model"]), ROUTES[0])
    writer = SessionWriter(_pool(random.Random(seed)), messages_path.parent.parent, calls)
    ts = doc["messages"][-1]["ts"]
    more, ts = writer._conversation(rng, doc["sessionId"], route, manifest["cwd"], ts, calls, "Now also do this.")
    doc["messages"] += more
    doc["updated_at"] = _iso(ts)
    manifest["status"] = "completed"
    manifest["ended_at"] = _iso(ts + 100)
    for path, obj in ((messages_path, doc), (manifest_path, manifest)):
        write_in_place(path, encode(obj))
    return calls


def write_in_place(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        os.write(fd, data)
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=5000)
    ap.add_argument("--calls", type=int, default=20, help="model calls per session's lead file")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--today-share", type=float, default=0.0, help="that share of the sessions runs today (0.15: a busy day)"
    )
    ap.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).parent / "out" / "corpus",
        help="the Cline root to write (sessions land in OUT/data/sessions); replaced if present",
    )
    args = ap.parse_args(argv)
    started = time.perf_counter()
    expected = generate(args.out, args.sessions, args.calls, args.seed, today_share=args.today_share)
    print(
        f"wrote {expected.sessions} sessions, {expected.files} files, {expected.bytes / 1e6:.0f} MB, "
        f"{expected.calls} distinct calls into {sessions_dir(args.out)} in {time.perf_counter() - started:.1f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
