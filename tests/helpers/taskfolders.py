"""Test helpers: task folders written as the Cline extension (before and after v3.40's temp-file writes, with
and without `modelInfo`), Roo Code (from v3.29.5) and Kilo Code (legacy) write them, from the types in
docs/formats/editor-tasks.md; and sums computed from those files independently of trayburn's reader."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EXT = {"cline": "saoudrizwan.claude-dev", "roo": "rooveterinaryinc.roo-cline", "kilo": "kilocode.kilo-code"}
INCLUSIVE_CLINE = {"openai", "litellm", "ollama", "lmstudio", "requesty"}


def compact(doc: Any) -> bytes:
    """JSON.stringify(x): one line, no spaces."""
    return json.dumps(doc, separators=(",", ":")).encode()


def say(ts: int, what: str, text: str | None = None, model: tuple[str, str] | None = None, **extra) -> dict:
    m: dict[str, Any] = {"ts": ts, "type": "say", "say": what}
    if text is not None:
        m["text"] = text
    if model is not None:  # Cline 3.37+: on every message `say` creates
        m["modelInfo"] = {"modelId": model[0], "providerId": model[1], "mode": "act"}
    m.update(extra)
    return m


def request(
    ts: int, i: int | None = None, o: int | None = None, cw: int | None = None, cr: int | None = None,
    cost: float | None = None, model: tuple[str, str] | None = None, cwd: str | None = "/work/proj", **info,
) -> dict:  # fmt: skip
    """One `api_req_started`, its usage JSON as a string (parsed twice by a reader)."""
    body: dict[str, Any] = {}
    if cwd is not None:
        body["request"] = f"<task>\nx\n</task>\n\n# Current Working Directory ({cwd}) Files\nREADME.md"
    for k, v in (("tokensIn", i), ("tokensOut", o), ("cacheWrites", cw), ("cacheReads", cr), ("cost", cost)):
        if v is not None:
            body[k] = v
    body.update(info)
    return say(ts, "api_req_started", json.dumps(body), model)


def usage_say(ts: int, what: str, i=0, o=0, cw=0, cr=0, cost=0.0, **extra) -> dict:
    """`deleted_api_reqs` / `api_req_deleted` / `subagent_usage`: a sum of usage."""
    body = {"tokensIn": i, "tokensOut": o, "cacheWrites": cw, "cacheReads": cr, "cost": cost, **extra}
    return say(ts, what, json.dumps(body))


@dataclass
class TaskWriter:
    """Writes one app's storage folder (`<gs>`) as that app and version family does."""

    root: Path  # the folder holding tasks/ (a globalStorage/<extension> folder, or ~/.cline/data)
    app: str = "cline"
    atomic: bool = True  # Cline >= 3.40: <file>.tmp.<ms>.<rand>.json then rename; before: in place
    history: list[dict] = field(default_factory=list)

    def folder(self, task: str) -> Path:
        return self.root / "tasks" / task

    def write(self, task: str, messages: list[dict], meta: dict | None = None, item: dict | None = None) -> Path:
        folder = self.folder(task)
        folder.mkdir(parents=True, exist_ok=True)
        data = compact(messages)
        target = folder / "ui_messages.json"
        if self.app != "cline":  # Roo/Kilo safeWriteJson: a lock folder, .new_ then rename; the .bak_ left
            (folder / "ui_messages.json.lock").mkdir(exist_ok=True)
            (folder / ".ui_messages.json.bak_1764600000000_ab12.tmp").write_bytes(b"[{not json")
            tmp = folder / ".ui_messages.json.new_1764600000001_cd34.tmp"
            tmp.write_bytes(data)
            os.replace(tmp, target)
            (folder / "ui_messages.json.lock").rmdir()
            (folder / "checkpoints").mkdir(exist_ok=True)  # Roo's shadow git inside the task: never walked
            (folder / "checkpoints" / "ui_messages.json").write_bytes(b"[]")
        elif self.atomic:
            tmp = folder / "ui_messages.json.tmp.1764600000000.x7k2.json"
            tmp.write_bytes(data)
            os.replace(tmp, target)
            (folder / "api_conversation_history.json.tmp.1764600000002.q9.json").write_bytes(b"[{half")  # left over
        else:  # pre-3.40: fs.writeFile in place
            with open(target, "wb") as f:
                f.write(data)
        if meta is not None:
            (folder / "task_metadata.json").write_text(json.dumps(meta, indent=2))
        if item is not None:
            self.history = [h for h in self.history if h["id"] != task] + [item]
            if self.app == "cline":
                state = self.root / "state"
                state.mkdir(parents=True, exist_ok=True)
                (state / "taskHistory.json").write_bytes(compact(self.history))
            else:  # Roo >= 3.49
                (folder / "history_item.json").write_bytes(compact(item))
        return folder

    def api_history(self, task: str, models: list[str], workspace: str = "/work/roo") -> None:
        """Roo/Kilo's api_conversation_history.json: each request's environment details name the model."""
        msgs = []
        for m in models:
            env = f"<environment_details>\n# Current Workspace Directory ({workspace}) Files\n\n<model>{m}</model>\n"
            msgs.append({"role": "user", "content": [{"type": "text", "text": "go"}, {"type": "text", "text": env}]})
            msgs.append({"role": "assistant", "content": [{"type": "text", "text": "ok"}]})
        (self.folder(task) / "api_conversation_history.json").write_bytes(compact(msgs))


