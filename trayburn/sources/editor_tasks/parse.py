"""An editor task's files, from bytes to calls (docs/formats/editor-tasks.md). No I/O here: the source owns
files and checkpoints.

What counts (the format's pitfalls, by number):
- one call per `say:"api_req_started"` with usage, keyed `<app>:<task>:<ts>` — its `ts` never changes while
  the entry is rewritten, positions do (3); a second entry with the same `ts` is `<ts>#2` (`_unique_keys`);
  its `text` is parsed again, a bad one skipped (1); a legacy `api_req_finished` adds to the request before it;
- an entry without a cost and without a cancelReason is in flight: counted with what it holds so far, its cost
  estimated, and read again whenever the file changes (2); an entry whose usage is all zero is no call (4);
- a restore's `deleted_api_reqs` / `api_req_deleted` sum is kept aside: the source counts only what the ledger
  does not already hold of the requests it replaced (5); `subagent_usage` and `condense_context` spend count as
  calls of their own (6);
- a cost of 0 with tokens is "no price known": estimated and marked, unless the call is a plan's or a free
  model's (`billing.kind`: then the figures count it $0 whatever it holds) (7);
- tokens are stored in trayburn's meaning (input includes the cache tokens) per app and provider (8);
- every text kept is storable: a lone surrogate (a JavaScript string cut inside an emoji) becomes U+FFFD, so
  it costs that character, never the task;
- an app whose `cost` is not proven dollars (`App.cost_unit`: IBM Bob) has its calls estimated from their
  tokens, the written figures summed aside (`Parsed.written`);
- the task index (HistoryItem) gives title, folder and model, and its totals only as the session's rollup,
  which the ledger counts only while the task has no call (13).
Cline 4.x's copy of a legacy task (pitfall 10) is trimmed on the CLI side: `trim_legacy_copy`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ... import billing
from ..base import Call, command_words, reported_cost, storable_text, token_count
from ..cline_cli.parse import Messages, to_ms
from .places import App

# Cline providers whose tokensIn is the whole prompt (cache reads included): the generic OpenAI-compatible
# handler ("openai"), LiteLLM, Ollama, LM Studio. The others report uncached input (Anthropic style).
INCLUSIVE = frozenset({"openai", "litellm", "ollama", "lmstudio", "requesty"})
# Cline's provider ids whose trayburn route differs (Cline's "openai" is any OpenAI-compatible endpoint)
ROUTE = {"openai": "openai-compatible"}
LEGACY_WARNING = b"this is a legacy conversation"
IN_FLIGHT = "in flight when read (no cost yet); estimated until the file says more"  # a request's note
USAGE_SAYS = ("api_req_started", "api_req_finished", "deleted_api_reqs", "api_req_deleted", "subagent_usage")
# The sums outside the requests: (the key's suffix, the note saying what the call is)
SUMS = {
    "deleted_api_reqs": ("restore", "requests a checkpoint restore removed (their sum)"),
    "api_req_deleted": ("restore", "requests a checkpoint restore removed (their sum)"),
    "subagent_usage": ("subagents", "the subagents' spend"),
    "condense": ("condense", "condensing the context"),
}
_ENV_DIR = re.compile(r"# Current (?:Working|Workspace) Directory \(([^)\n]{1,4096})\)")
_MODEL_TAG = re.compile(rb"<model>([^<\n]{1,300})</model>")
_WORKSPACE = re.compile(rb"Current Workspace Directory \(([^)\\\n]{1,4096})\)")


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
    written: float = 0.0  # the files' own cost figures of an app whose unit is not proven (`App.cost_unit`)
    rollup: tuple[int, int, int, int, float | None] | None = None  # the HistoryItem's totals, as stored

    def rollup_call(self, app: str, task: str) -> Call | None:
        if self.rollup is None:
            return None
        i, o, cr, cw, cost = self.rollup
        if not (i or o or cr or cw or cost):
            return None
        return Call(f"{app}:{task}:rollup", -1, None, None, i, o, cr, cw, cost, (), "from the task index (a rollup)")


@dataclass(slots=True)
class _Usage:
    """One message carrying spend: an `api_req_started`, or a sum outside the requests (`SUMS`)."""

    kind: str  # its `say` ("condense" for a condense_context)
    ts: int
    usage: dict  # its text's JSON: tokensIn, tokensOut, cacheReads, cacheWrites, cost, cancelReason
    message: dict
    position: int  # its index in the file
    before: int  # the ts of the message before it (a restore's point)
    tools: list[str] = field(default_factory=list)  # the tools its reply used (the tool messages after it)
    shell: list[str] = field(default_factory=list)  # the programs its commands ran (`command_words`)


def _s(value: Any) -> str | None:
    return storable_text(value.strip()) if isinstance(value, str) and value.strip() else None


def agent_of(call: Call) -> str:
    """Who made the call, as the ledger names it: "subagents" for a task's summed subagent spend (Cline's
    subagents run on the task's own API configuration, so the task's model stands for theirs), else "lead"."""
    return "subagents" if call.key.partition("#")[0].endswith(":" + SUMS["subagent_usage"][0]) else "lead"


def _tokens(usage: dict) -> tuple[int, int, int, int]:
    """(tokensIn, tokensOut, cacheReads, cacheWrites) as the file states them (a request or a HistoryItem)."""
    get = usage.get
    return (
        token_count(get("tokensIn")),
        token_count(get("tokensOut")),
        token_count(get("cacheReads")),
        token_count(get("cacheWrites")),
    )


def normalise(app: App, provider: str | None, i: int, o: int, cr: int, cw: int) -> tuple[int, int, int, int]:
    """(input, output, cache_read, cache_write) in trayburn's meaning: input includes the cache tokens (pitfall 8).
    Cline: tokensIn is uncached, except for the generic OpenAI-compatible, LiteLLM and Ollama handlers, which
    pass the whole prompt (and whose `cacheWrites` is DeepSeek's cache-miss count: uncached input, not a write).
    Roo/Kilo since 3.29.5: tokensIn is inclusive; older files follow the provider (Anthropic: uncached), which
    shows when tokensIn is below the cache tokens it would include."""
    if app.format.input_by_provider:
        if provider in INCLUSIVE:
            if provider == "openai":
                cw = 0
            return max(i, cr + cw), o, cr, cw
        return i + cr + cw, o, cr, cw
    if i >= cr + cw:
        return i, o, cr, cw
    return i + cr + cw, o, cr, cw


def _cost_of(
    cost: float | None, tokens: tuple[int, int, int, int], route: str | None, final: bool, model: str | None = None
) -> tuple[float | None, str | None]:
    """The cost to store and a note (pitfall 7): 0 with tokens on a paid call is "no price known"."""
    if cost is None:
        return None, None if final else IN_FLIGHT
    if cost == 0 and any(tokens) and billing.kind(route, model) == billing.PAID:
        return None, "the extension wrote cost 0 (it had no price for this model); estimated"
    return cost, None


class _ModelHistory:
    """A Cline task's `task_metadata.json` model_usage: the model of a request made at a time."""

    def __init__(self, meta: Any, item: dict | None):
        entries = meta.get("model_usage") if isinstance(meta, dict) else None
        self.entries = sorted(
            ((token_count(e.get("ts")), _s(e.get("model_id")), _s(e.get("model_provider_id")))
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
    data: bytes, app: App, task: str, meta: Any = None, item: dict | None = None, api_models: Sequence[str] = ()
) -> Parsed:
    """A `ui_messages.json` → its calls (rows keyed `<app>:<task>:<ts>`), restores and what the session shows.
    `api_models`: Roo/Kilo's `<model>` lines, one per request when they match. Raises ValueError when the file
    is not a JSON array (caught mid-write, pitfall 11)."""
    out = Parsed()
    requests, sums = _walk(_messages(data), out)
    out.started_ms = out.started_ms or (int(task) if task.isdigit() and 1e12 <= int(task) < 1e14 else None)
    history = _ModelHistory(meta, item)
    last = api_models[-1] if api_models else None
    lines = list(api_models) if len(api_models) == len(requests) else [last] * len(requests)
    for r, line in zip(requests, lines, strict=True):
        _request(out, app, task, r, _model_of(r, history, line))
    for s in sums:
        _sum(out, app, task, s, _model_of(s, history, last))
    if isinstance(item, dict):
        _index(out, app, item)
    if out.title is None and out.prompt:
        out.title = out.prompt.splitlines()[0][:200]
    out.model = out.model or history.fallback or last
    out.calls = _unique_keys(out.calls)
    for restore, call in zip(out.restores, _unique_keys([x.call for x in out.restores]), strict=True):
        restore.call = call
    return out


def _unique_keys(calls: list[Call]) -> list[Call]:
    """Two entries of one kind with the same `ts` (Cline stamps with Date.now(): two in one millisecond) are two
    calls: the second keyed `<key>#2`, by its place among them in the file, so every re-read keys them alike."""
    seen: dict[str, int] = {}
    out = []
    for c in calls:
        n = seen[c.key] = seen.get(c.key, 0) + 1
        out.append(c if n == 1 else c._replace(key=f"{c.key}#{n}"))
    return out


def _messages(data: bytes) -> list:
    """The file's array of messages; ValueError saying why it is not one (pitfall 11: caught mid-write)."""
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
    return doc


def _walk(doc: list, out: Parsed) -> tuple[list[_Usage], list[_Usage]]:
    """The messages in order: what the session shows goes to `out`; the requests and the sums outside them are
    returned. A message without a usable `ts` is skipped whole."""
    requests: list[_Usage] = []
    sums: list[_Usage] = []
    before = 0
    for position, m in enumerate(doc):
        ts = to_ms(m.get("ts")) if isinstance(m, dict) else None
        if ts is None:
            continue
        _shows(out, m, ts)
        say = m.get("say")
        if say in USAGE_SAYS:
            usage = _usage_text(m)
            if usage is None:
                out.bad_texts += 1  # (pitfall 1: this message skipped, the rest kept)
            elif say == "api_req_started":
                requests.append(_Usage(say, ts, usage, m, position, before))
                if out.cwd is None:
                    out.cwd = _request_cwd(usage)
            elif say == "api_req_finished":
                _finished(requests, usage)
            else:
                sums.append(_Usage(say, ts, usage, m, position, before))
        elif requests and (say or m.get("ask")) in TOOL_MESSAGES:
            _tool_used(requests[-1], say or m.get("ask"), m.get("text"))
        elif say == "condense_context" and isinstance(m.get("contextCondense"), dict):
            sums.append(_Usage("condense", ts, {"cost": m["contextCondense"].get("cost")}, m, position, before))
        before = ts
    return requests, sums


def _shows(out: Parsed, m: dict, ts: int) -> None:
    """What one message tells the session: its first and last times, the prompt, whether it is done."""
    if out.started_ms is None:
        out.started_ms = ts
    out.ended_ms = ts
    say = m.get("say")
    if out.prompt is None and say in ("task", "text") and m.get("type") == "say":
        out.prompt = _s(m.get("text"))
    if say == "completion_result" or m.get("ask") == "resume_completed_task":
        out.done = True


def _usage_text(m: dict) -> dict | None:
    """A usage message's `text`, JSON again (pitfall 1); None when it is not an object."""
    try:
        usage = json.loads(m.get("text") or "")
    except (ValueError, TypeError, RecursionError):
        return None
    return usage if isinstance(usage, dict) else None


def _request_cwd(usage: dict) -> str | None:
    """The working folder the request's environment details name (Cline writes the prompt into `request`)."""
    request = usage.get("request")
    found = _ENV_DIR.search(request) if isinstance(request, str) else None
    return _s(found.group(1)) if found else None


# The messages naming a tool the reply of the request before them used (docs/formats/editor-tasks.md): `tool`
# (its text's JSON names it: readFile, editedExistingFile, …), `command` (its text is the command line), and
# the MCP and browser tools.
TOOL_MESSAGES = {"tool": None, "command": "execute_command", "use_mcp_server": "use_mcp_server",
                 "browser_action_launch": "browser_action"}  # fmt: skip


def _tool_used(request: _Usage, kind: str, text: Any) -> None:
    name = TOOL_MESSAGES[kind]
    if name is None:
        try:
            said = json.loads(text) if isinstance(text, str) else None
        except (ValueError, RecursionError):
            said = None
        name = _s(said.get("tool")) if isinstance(said, dict) else None
    request.tools.append((name or "tool").replace(",", "_"))
    if kind == "command":
        request.shell.append(command_words(text if isinstance(text, str) else ""))


def _finished(requests: list[_Usage], usage: dict) -> None:
    """A legacy `api_req_finished`: merged into the request before it, as Cline's combineApiRequests does."""
    if requests:
        base = requests[-1].usage
        for k in ("tokensIn", "tokensOut", "cacheWrites", "cacheReads", "cost"):
            if isinstance(usage.get(k), (int, float)):
                base[k] = usage[k]


def _request(out: Parsed, app: App, task: str, r: _Usage, model: tuple[str | None, str | None]) -> None:
    """One `api_req_started` as a call keyed by its ts (pitfall 3): in flight while it has neither a cost nor a
    cancelReason (2), no call at all while its usage is all zero (4)."""
    name, provider = model
    reported = reported_cost(r.usage.get("cost"))
    final = reported is not None or _s(r.usage.get("cancelReason")) is not None
    reported = _in_dollars(out, app, reported)
    tokens = normalise(app, provider, *_tokens(r.usage))
    route = ROUTE.get(provider or "", provider)
    cost, note = _cost_of(reported, tokens, route, final, name)
    if not (any(tokens) or cost):
        return
    if not final:
        out.in_flight += 1
    shell = ",".join(r.shell) if r.shell else None
    out.calls.append(Call(f"{app.name}:{task}:{r.ts}", r.position, r.ts, name, *tokens, cost, tuple(r.tools), note,
                          route, shell))  # fmt: skip
    out.model, out.provider = name or out.model, route or out.provider


def _sum(out: Parsed, app: App, task: str, s: _Usage, model: tuple[str | None, str | None]) -> None:
    """Spend outside the requests: a restore's sum of the requests it removed, kept aside (pitfall 5: the source
    counts only what the ledger does not hold of them); the subagents' and a condensation's, calls (6)."""
    name, provider = model
    tokens = normalise(app, provider, *_tokens(s.usage))
    route = ROUTE.get(provider or "", provider)
    cost, note = _cost_of(_in_dollars(out, app, reported_cost(s.usage.get("cost"))), tokens, route, True, name)
    if not (any(tokens) or cost):
        return
    suffix, why = SUMS[s.kind]
    call = Call(f"{app.name}:{task}:{s.ts}:{suffix}", s.position, s.ts, name, *tokens, cost, (), note or why, route)
    if suffix == "restore":
        out.restores.append(Restore(call, s.before))
    else:
        out.calls.append(call)


def _in_dollars(out: Parsed, app: App, cost: float | None) -> float | None:
    """The written cost when the app's unit is dollars; else None (estimated from the tokens), the figure
    summed into `out.written`."""
    if app.cost_unit is None:
        return cost
    out.written += cost or 0.0
    return None


def _index(out: Parsed, app: App, item: dict) -> None:
    """The task's HistoryItem: title, folder and model where the messages gave none, and its totals as the
    session's rollup, counted by the ledger only while the task has no call (pitfall 13)."""
    out.title = _s(item.get("task"))
    out.cwd = out.cwd or _s(item.get("cwdOnTaskInitialization")) or _s(item.get("workspace"))
    out.model = out.model or _s(item.get("modelId"))
    totals = normalise(app, out.provider, *_tokens(item))
    total = reported_cost(item.get("totalCost"))
    out.rollup = (*totals, None if app.cost_unit else _cost_of(total, totals, out.provider, True)[0])


def _model_of(u: _Usage, history: _ModelHistory, line: str | None) -> tuple[str | None, str | None]:
    """A request's model and Cline provider id: its `modelInfo` (Cline 3.37+), else the task's model history at
    its time, else the task index's model; Roo/Kilo: the `<model>` line of its environment details."""
    info = u.message.get("modelInfo")
    if isinstance(info, dict) and _s(info.get("modelId")):
        return _s(info.get("modelId")), _s(info.get("providerId"))
    model, provider = history.at(u.ts)
    return model or line, provider


def conversation_env(data: bytes) -> tuple[list[str], str | None]:
    """Roo/Kilo's `<model>` lines and workspace folder, found in api_conversation_history.json's bytes (never
    parsed)."""
    models = [m.decode("utf-8", "replace").strip() for m in _MODEL_TAG.findall(data)]
    found = _WORKSPACE.search(data)
    return models, found.group(1).decode("utf-8", "replace") if found else None


def source_of(app: App, folder: str, meta: Any) -> str:
    """The session's `source`: Cline's tasks are "vscode" from an editor's storage, "cli" from the old CLI's data
    folder (as its `task_metadata.json` environment history says)."""
    if not app.cline_data:
        return app.source
    env = meta.get("environment_history") if isinstance(meta, dict) else None
    host = env[-1].get("host_name") if isinstance(env, list) and env and isinstance(env[-1], dict) else None
    if isinstance(host, str) and "cli" in host.lower():
        return "cli"
    if host is None and "globalStorage" not in folder:
        return "cli"
    return app.source


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
