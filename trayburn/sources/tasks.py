"""Task folders as a source: the Cline extension before 4.0 (and the old Cline CLI), Roo Code and Kilo Code
(cline-vscode-format.md). One source per app (`feed` "tasks:<app>"), over every place that app keeps
`tasks/<id>/` in (task_places.py).

What counts (the fact sheet's pitfalls, by number):
- one call per `say:"api_req_started"` with usage, keyed `<app>:<task>:<ts>` — its `ts` never changes while
  the entry is rewritten, positions do (3); its `text` is parsed again, a bad one skipped (1); a legacy
  `api_req_finished` adds to the request before it;
- an entry without a cost and without a cancelReason is in flight: counted with what it holds so far, its cost
  estimated, and read again whenever the file changes (2); an entry whose usage is all zero is no call (4);
- a restore's `deleted_api_reqs` / `api_req_deleted` sum counts only what the ledger does not already hold of
  the requests it replaced (5); `subagent_usage` and `condense_context` spend count as calls of their own (6);
- a cost of 0 with tokens is "no price known": estimated and marked, unless the route is flat-rate (7);
- tokens are stored in trayburn's meaning (input includes the cache tokens) per app and provider (8);
- a task id in two places is read from its newest copy only (9);
- the file is re-read only when its stat changes; a file that does not parse keeps the previous figures and
  is retried (11); only the exact file names are looked at, never temp/backup files or `checkpoints/` (12);
- the task index (HistoryItem) gives title, folder and model, and its totals only as the session's rollup,
  which the ledger counts only while the task has no call (13).
Cline 4.x's copy of a legacy task (pitfall 10) is trimmed on the CLI side: `trim_legacy_copy`.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import files as trayburn_files
from .base import MAX_COST, MAX_TOKENS, Call, Known, Seen, SessionRecord, Writer, changed
from .cline_cli.parse import Messages, to_ms
from .task_places import BY_NAME, App, Place

UI = "ui_messages"  # the files' kinds in the ledger
META = "task_metadata"
UI_NAMES = ("ui_messages.json", "claude_messages.json")  # (the second: very old Cline, renamed on its next read)
META_NAME = "task_metadata.json"
# Routes whose cost 0 is the price (a subscription), not "no price known"
FLAT_RATE = frozenset({"openai-codex", "cline-pass", "claude-code"})
# Cline providers whose tokensIn is the whole prompt (cache reads included): the generic OpenAI-compatible
# handler ("openai"), LiteLLM, Ollama, LM Studio. The others report uncached input (Anthropic style).
INCLUSIVE = frozenset({"openai", "litellm", "ollama", "lmstudio", "requesty"})
# Cline's provider ids whose trayburn route differs (Cline's "openai" is any OpenAI-compatible endpoint)
ROUTE = {"openai": "openai-compatible"}
LEGACY_WARNING = b"this is a legacy conversation"
_ENV_DIR = re.compile(r"# Current (?:Working|Workspace) Directory \(([^)\n]{1,4096})\)")
_MODEL_TAG = re.compile(rb"<model>([^<\n]{1,300})</model>")


# ---- the source ---------------------------------------------------------------------------------


@dataclass(slots=True)
class Task:
    """One task id of one app, as the scan found it: its newest copy's files."""

    id: str
    folder: str
    place: Place
    ui: trayburn_files.FileStat | None  # None: the folder is there, the file not (Roo renames it away while saving)
    meta: trayburn_files.FileStat | None = None
    copies: int = 1

    @property
    def sid(self) -> str:
        return f"{self.place.app}:{self.id}"

    @property
    def files(self) -> tuple[trayburn_files.FileStat, ...]:
        return tuple(f for f in (self.ui, self.meta) if f is not None)

    @property
    def newest(self) -> int:
        return max((f.checkpoint.mtime_ns for f in self.files), default=0)


