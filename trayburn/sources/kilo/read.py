"""Reading kilo.db: read-only, one snapshot per read, only the sessions that changed (docs/formats/kilo7.md).

A read never blocks Kilo: a `mode=ro` connection (no write lock, never a checkpoint; SQLite reads the -wal
through the -shm, so rows not yet checkpointed are seen), closed as soon as the read is done; a database without a
-wal (no Kilo has it open) is opened as immutable, so a read makes no file in Kilo's folder. Where SQLite cannot
open the files read-only (a -wal without its -shm in a folder we may not write), the db and its -wal are copied
into a private folder and the copy is read. A busy database is a `FileProblem`: the refresh says so and retries.

What a read needs from the last one is a mark per session (`mark_of`): the highest rowid of its rows in
`message`, `part` and `session_message`, and its `time_updated`. Rows are only ever added with a rowid above every
rowid in their table, so a session with a row above the highest mark, or whose `time_updated` moved, or that is new,
is read again whole; the others are not read at all.

One call per `step-finish` part (the step's tokens and Kilo's cost, which excludes subagents), keyed by its
assistant message; an assistant message with usage but no step-finish part is a call of its own. A fork's
copies of earlier messages (created before their session) are not calls. OpenCode 2's `session_message` rows
count only when no `message` row of the same session stands for the same call.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ... import billing
from ...files import Checkpoint, FileProblem
from ..base import Call, reported_cost, token_count

# The tables and columns a read relies on (docs/formats/kilo7.md, "Tables")
REQUIRED = {
    "session": ("id", "parent_id", "directory", "title", "time_created", "time_updated"),
    "message": ("id", "session_id", "time_created", "data"),
    "part": ("id", "message_id", "session_id", "data"),
}
NEWEST_KNOWN = "20260907102000_kilocode_model_usage_index"  # the newest migration of the Kilo 7.7.9 recording
V2 = "session_message"  # OpenCode 2's table of messages (its copies of 1.x sessions too)
BACKFILL = "evt_legacy_backfill_m_"  # the id prefix of OpenCode 2's copy of a 1.x message
SAME_CALL_MS = 60_000  # a v2 row this close to a v1 call with the same tokens is that call
BUSY_WAIT_S = 0.25  # how long a read waits for a lock (Kilo's writers hold one for milliseconds)
CANT_OPEN = ("unable to open", "readonly database", "read-only file system")


def mark_of(c: Checkpoint | None) -> tuple[int, int, int, int]:
    """A session's mark, as its files row stores it in the checkpoint's four numbers: (its highest rowid in
    `message`, its `Session.stamp`, its highest rowid in `part`, its highest rowid in `session_message`)."""
    return (c.size, c.mtime_ns, c.inode, c.ctime_ns) if c is not None else (0, -1, 0, 0)


@dataclass(slots=True)
class Session:
    """A `session` row."""

    id: str
    parent_id: str | None
    directory: str | None
    title: str | None
    created_ms: int
    updated_ms: int
    archived_ms: int | None

    @property
    def stamp(self) -> int:
        """What moves when the row changes: `time_updated`, or `time_archived` (an archive may leave the first)."""
        return max(self.updated_ms, self.archived_ms or 0)


@dataclass(slots=True)
class Found:
    """What one session's rows hold, read again because they changed."""

    calls: list[Call]
    mark: Checkpoint  # (max message rowid, the session's time_updated, max part rowid, max session_message rowid)
    agent: str  # the agent of its assistant messages ("code", "general", …)
    last_ms: int | None  # its latest message
    in_flight: bool  # an assistant message without an end yet
    model: str | None
    provider: str | None
    copies: int = 0  # a fork's copies of earlier messages, left out
    v2_copies: int = 0  # OpenCode 2 rows standing for a 1.x call counted from `message`


@dataclass
class Read:
    """One read of a database: every session it holds (the live ones) and those read again."""

    sessions: dict[str, Session] = field(default_factory=dict)
    found: dict[str, Found] = field(default_factory=dict)
    newer_schema: str | None = None  # the newest migration, when newer than any trayburn was checked against
    copied: bool = False  # read from a private copy (read-only access could not work here)
    size: int = 0  # bytes of rows read

    def __len__(self) -> int:  # (`Writer.read_with` counts it as the bytes read)
        return self.size