def storage(home: Path, app: str, flavour: str = "Code") -> Path:
    """`<gs>` on Linux for an editor flavour."""
    return home / ".config" / flavour / "User" / "globalStorage" / EXT[app]


# ---- the independent sums -----------------------------------------------------------------------


def expected_calls(app: str, ui: list[dict], held_removed: tuple = (0, 0, 0, 0, 0.0)) -> tuple:
    """(calls, input, output, cache_read, cache_write, reported cost) of a task read once, from its messages,
    written here from the rules in docs/formats/editor-tasks.md (not trayburn's code): input in trayburn's meaning
    includes the cache tokens; a cost of 0 with tokens is not reported; restores' sums counted less `held_removed`."""
    calls = 0
    sums = [0, 0, 0, 0]
    cost = 0.0
    for m in ui:
        kind = m.get("say")
        if kind == "condense_context":
            c = m["contextCondense"]["cost"]
            calls += 1
            cost += c
            continue
        if kind not in ("api_req_started", "deleted_api_reqs", "api_req_deleted", "subagent_usage"):
            continue
        try:
            u = json.loads(m["text"])
        except (ValueError, KeyError):
            continue
        i, o = u.get("tokensIn", 0), u.get("tokensOut", 0)
        cr, cw = u.get("cacheReads", 0), u.get("cacheWrites", 0)
        if kind in ("deleted_api_reqs", "api_req_deleted"):
            i, o, cr, cw = i - held_removed[0], o - held_removed[1], cr - held_removed[2], cw - held_removed[3]
        provider = (m.get("modelInfo") or {}).get("providerId")
        if app == "cline" and provider in INCLUSIVE_CLINE:
            if provider == "openai":
                cw = 0
            total_in = i
        elif app == "cline" or i < cr + cw:
            total_in = i + cr + cw
        else:
            total_in = i
        c = u.get("cost")
        if kind in ("deleted_api_reqs", "api_req_deleted") and c is not None:
            c -= held_removed[4]
        if not (total_in or o or cr or cw or c):
            continue
        calls += 1
        sums = [sums[0] + total_in, sums[1] + o, sums[2] + cr, sums[3] + cw]
        if c and provider != "openai-codex":
            cost += c
    return (calls, *sums, cost)


def add(*sums: tuple) -> tuple:
    return tuple(sum(x) for x in zip(*sums, strict=True))