class TaskSource:
    """One app's tasks in all its places."""

    origin: str | None = None

    def __init__(self, app: App, places: Sequence[Place]):
        self.app, self.places = app, list(places)
        self.feed = f"tasks:{app.name}"
        self.tasks: list[Task] = []
        self.problems: dict[str, str] = {}
        self._index: dict[
            str, tuple[trayburn_files.Checkpoint | None, dict[str, dict]]
        ] = {}  # place → its HistoryItems

    def watch_folders(self) -> tuple[str, ...]:
        """A new task is a folder added to a place's `tasks/`."""
        return tuple(str(place.tasks) for place in self.places)

    # ---- stat phase

    def scan(self, settled: Callable[[], Container[str]]) -> Seen:
        by_id: dict[str, Task] = {}
        problems: dict[str, str] = {}
        listed = False
        for place in self.places:
            root = str(place.tasks)
            try:
                entries = list(os.scandir(root))
            except FileNotFoundError:
                continue
            except OSError as exc:
                problems[root] = exc.strerror or str(exc)
                continue
            listed = True
            for entry in entries:
                task = _task(entry, place, problems)
                if task is None:
                    continue
                other = by_id.get(task.id)
                if other is None:
                    by_id[task.id] = task
                else:  # the same task in two places: its newest copy (pitfall 9)
                    best = task if task.ui is not None and task.newest > other.newest else other
                    best.copies = other.copies + 1
                    by_id[task.id] = best
        self.tasks, self.problems = list(by_id.values()), problems
        files = sum(len(t.files) for t in self.tasks)
        # unlisted places change nothing; no place at all (never installed, or gone) is an empty listing
        ok = listed or not problems
        return Seen(listed=ok, sessions=len(self.tasks), files=files, problems=problems)

    def digest(self) -> str | None:
        """Every file the last scan saw with its checkpoint (`sources.base.Digested`): a warm `trayburn today`
        then reads nothing of the ledger for this app (none when it is not installed: an empty scan)."""
        if self.problems:
            return None
        hashed = trayburn_files.blake2b(digest_size=16)
        for t in sorted(self.tasks, key=lambda t: t.id):
            for f in t.files:
                hashed.update(f"{f.path}\0{tuple(f.checkpoint)}\0".encode(errors="surrogateescape"))
        return hashed.hexdigest()

    def trusts_digest(self, known: Mapping[str, Known]) -> bool:
        """A task without its ui file counts the kept copy the ledger knows (`needs_work`): then no digest."""
        return all(t.ui is not None for t in self.tasks)

    def needs_work(self, known: Mapping[str, Known]) -> bool:
        seen = 0
        for t in self.tasks:
            for f in t.files:
                k = known.get(f.path)
                if changed(f, k):
                    return True
                seen += 1
            if t.ui is None:  # (kept as it was: the file comes back)
                seen += sum(1 for n in UI_NAMES if _kept(known, os.path.join(t.folder, n)))
        live = sum(1 for k in known.values() if k.feed == self.feed and not k.gone)
        return live != seen

    # ---- read phase

    def ingest(self, writer: Writer) -> None:
        w = writer
        todo: list[Task] = []
        for t in self.tasks:
            if any(changed(f, w.known.get(f.path)) for f in t.files):
                todo.append(t)
            else:
                self._note(w, t)
        todo.sort(key=lambda t: t.newest, reverse=True)
        for t in todo:
            if w.plan.defer(t.newest):
                self._note(w, t)
                continue
            main = t.ui or t.meta
            if main is None:
                continue
            w.guard(t.sid, main, UI if t.ui else META, lambda t=t: self._read(w, t))  # type: ignore[misc]

    def _note(self, w: Writer, t: Task) -> None:
        for f in t.files:
            w.seen(f.path)
        if t.ui is None:
            for n in UI_NAMES:
                p = os.path.join(t.folder, n)
                if _kept(w.known, p):
                    w.seen(p)
        w.live(t.sid)

    def _read(self, w: Writer, t: Task) -> None:
        self._note(w, t)
        meta = None
        if t.meta is not None:
            raw = _read_any(w, t.meta, t.sid, META)
            meta = _json_of(raw)
            if raw is not None and not isinstance(meta, dict):  # written in place: caught mid-write, retried
                w.failed(t.meta, t.sid, META, "invalid JSON, perhaps caught mid-write")
                meta = None
        item = self._history_item(t)
        if t.ui is None:
            return
        data = _read_any(w, t.ui, t.sid, UI)
        if data is None:
            return
        api_models: list[str] = []
        api_dir = None
        if self.app.name != "cline":  # Roo/Kilo: the model is only in the conversation's environment details
            api_models, api_dir = _roo_env(os.path.join(t.folder, "api_conversation_history.json"), w.max_file_bytes)
        try:
            parsed = parse_task(data, self.app.name, t.id, meta, item, api_models)
        except ValueError as exc:
            w.failed(t.ui, t.sid, UI, str(exc))
            return
        file_id = w.ok(t.ui.path, t.sid, UI, None, t.ui.checkpoint)
        if t.meta is not None and meta is not None:
            w.ok(t.meta.path, t.sid, META, None, t.meta.checkpoint)
        record = SessionRecord(
            t.sid, t.folder, parsed.started_ms, parsed.ended_ms, "completed" if parsed.done else "active",
            title=parsed.title, prompt=parsed.prompt, cwd=parsed.cwd or api_dir, workspace_root=parsed.cwd or api_dir,
            model=parsed.model, provider=parsed.provider, source=_source(self.app, t, meta),
            rollup=parsed.rollup_call(self.app.name, t.id),
        )  # fmt: skip
        fallback = parsed.started_ms or t.ui.checkpoint.mtime_ns // 10**6
        w.session(record, file_id, fallback)
        calls = parsed.calls
        if parsed.restores:
            calls = calls + _restores(w, t.sid, parsed)
        w.calls(t.sid, file_id, "lead", calls, fallback)

    def _history_item(self, t: Task) -> dict | None:
        """The task's HistoryItem: Roo's `tasks/<id>/history_item.json`, else the place's `state/taskHistory.json`."""
        item = _json_of(_plain_read(os.path.join(t.folder, "history_item.json"), 1_000_000))
        if isinstance(item, dict):
            return item
        index_path = os.path.join(str(t.place.path), "state", "taskHistory.json")
        try:
            ckpt: trayburn_files.Checkpoint | None = trayburn_files.stat_file(index_path)
        except OSError:
            return None
        memo = self._index.get(index_path)
        if memo is None or memo[0] != ckpt:
            doc = _json_of(_plain_read(index_path, 256 * 10**6))
            items = {str(i["id"]): i for i in doc if isinstance(i, dict) and "id" in i} if isinstance(doc, list) else {}
            memo = (ckpt, items)
            self._index[index_path] = memo
        return memo[1].get(t.id)