def read(path: str, marks: Mapping[str, Checkpoint]) -> Read:
    """The sessions of `path` and, for those changed since `marks` (session id → its stored mark), their calls.
    Raises FileProblem (busy, not a Kilo database, unreadable) with a sentence for a person."""
    try:
        con = _connect(path)
    except sqlite3.Error as exc:
        if not any(s in str(exc).lower() for s in CANT_OPEN):
            raise FileProblem(_why(exc)) from None
        return _read_copy(path, marks)
    try:
        return _read(con, marks)
    except sqlite3.Error as exc:
        if any(s in str(exc).lower() for s in CANT_OPEN):
            con.close()
            return _read_copy(path, marks)
        raise FileProblem(_why(exc)) from None
    finally:
        con.close()


def _connect(path: str) -> sqlite3.Connection:
    """Read-only; with no -wal at all (no Kilo has it open: every row is in the db) as an immutable file, so
    that no -wal or -shm is made in Kilo's folder."""
    uri = Path(os.path.abspath(path)).as_uri() + "?mode=ro"
    if not os.path.exists(path + "-wal"):
        uri += "&immutable=1"
    con = sqlite3.connect(uri, uri=True, timeout=BUSY_WAIT_S, isolation_level=None, check_same_thread=False)
    con.execute("PRAGMA query_only=1")
    return con


def _read_copy(path: str, marks: Mapping[str, Checkpoint]) -> Read:
    """The db and its -wal copied into a private folder (never the -shm: SQLite rebuilds it from the -wal) and
    the copy read; the copy is removed at once."""
    folder = tempfile.mkdtemp(prefix="trayburn-kilo-")
    try:
        copy = os.path.join(folder, "kilo.db")
        try:
            if os.path.exists(path + "-wal"):
                shutil.copyfile(path + "-wal", copy + "-wal")
            shutil.copyfile(path, copy)
        except OSError as exc:
            raise FileProblem(f"cannot be read ({exc.strerror or exc})") from None
        try:
            con = sqlite3.connect(copy, timeout=BUSY_WAIT_S, isolation_level=None)
            try:
                got = _read(con, marks)
            finally:
                con.close()
        except sqlite3.Error as exc:
            raise FileProblem(_why(exc)) from None
        got.copied = True
        return got
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _why(exc: sqlite3.Error) -> str:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return f"busy ({text}): another program holds a lock on it; read again at the next refresh"
    if "not a database" in text or "malformed" in text:
        return f"not a readable SQLite database ({text})"
    return f"could not be read ({text})"


def _read(con: sqlite3.Connection, marks: Mapping[str, Checkpoint]) -> Read:
    con.execute("BEGIN")  # one snapshot for every query of this read
    try:
        out = Read()
        tables = _schema(con)
        out.newer_schema = _newer(con)
        v2 = V2 in tables and {"session_id", "type", "time_created", "data"} <= tables[V2]
        v2 = v2 and con.execute(f"SELECT 1 FROM {V2} LIMIT 1").fetchone() is not None  # (Kilo 7.7 leaves it empty)
        out.sessions = _sessions(con, "time_archived" in tables["session"])
        _found(con, out.sessions, _changed(con, out.sessions, marks, v2), v2, out)
        return out
    finally:
        con.execute("COMMIT")


def _schema(con: sqlite3.Connection) -> dict[str, set[str]]:
    names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    tables = {n: {r[1] for r in con.execute(f'PRAGMA table_info("{n}")')} for n in names if n in (*REQUIRED, V2)}
    for table, columns in REQUIRED.items():
        if table not in tables:
            raise FileProblem(_schema_problem(con, f"has no table '{table}'"))
        missing = [c for c in columns if c not in tables[table]]
        if missing:
            raise FileProblem(_schema_problem(con, f"has no column {', '.join(missing)} in table '{table}'"))
    return tables


def _schema_problem(con: sqlite3.Connection, what: str) -> str:
    newest = _newest_migration(con)
    if newest is None:
        return f"{what}: not a Kilo Code 7 database (the calls already counted from it are kept)"
    return (
        f"{what}: a Kilo Code schema trayburn does not know (newest migration {newest}; trayburn knows up to"
        f" {NEWEST_KNOWN}); the calls already counted from it are kept"
    )


