"""The editor apps' task folders as a source (docs/formats/editor-tasks.md): one source per app (`feed`
"tasks:<app>"), over every place that app keeps `tasks/<id>/` in (`places`); each task's files read by `parse`.

What the source does of the format's pitfalls (by number; the others are `parse`'s):
- a restore's sum counts only what the ledger does not already hold of the requests it replaced (5);
- a task id in several places is read from every copy, their calls united by key (9: `copies.merged`), so
  the figures are the same whatever the copies' times and whichever the ledger read first; the union is
  written under each copy's file, so whichever row the ledger counts holds the same values;
- the file is re-read only when its stat changes; a file that does not parse keeps the previous figures and
  is retried (11); only the exact file names are looked at, never temp/backup files or `checkpoints/` (12).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...files import Checkpoint, FileProblem, FileStat, blake2b, read, stat_file
from ..base import Call, Known, Seen, SessionRecord, Writer, changed
from .places import App, Place

if TYPE_CHECKING:  # (the parser is imported where a task is read: a refresh with nothing new never loads it)
    from .parse import Parsed

UI = "ui_messages"  # the files' kinds in the ledger
META = "task_metadata"
UI_NAMES = ("ui_messages.json", "claude_messages.json")  # (the second: very old Cline, renamed on its next read)
META_NAME = "task_metadata.json"
CONVERSATION_NAME = "api_conversation_history.json"


# ---- the source ---------------------------------------------------------------------------------


@dataclass(slots=True)
class Task:
    """One task id of one app, as the scan found it: one copy's files, and the task's other copies in other
    places (`others`: in the places' order, never by time)."""

    id: str
    folder: str
    place: Place
    ui: FileStat | None  # None: the folder is there, the file not (Roo renames it away while saving)
    meta: FileStat | None = None
    others: list[Task] = field(default_factory=list)

    @property
    def sid(self) -> str:
        return f"{self.place.app}:{self.id}"

    @property
    def copies(self) -> list[Task]:
        return [self, *self.others]

    @property
    def own_files(self) -> tuple[FileStat, ...]:
        return tuple(f for f in (self.ui, self.meta) if f is not None)

    @property
    def files(self) -> tuple[FileStat, ...]:
        """Every copy's files: a change to any of them reads the task again."""
        return tuple(f for t in self.copies for f in t.own_files)

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
        self._index: dict[str, tuple[Checkpoint | None, dict[str, dict]]] = {}  # place → its HistoryItems

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
                task = _task(entry, place, self.app, problems)
                if task is None:
                    continue
                first = by_id.get(task.id)
                if first is None:
                    by_id[task.id] = task
                elif first.ui is None and task.ui is not None:  # the same task in two places: all read (9)
                    task.others, first.others = [*first.others, first], []
                    by_id[task.id] = task
                else:
                    first.others.append(task)
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
        hashed = blake2b(digest_size=16)
        for t in sorted(self.tasks, key=lambda t: t.id):
            for f in t.files:
                hashed.update(f"{f.path}\0{tuple(f.checkpoint)}\0".encode(errors="surrogateescape"))
        return hashed.hexdigest()

    def trusts_digest(self, known: Mapping[str, Known]) -> bool:
        """A task without its ui file counts the kept copy the ledger knows (`needs_work`): then no digest."""
        return all(copy.ui is not None for t in self.tasks for copy in t.copies)

    def needs_work(self, known: Mapping[str, Known]) -> bool:
        seen = 0
        for t in self.tasks:
            for f in t.files:
                k = known.get(f.path)
                if changed(f, k):
                    return True
                seen += 1
            for copy in t.copies:
                if copy.ui is None:  # (kept as it was: the file comes back)
                    seen += sum(1 for n in UI_NAMES if _kept(known, os.path.join(copy.folder, n)))
        live = sum(1 for k in known.values() if k.feed == self.feed and not k.gone)
        return live != seen

    # ---- read phase

    def ingest(self, writer: Writer) -> None:
        w = writer
        todo: list[Task] = []
        for t in self.tasks:
            if any(changed(f, w.known.get(f.path)) and not w.adopt(f) for f in t.files):  # (adopt: a chmod, say)
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
        for copy in t.copies:
            if copy.ui is None:
                for n in UI_NAMES:
                    p = os.path.join(copy.folder, n)
                    if _kept(w.known, p):
                        w.seen(p)
        w.live(t.sid)

    def _read(self, w: Writer, t: Task) -> None:
        from .copies import merged
        from .parse import agent_of, source_of

        self._note(w, t)
        read = [got for copy in t.copies if (got := self._parse(w, copy)) is not None]
        if not read:
            return
        parsed = merged([p for _, p, _ in read])
        copy, _, meta = max(read, key=lambda got: got[1].ended_ms or 0)  # (the copy `merged` shows)
        assert copy.ui is not None
        file_ids = [w.ok(c.ui.path, t.sid, UI, None, c.ui.checkpoint) for c, _, _ in read if c.ui is not None]
        for c, _, m in read:
            if c.meta is not None and m is not None:
                w.ok(c.meta.path, t.sid, META, None, c.meta.checkpoint)
        cwd = parsed.cwd
        record = SessionRecord(
            t.sid, copy.folder, parsed.started_ms, parsed.ended_ms, "completed" if parsed.done else "active",
            title=parsed.title, prompt=parsed.prompt, cwd=cwd, workspace_root=cwd,
            model=parsed.model, provider=parsed.provider, source=source_of(self.app, copy.folder, meta),
            rollup=parsed.rollup_call(self.app.name, t.id),
        )  # fmt: skip
        fallback = parsed.started_ms or copy.ui.checkpoint.mtime_ns // 10**6
        w.session(record, file_ids[0], fallback)
        calls = parsed.calls
        if parsed.restores:
            calls = calls + _restores(w, t.sid, parsed)
        helpers = [c for c in calls if agent_of(c) != "lead"]
        lead = [c for c in calls if agent_of(c) == "lead"] if helpers else calls
        for file_id in file_ids:  # (each copy's file holds the union: whichever row counts, the same values)
            w.calls(t.sid, file_id, "lead", lead, fallback)
            if helpers:
                w.calls(t.sid, file_id, "subagents", helpers, fallback)

    def _parse(self, w: Writer, t: Task) -> tuple[Task, Parsed, Any] | None:
        """One copy's files parsed: (the copy, its figures, its task_metadata.json); None when it has no
        messages file or that file does not parse now (then recorded, and retried when it changes)."""
        from .parse import conversation_env, parse_task

        meta = None
        if t.meta is not None:
            raw = _read_any(w, t.meta, t.sid, META)
            meta = _json_of(raw)
            if raw is not None and not isinstance(meta, dict):  # written in place: caught mid-write, retried
                w.failed(t.meta, t.sid, META, "invalid JSON, perhaps caught mid-write")
                meta = None
        item = self._history_item(t)
        if t.ui is None:
            return None
        data = _read_any(w, t.ui, t.sid, UI)
        if data is None:
            return None
        api_models: list[str] = []
        api_dir = None
        if self.app.format.models_in_conversation:  # Roo/Kilo: only in the conversation's environment details
            conversation = _plain_read(os.path.join(t.folder, CONVERSATION_NAME), w.max_file_bytes)
            api_models, api_dir = conversation_env(conversation) if conversation else ([], None)
        try:
            parsed = parse_task(data, self.app, t.id, meta, item, api_models)
        except ValueError as exc:
            w.failed(t.ui, t.sid, UI, str(exc))
            return None
        parsed.cwd = parsed.cwd or api_dir
        return t, parsed, meta

    def _history_item(self, t: Task) -> dict | None:
        """The task's HistoryItem: Roo's `tasks/<id>/history_item.json`, else the place's `state/taskHistory.json`."""
        item = _json_of(_plain_read(os.path.join(t.folder, "history_item.json"), 1_000_000))
        if isinstance(item, dict):
            return item
        index_path = os.path.join(str(t.place.path), "state", "taskHistory.json")
        try:
            ckpt: Checkpoint | None = stat_file(index_path)
        except OSError:
            return None
        memo = self._index.get(index_path)
        if memo is None or memo[0] != ckpt:
            doc = _json_of(_plain_read(index_path, 256 * 10**6))
            items = {str(i["id"]): i for i in doc if isinstance(i, dict) and "id" in i} if isinstance(doc, list) else {}
            memo = (ckpt, items)
            self._index[index_path] = memo
        return memo[1].get(t.id)


def _task(entry: os.DirEntry, place: Place, app: App, problems: dict[str, str]) -> Task | None:
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
    if app.format.metadata:
        meta = _stat(os.path.join(folder, META_NAME), problems)
    return Task(name, folder, place, ui, meta)


def _stat(path: str, problems: dict[str, str]) -> FileStat | None:
    try:
        return FileStat(path, stat_file(path))
    except FileNotFoundError:
        return None
    except OSError as exc:
        problems[path] = exc.strerror or str(exc)
        return None


def _kept(known: Mapping[str, Known], path: str) -> bool:
    k = known.get(path)
    return k is not None and not k.gone


def _read_any(w: Writer, f: FileStat | None, sid: str, kind: str) -> bytes | None:
    """The file's bytes: through the ledger when it changed (so a failure is recorded), else directly (a
    task is read whole when any of its files changed; so is a file whose metadata alone changed, which the
    ledger then gives no bytes of)."""
    if f is None:
        return None
    if changed(f, w.known.get(f.path)):
        got = w.read(f, sid, kind)
        if got is not None:
            return got[0]
    return _plain_read(f.path, w.max_file_bytes)


def _plain_read(path: str, limit: int) -> bytes | None:
    try:
        return read(path, limit)[0]
    except (FileProblem, OSError):
        return None


def _json_of(data: bytes | None) -> Any:
    if data is None:
        return None
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


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
        key, index, _, model, i, o, cr, cw, cost, tools, note, provider = r.call[:12]
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


def written_costs(app: App, places: Sequence[Place], limit: int) -> tuple[int, float]:
    """(tasks, total) of the cost figures an app whose unit is not proven dollars wrote in its task files
    (`App.cost_unit`): what `doctor` shows beside the list-price estimates trayburn counts. Reads every task's
    messages file; one that cannot be read or parsed is left out."""
    from .parse import parse_task

    tasks, total = 0, 0.0
    for place in places:
        try:
            entries = [e for e in os.scandir(place.tasks) if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        for entry in entries:
            data = _plain_read(os.path.join(entry.path, UI_NAMES[0]), limit)
            try:
                parsed = parse_task(data, app, entry.name) if data is not None else None
            except ValueError:
                continue
            if parsed is not None and parsed.written:
                tasks, total = tasks + 1, total + parsed.written
    return tasks, total