def _task(entry: os.DirEntry, place: Place, problems: dict[str, str]) -> Task | None:
    """A task folder's files (exact names only: temp files, backups, locks and `checkpoints/` are never looked at)."""
    name = entry.name
    if name.startswith(".") or name.startswith("_"):
        return None
    try:
        if not entry.is_dir(follow_symlinks=False):
            return None
    except OSError:
        return None
    folder = entry.path
    ui = meta = None
    for n in UI_NAMES:
        ui = _stat(os.path.join(folder, n), problems)
        if ui is not None:
            break
    if BY_NAME[place.app].name == "cline":
        meta = _stat(os.path.join(folder, META_NAME), problems)
    return Task(name, folder, place, ui, meta)


def _stat(path: str, problems: dict[str, str]) -> trayburn_files.FileStat | None:
    try:
        return trayburn_files.FileStat(path, trayburn_files.stat_file(path))
    except FileNotFoundError:
        return None
    except OSError as exc:
        problems[path] = exc.strerror or str(exc)
        return None


def _kept(known: Mapping[str, Known], path: str) -> bool:
    k = known.get(path)
    return k is not None and not k.gone


def _read_any(w: Writer, f: trayburn_files.FileStat | None, sid: str, kind: str) -> bytes | None:
    """The file's bytes: through the ledger when it changed (so a failure is recorded), else directly (a
    task is read whole when any of its files changed)."""
    if f is None:
        return None
    if changed(f, w.known.get(f.path)):
        got = w.read(f, sid, kind)
        return None if got is None else got[0]
    return _plain_read(f.path, w.max_file_bytes)


def _plain_read(path: str, limit: int) -> bytes | None:
    try:
        return trayburn_files.read(path, limit)[0]
    except (trayburn_files.FileProblem, OSError):
        return None


def _json_of(data: bytes | None) -> Any:
    if data is None:
        return None
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def _roo_env(path: str, limit: int) -> tuple[list[str], str | None]:
    """Roo/Kilo's `<model>` lines and workspace folder, found in the conversation's bytes (never parsed)."""
    data = _plain_read(path, limit)
    if not data:
        return [], None
    models = [m.decode("utf-8", "replace").strip() for m in _MODEL_TAG.findall(data)]
    found = re.search(rb"Current Workspace Directory \(([^)\\\n]{1,4096})\)", data)
    return models, found.group(1).decode("utf-8", "replace") if found else None