def _newest_migration(con: sqlite3.Connection) -> str | None:
    try:
        row = con.execute("SELECT max(id) FROM migration").fetchone()
    except sqlite3.Error:
        return None
    return row[0] if row and isinstance(row[0], str) else None


def _newer(con: sqlite3.Connection) -> str | None:
    newest = _newest_migration(con)
    return newest if newest is not None and newest > NEWEST_KNOWN else None


def _sessions(con: sqlite3.Connection, archive: bool) -> dict[str, Session]:
    archived = "time_archived" if archive else "NULL"
    rows = con.execute(
        f"SELECT id, parent_id, directory, title, time_created, time_updated, {archived} FROM session"
    ).fetchall()
    out = {}
    for sid, parent, directory, title, created, updated, gone in rows:
        if not isinstance(sid, str) or not sid:
            continue
        out[sid] = Session(
            sid, parent if isinstance(parent, str) and parent else None, _text(directory), _text(title),
            _int(created), _int(updated), _int(gone) or None,
        )  # fmt: skip
    return out


def _changed(
    con: sqlite3.Connection, sessions: Mapping[str, Session], marks: Mapping[str, Checkpoint], v2: bool
) -> list[str]:
    """The sessions to read again: new ones, those whose time_updated moved, those with rows above every mark."""
    held = [mark_of(m) for sid, m in marks.items() if sid in sessions]  # (a deleted session's rowids are reused)
    todo = {sid for sid, s in sessions.items() if sid not in marks or mark_of(marks[sid])[1] != s.stamp}
    if len(todo) == len(sessions):  # (a first read: every session, no need to look for new rows)
        return sorted(todo)
    tables = [("message", max((m[0] for m in held), default=0)), ("part", max((m[2] for m in held), default=0))]
    if v2:
        tables.append((V2, max((m[3] for m in held), default=0)))
    for table, above in tables:
        todo.update(r[0] for r in con.execute(f"SELECT DISTINCT session_id FROM {table} WHERE rowid > ?", (above,)))
    return sorted(sid for sid in todo if sid in sessions)


# The fields a read needs, extracted by SQLite in one parse of each row (JSON arrays of a few values for Python)
USAGE = (
    "'$.tokens.input', '$.tokens.output', '$.tokens.reasoning', '$.tokens.cache.read', '$.tokens.cache.write', '$.cost'"
)
MESSAGES = (
    "SELECT rowid, id, json_extract(data, '$.role', '$.time.created', '$.time.completed', '$.modelID', '$.providerID',"
    f" '$.agent', '$.mode', '$.error.name', {USAGE}), session_id FROM message WHERE {{}} 1"
    " ORDER BY session_id, time_created, id"
)
STEPS = (  # (the very condition of Kilo's index of step-finish parts, so SQLite uses it)
    f"SELECT id, message_id, json_extract(data, {USAGE}, '$.time.start'), session_id FROM part WHERE {{}}"
    " json_valid(data) AND json_extract(data, '$.type') = 'step-finish' ORDER BY session_id, id"
)
WHOLE = 64  # changed sessions from which one pass over every row costs less than a look-up per session


def _found(con: sqlite3.Connection, sessions: Mapping[str, Session], todo: list[str], v2: bool, out: Read) -> None:
    """The calls of the sessions in `todo`: looked up session by session, or in one pass over every row when many
    changed (a first read)."""
    if len(todo) < WHOLE:
        for sid in todo:
            where = "session_id=? AND"
            rows = (_rows(con, MESSAGES, where, (sid,)), _rows(con, STEPS, where, (sid,)))
            tops = (_top(con, "message", sid), _top(con, "part", sid))
            out.found[sid] = _session(con, sessions[sid], rows, tops, v2, out)
        return
    wanted = set(todo)
    messages, steps = _grouped(_rows(con, MESSAGES, "", ()), wanted), _grouped(_rows(con, STEPS, "", ()), wanted)
    top_message = dict(con.execute("SELECT session_id, max(rowid) FROM message GROUP BY session_id").fetchall())
    top_part = dict(con.execute("SELECT session_id, max(rowid) FROM part GROUP BY session_id").fetchall())
    for sid in todo:
        rows = (messages.get(sid, []), steps.get(sid, []))
        tops = (top_message.get(sid) or 0, top_part.get(sid) or 0)
        out.found[sid] = _session(con, sessions[sid], rows, tops, v2, out)


def _rows(con: sqlite3.Connection, sql: str, where: str, params: tuple) -> list[tuple]:
    try:
        return con.execute(sql.format(where), params).fetchall()
    except sqlite3.OperationalError as exc:  # a row that is not JSON: the others are read without it
        if "JSON" not in str(exc):
            raise
        return con.execute(sql.format(where + " json_valid(data) AND"), params).fetchall()


def _grouped(rows: list[tuple], wanted: set[str]) -> dict[str, list[tuple]]:
    out: dict[str, list[tuple]] = {}
    for row in rows:
        if row[-1] in wanted:
            out.setdefault(row[-1], []).append(row)
    return out


def _top(con: sqlite3.Connection, table: str, sid: str) -> int:
    return con.execute(f"SELECT max(rowid) FROM {table} WHERE session_id=?", (sid,)).fetchone()[0] or 0


def _session(
    con: sqlite3.Connection, s: Session, rows: tuple[list, list], tops: tuple[int, int], v2: bool, out: Read
) -> Found:
    """One session's calls, from its assistant messages and their step-finish parts (`rows`); `tops`: its highest
    rowids in `message` and `part`."""
    messages, steps = rows
    by_message: dict[str, list[tuple]] = {}
    for row in steps:
        by_message.setdefault(row[1], []).append(row)
    out.size += 64 * (len(messages) + len(steps))
    found = Found([], Checkpoint(0, s.stamp, tops[1], 0), "", None, False, None, None)
    for row in messages:
        _assistant(found, s, row, by_message.get(row[1], ()))
    top_v2 = _v2(con, s, found, out) if v2 else 0
    found.mark = Checkpoint(tops[0], s.stamp, tops[1], top_v2)
    return found


def _assistant(found: Found, s: Session, row: tuple, steps: Sequence[tuple]) -> None:
    """One message (rowid, id, its fields as a JSON array: role, times, route, agent, error, usage) with its
    step-finish parts (id, message id, usage and start as a JSON array)."""
    if row[2] is None or not row[2].startswith('["assistant"'):
        return
    fields = _json(row[2])
    if not isinstance(fields, list) or len(fields) != 14:
        return
    mid = row[1]
    _, created, completed, model, provider, agent, mode, error = fields[:8]
    created = _int(created) or None
    if created is not None and created < s.created_ms:
        found.copies += 1  # a fork's copy of an earlier message (its original time): counted where it was made
        return
    model, provider = _str(model), _str(provider)
    found.model, found.provider = model or found.model, provider or found.provider
    found.agent = found.agent or _str(agent) or _str(mode) or ""
    found.last_ms = max(found.last_ms or 0, _int(completed) or created or 0) or None
    if not completed and not error and not steps:
        found.in_flight = True
    parsed = [(_numbers(step[2]), step[0]) for step in steps]
    usages = [(u, pid) for u, pid in parsed if isinstance(u, list) and len(u) == 7] or [(fields[8:], None)]
    for index, (usage, pid) in enumerate(usages):
        raw = (
            token_count(usage[0]),
            token_count(usage[1]),
            token_count(usage[2]),
            token_count(usage[3]),
            token_count(usage[4]),
        )
        price = reported_cost(usage[5])
        if not any(raw) and not price:
            continue  # no usage: inserted at a step's start and not filled (yet, or ever: a cancelled run)
        key = f"kilo:{mid}" if index == 0 else f"kilo:{mid}:{pid}"
        at = (_int(usage[6]) or created) if index else created
        found.calls.append(_call(key, len(found.calls), at, model, provider, raw, price))


def _call(
    key: str, seq: int, at: int | None, model: str | None, provider: str | None, raw: tuple, cost: float | None
) -> Call:
    """A call in trayburn's meaning: input includes both cache counts (Kilo's excludes them), output includes the
    reasoning tokens (billed as output). A cost of 0 with tokens is "no price known" (Kilo had none for the
    model: a custom provider without prices): estimated and marked, unless the call is a plan's or a free model's
    (`billing.kind`, the one rule every source asks: then the figures count it $0 whatever it holds)."""
    i, o, r, cr, cw = raw
    note = None
    if cost == 0 and billing.kind(provider, model) == billing.PAID:
        cost, note = None, "Kilo wrote cost 0 (it had no price for this model); estimated"
    return Call(key, seq, at, model, i + cr + cw, o + r, cr, cw, cost, (), note, provider)