def _source(app: App, t: Task, meta: Any) -> str:
    """Cline's tasks: "vscode" from an editor's storage, "cli" from the old CLI's data folder (as its
    environment history says)."""
    if app.name != "cline":
        return app.source
    env = meta.get("environment_history") if isinstance(meta, dict) else None
    host = env[-1].get("host_name") if isinstance(env, list) and env and isinstance(env[-1], dict) else None
    if isinstance(host, str) and "cli" in host.lower():
        return "cli"
    if host is None and "globalStorage" not in t.folder:
        return "cli"
    return app.source


def _restores(w: Writer, sid: str, parsed: Parsed) -> list[Call]:
    """A restore's sum less what the ledger already holds of the requests it removed: those held calls of
    this task (from an earlier read) that the file no longer has, made between the message the task was
    restored to and the restore (pitfall 5)."""
    present = {c.key for c in parsed.calls}
    held_fn = getattr(w, "held", None)
    held = held_fn(sid) if held_fn is not None else []
    orphans = [h for h in held if h[0] not in present and h[1] is not None]  # (an earlier restore's row too)
    calls: list[Call] = []
    for r in parsed.restores:
        after, ts = r.after_ms, r.call.ts_ms or 0
        mine = [h for h in orphans if after < h[1] < ts]
        orphans = [h for h in orphans if h not in mine]
        key, index, _, model, i, o, cr, cw, cost, tools, note, provider = r.call
        i -= sum(h[2] for h in mine)
        o -= sum(h[3] for h in mine)
        cr -= sum(h[4] for h in mine)
        cw -= sum(h[5] for h in mine)
        if cost is not None:
            cost -= sum(h[6] or 0.0 for h in mine)
        i, o, cr, cw = max(i, 0), max(o, 0), max(cr, 0), max(cw, 0)
        cost = None if cost is None else max(round(cost, 12), 0.0)
        if mine and not (i or o or cr or cw or cost):
            continue  # wholly held already
        calls.append(Call(key, index, r.call.ts_ms, model, max(i, cr + cw), o, cr, cw, cost, tools, note, provider))
    return calls


# ---- the format ----------------------------------------------------------------------------------


@dataclass(slots=True)
class Restore:
    call: Call
    after_ms: int  # the ts of the message before it: the point the task was restored to


@dataclass
class Parsed:
    calls: list[Call] = field(default_factory=list)
    restores: list[Restore] = field(default_factory=list)
    started_ms: int | None = None
    ended_ms: int | None = None
    title: str | None = None
    prompt: str | None = None
    cwd: str | None = None
    model: str | None = None
    provider: str | None = None
    done: bool = False
    in_flight: int = 0
    bad_texts: int = 0
    rollup: tuple[int, int, int, int, float | None] | None = None  # the HistoryItem's totals, as stored

    def rollup_call(self, app: str, task: str) -> Call | None:
        if self.rollup is None:
            return None
        i, o, cr, cw, cost = self.rollup
        if not (i or o or cr or cw or cost):
            return None
        return Call(f"{app}:{task}:rollup", -1, None, None, i, o, cr, cw, cost, (), "from the task index (a rollup)")


def _n(value: Any) -> int:
    if type(value) is int and 0 <= value <= MAX_TOKENS:
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_TOKENS:
        return 0
    return int(value)