def _v2(con: sqlite3.Connection, s: Session, found: Found, out: Read) -> int:
    """OpenCode 2's assistant rows of the session: each one the `message` rows do not already stand for."""
    rows = con.execute(
        f"SELECT rowid, id, time_created, data FROM {V2} WHERE session_id=? ORDER BY time_created, id", (s.id,)
    ).fetchall()
    top = 0
    v1 = [(c.ts_ms or 0, (c.input, c.output, c.cache_read, c.cache_write)) for c in found.calls]
    for rowid, vid, created, data in rows:
        top = max(top, rowid)
        out.size += len(data or "")
        doc = _json(data)
        if not isinstance(doc, dict) or doc.get("type", "assistant") != "assistant" or not isinstance(vid, str):
            continue
        at = _int(created) or None
        if at is not None and at < s.created_ms:
            found.copies += 1
            continue
        model_doc: dict = doc["model"] if isinstance(doc.get("model"), dict) else {}
        model, provider = _str(model_doc.get("id")), _str(model_doc.get("providerID"))
        raw, price = _tokens(doc.get("tokens")), reported_cost(doc.get("cost"))
        if not any(raw) and not price:
            continue
        call = _call(f"kilo:{vid}", len(found.calls), at, model, provider, raw, price)
        same = (call.input, call.output, call.cache_read, call.cache_write)
        twin = next((v for v in v1 if v[1] == same and abs(v[0] - (at or 0)) <= SAME_CALL_MS), None)
        if twin is not None:
            v1.remove(twin)
            found.v2_copies += 1
            continue
        found.calls.append(call)
        found.model, found.provider = model or found.model, provider or found.provider
    return top


def is_backfill(key: str) -> bool:
    """A call from OpenCode 2's copy of a 1.x message (whose original may be gone from `message` since)."""
    return key.startswith("kilo:" + BACKFILL)


def _tokens(value: Any) -> tuple[int, int, int, int, int]:
    """(input, output, reasoning, cache read, cache write) as Kilo writes them."""
    if not isinstance(value, dict):
        return 0, 0, 0, 0, 0
    cache: dict = value["cache"] if isinstance(value.get("cache"), dict) else {}
    n = token_count
    return (
        n(value.get("input")),
        n(value.get("output")),
        n(value.get("reasoning")),
        n(cache.get("read")),
        n(cache.get("write")),
    )


def _int(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else 0


def _str(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _numbers(text: Any) -> list | None:
    """A JSON array of numbers and nulls (a step's usage) without a JSON parser (the cold read's hot loop);
    anything else through one."""
    if not isinstance(text, str) or not text.startswith("["):
        return None
    out: list = []
    for item in text[1:-1].split(","):
        if item.isdigit():
            out.append(int(item))
        elif item == "null":
            out.append(None)
        else:
            try:
                out.append(float(item))
            except ValueError:
                return _json(text)  # (a string or an object in it: the parser says what it is)
    return out


def _json(data: Any) -> Any:
    try:
        return json.loads(data)
    except (TypeError, ValueError, RecursionError):
        return None


def survey(path: str) -> dict[str, Any]:
    """What a database holds, for `doctor`: whether it is there, its sessions and assistant messages, its newest
    migration, and what stops trayburn reading it (None when nothing does)."""
    out: dict[str, Any] = {"exists": os.path.isfile(path), "sessions": None, "messages": None, "schema": None,
                           "wal": os.path.exists(path + "-wal"), "problem": None}  # fmt: skip
    if not out["exists"]:
        return out
    try:
        con = _connect(path)
        try:
            con.execute("BEGIN")
            out["schema"] = _newest_migration(con)
            _schema(con)
            out["sessions"] = con.execute("SELECT count(*) FROM session").fetchone()[0]
            out["messages"] = con.execute("SELECT count(*) FROM message").fetchone()[0]
            con.execute("COMMIT")
        finally:
            con.close()
    except FileProblem as exc:
        out["problem"] = str(exc)
    except sqlite3.Error as exc:
        out["problem"] = _why(exc)
    if out["problem"] is None and out["schema"] and out["schema"] > NEWEST_KNOWN:
        out["problem"] = None
        out["newer"] = f"newer than trayburn was checked against ({NEWEST_KNOWN}); read as that schema"
    return out