def _c(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_COST:
        return None
    return float(value)


def _s(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def normalise(app: str, provider: str | None, i: int, o: int, cr: int, cw: int) -> tuple[int, int, int, int]:
    """(input, output, cache_read, cache_write) in trayburn's meaning: input includes the cache tokens (pitfall 8).
    Cline: tokensIn is uncached, except for the generic OpenAI-compatible, LiteLLM and Ollama handlers, which
    pass the whole prompt (and whose `cacheWrites` is DeepSeek's cache-miss count: uncached input, not a write).
    Roo/Kilo since 3.29.5: tokensIn is inclusive; older files follow the provider (Anthropic: uncached), which
    shows when tokensIn is below the cache tokens it would include."""
    if app == "cline":
        if provider in INCLUSIVE:
            if provider == "openai":
                cw = 0
            return max(i, cr + cw), o, cr, cw
        return i + cr + cw, o, cr, cw
    if i >= cr + cw:
        return i, o, cr, cw
    return i + cr + cw, o, cr, cw


def _cost_of(
    cost: float | None, tokens: tuple[int, int, int, int], route: str | None, final: bool
) -> tuple[float | None, str | None]:
    """The cost to store and a note (pitfall 7): 0 with tokens on a priced route is "no price known"."""
    if cost is None:
        return None, None if final else "in flight when read (no cost yet); estimated until the file says more"
    if cost == 0 and any(tokens) and (route or "") not in FLAT_RATE:
        return None, "the extension wrote cost 0 (it had no price for this model); estimated"
    return cost, None


class _ModelHistory:
    """A Cline task's `task_metadata.json` model_usage: the model of a request made at a time."""

    def __init__(self, meta: Any, item: dict | None):
        entries = meta.get("model_usage") if isinstance(meta, dict) else None
        self.entries = sorted(
            ((_n(e.get("ts")), _s(e.get("model_id")), _s(e.get("model_provider_id")))
             for e in entries if isinstance(e, dict) and _s(e.get("model_id"))),
            key=lambda e: e[0],
        ) if isinstance(entries, list) else []  # fmt: skip
        self.fallback = _s(item.get("modelId")) if isinstance(item, dict) else None

    def at(self, ts: int) -> tuple[str | None, str | None]:
        best = None
        for e in self.entries:
            if e[0] <= ts:
                best = e
            else:
                break
        if best is None and self.entries:
            best = self.entries[0]
        return (best[1], best[2]) if best else (self.fallback, None)


def parse_task(
    data: bytes, app: str, task: str, meta: Any = None, item: dict | None = None, api_models: Sequence[str] = ()
) -> Parsed:
    """A `ui_messages.json` → its calls (rows keyed `<app>:<task>:<ts>`), restores and what the session shows.
    Raises ValueError when the file is not a JSON array (caught mid-write, pitfall 11)."""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise ValueError(
            "empty file (being written?)"
            if not data.strip()
            else f"invalid JSON ({str(exc).split(':')[0]}), perhaps caught mid-write"
        ) from None
    if not isinstance(doc, list):
        raise ValueError("not a list of messages")
    out = Parsed()
    history = _ModelHistory(meta, item)
    requests: list[tuple[int, dict, Any, int]] = []  # (ts, usage, message, position) of api_req_started
    extras: list[tuple[str, int, dict, Any, int, int]] = []  # (kind, ts, usage, message, previous ts, position)
    prev_ts = 0
    first_ts = last_ts = None
    for position, m in enumerate(doc):
        if not isinstance(m, dict):
            continue
        ts = to_ms(m.get("ts"))
        if ts is None:
            continue
        first_ts = ts if first_ts is None else first_ts
        last_ts = ts
        say = m.get("say")
        if out.prompt is None and say in ("task", "text") and m.get("type") == "say":
            out.prompt = _s(m.get("text"))
        if say in ("completion_result",) or m.get("ask") == "resume_completed_task":
            out.done = True
        if say in ("api_req_started", "api_req_finished", "deleted_api_reqs", "api_req_deleted", "subagent_usage"):
            try:
                usage = json.loads(m.get("text") or "")
            except (ValueError, TypeError, RecursionError):
                usage = None
            if not isinstance(usage, dict):
                out.bad_texts += 1  # (pitfall 1: this message skipped, the rest kept)
            elif say == "api_req_started":
                requests.append((ts, usage, m, position))
                if out.cwd is None and isinstance(usage.get("request"), str):
                    found = _ENV_DIR.search(usage["request"])
                    out.cwd = found.group(1).strip() if found else None
            elif say == "api_req_finished":
                if requests:  # (merged into the request before it, as combineApiRequests does)
                    base = requests[-1][1]
                    for k in ("tokensIn", "tokensOut", "cacheWrites", "cacheReads", "cost"):
                        if isinstance(usage.get(k), (int, float)):
                            base[k] = usage[k]
            else:
                extras.append((say, ts, usage, m, prev_ts, position))
        elif say == "condense_context" and isinstance(m.get("contextCondense"), dict):
            extras.append(("condense", ts, {"cost": m["contextCondense"].get("cost")}, m, prev_ts, position))
        prev_ts = ts
    out.started_ms = first_ts or (int(task) if task.isdigit() and 1e12 <= int(task) < 1e14 else None)
    out.ended_ms = last_ts
    n_models = len(api_models)
    for index, (ts, u, m, position) in enumerate(requests):
        model, provider = _model_of(
            m, ts, history, api_models[index] if n_models == len(requests) else (api_models[-1] if api_models else None)
        )
        final = _c(u.get("cost")) is not None or _s(u.get("cancelReason")) is not None
        tokens = normalise(
            app,
            provider,
            _n(u.get("tokensIn")),
            _n(u.get("tokensOut")),
            _n(u.get("cacheReads")),
            _n(u.get("cacheWrites")),
        )
        route = ROUTE.get(provider or "", provider)
        cost, note = _cost_of(_c(u.get("cost")), tokens, route, final)
        if not (any(tokens) or cost):
            continue  # no usage (pitfall 4: a request that failed before any token)
        if not final:
            out.in_flight += 1
        out.calls.append(Call(f"{app}:{task}:{ts}", position, ts, model, *tokens, cost, (), note, route))
        out.model, out.provider = model or out.model, route or out.provider
    for kind, ts, u, m, before, position in extras:
        model, provider = _model_of(m, ts, history, api_models[-1] if api_models else None)
        raw = (_n(u.get("tokensIn")), _n(u.get("tokensOut")), _n(u.get("cacheReads")), _n(u.get("cacheWrites")))
        tokens = normalise(app, provider, *raw)
        route = ROUTE.get(provider or "", provider)
        cost, note = _cost_of(_c(u.get("cost")), tokens, route, True)
        if not (any(tokens) or cost):
            continue
        suffix = {"deleted_api_reqs": "restore", "api_req_deleted": "restore", "subagent_usage": "subagents"}.get(
            kind, kind
        )
        why = {"restore": "requests a checkpoint restore removed (their sum)", "subagents": "the subagents' spend",
               "condense": "condensing the context"}[suffix]  # fmt: skip
        call = Call(f"{app}:{task}:{ts}:{suffix}", position, ts, model, *tokens, cost, (), note or why, route)
        if suffix == "restore":
            out.restores.append(Restore(call, before))
        else:
            out.calls.append(call)
    if isinstance(item, dict):
        out.title = _s(item.get("task"))
        out.cwd = out.cwd or _s(item.get("cwdOnTaskInitialization")) or _s(item.get("workspace"))
        out.model = out.model or _s(item.get("modelId"))
        # HistoryItem totals (a rollup): the ledger counts them only while the task has no call
        ri = (
            _n(item.get("tokensIn")),
            _n(item.get("tokensOut")),
            _n(item.get("cacheReads")),
            _n(item.get("cacheWrites")),
        )
        rt = normalise(app, out.provider, *ri)
        out.rollup = (*rt, _cost_of(_c(item.get("totalCost")), rt, out.provider, True)[0])
    if out.title is None and out.prompt:
        out.title = out.prompt.splitlines()[0][:200]
    out.model = out.model or history.fallback or (api_models[-1] if api_models else None)
    return out


def _model_of(m: dict, ts: int, history: _ModelHistory, roo: str | None) -> tuple[str | None, str | None]:
    """A request's model and Cline provider id: its `modelInfo` (Cline 3.37+), else the task's model history at
    its time, else the task index's model; Roo/Kilo: the `<model>` line of its environment details."""
    info = m.get("modelInfo")
    if isinstance(info, dict) and _s(info.get("modelId")):
        return _s(info.get("modelId")), _s(info.get("providerId"))
    model, provider = history.at(ts)
    return model or roo, provider


# ---- Cline 4.x's copy of a legacy task (pitfall 10) ------------------------------------------------


def trim_legacy_copy(messages: Messages, data: bytes) -> Messages:
    """A Cline 4.x session that resumed a legacy task: its messages before the "legacy conversation" warning
    repeat the task's whole spend on one message (counted per request from the task folder instead): their
    calls are left out. A fast bytes test first: every other session costs one search."""
    if LEGACY_WARNING not in data:
        return messages
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return messages
    items = doc.get("messages") if isinstance(doc, dict) else doc
    if not isinstance(items, list):
        return messages
    cut = None
    for index, m in enumerate(items):
        if isinstance(m, dict) and m.get("role") == "user" and _starts_with_warning(m.get("content")):
            cut = index
            break
    if cut is None:
        return messages
    return Messages(messages.agent, [c for c in messages.calls if c.seq > cut])


def _starts_with_warning(content: Any) -> bool:
    text = content if isinstance(content, str) else None
    if isinstance(content, list) and content and isinstance(content[0], dict):
        text = content[0].get("text")
    return isinstance(text, str) and text.lstrip().lower().startswith("warning: " + LEGACY_WARNING.decode())


def now_ms() -> int:
    return time.time_ns() // 10**6
