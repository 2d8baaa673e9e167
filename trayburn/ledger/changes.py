"""What the ledger's writes changed in the rows the figures are made of, between two looks: the sessions whose
calls or own row changed, and the earliest time of a call added, removed or changed (its old time or its new).
For a process that keeps figures between refreshes (the tray): a figure of a day no changed call falls in, and of
no changed session, stands as it was. Never decides what a figure is: it only says what the rows did.

Kept by temporary triggers on this process's connection (SQLite's TEMP triggers may watch the main tables; they
live and die with the connection, never in the file). So what they cannot see is said as unknown (None), which
a reader takes as "everything may have changed": the first look (nothing was tracked before it), another
connection's commit since the last look (`PRAGMA data_version`: another process's refresh, a window's), and a
connection opened again (a ledger reopened, rebuilt or replaced: the triggers went with the old one).

A session's row changed in what prices or groups its calls (its provider, origin, source, folders) counts as a
change of all its calls: the earliest is then its earliest call's time. A row of another machine's file (its name,
gone or not) is said apart (`machines`): the split by machine names them.
"""

from __future__ import annotations

import sqlite3
from typing import NamedTuple


class Changes(NamedTuple):
    """What changed between two looks."""

    sessions: frozenset[str]  # sessions whose calls, or whose own row, changed (added ones included)
    earliest_ms: int | None  # the earliest time of a call added, removed or changed; None: no call changed
    machines: bool = False  # another machine's file was added, named, marked gone or removed (`machine_files`)

    @property
    def none(self) -> bool:
        return not self.sessions and self.earliest_ms is None and not self.machines


NOTHING = Changes(frozenset(), None)

_CALL_COLUMNS = ("key", "session_id", "file_id", "agent", "seq", "ts_ms", "model", "input", "output", "cache_read",
                 "cache_write", "cost", "tools", "counted", "provider", "commands")  # fmt: skip
_PRICING = ("provider", "origin", "source", "workspace_root", "cwd")  # a session's columns its calls' figures read
_SESSION_COLUMNS = (*_PRICING, "folder", "started_ms", "ended_ms", "status", "title", "prompt", "model", "removed",
                    "forked_from", "feed")  # fmt: skip
_MACHINE_COLUMNS = ("kind", "origin", "path", "agent", "gone", "error")  # what `Ledger.machine_files` reads


def _differ(columns: tuple[str, ...]) -> str:
    return " OR ".join(f"OLD.{c} IS NOT NEW.{c}" for c in columns)


def _low(ms: str) -> str:
    """Lower the kept earliest time to `ms` (an SQL expression; NULL leaves it)."""
    return f"UPDATE tb_changed SET ms = coalesce(min(ms, {ms}), ms, {ms});"


def _session(sid: str) -> str:
    return f"INSERT OR IGNORE INTO tb_changed_sessions VALUES({sid});"


_MACHINES = "UPDATE tb_changed SET machines = 1;"
_SESSION_CALLS = "(SELECT min(ts_ms) FROM main.calls WHERE session_id = NEW.id)"
_IS_MACHINE = "{0}.kind = 'machine' AND {0}.origin IS NOT NULL"
TRIGGERS = [
    "CREATE TEMP TABLE IF NOT EXISTS tb_changed_sessions(id TEXT PRIMARY KEY)",
    "CREATE TEMP TABLE IF NOT EXISTS tb_changed(ms INTEGER, machines INTEGER NOT NULL DEFAULT 0)",
    "INSERT INTO tb_changed(ms) SELECT NULL WHERE NOT EXISTS (SELECT 1 FROM tb_changed)",
    "CREATE TEMP TRIGGER IF NOT EXISTS tb_call_added AFTER INSERT ON main.calls"
    f" BEGIN {_session('NEW.session_id')} {_low('NEW.ts_ms')} END",
    "CREATE TEMP TRIGGER IF NOT EXISTS tb_call_removed AFTER DELETE ON main.calls"
    f" BEGIN {_session('OLD.session_id')} {_low('OLD.ts_ms')} END",
    f"CREATE TEMP TRIGGER IF NOT EXISTS tb_call_changed AFTER UPDATE ON main.calls WHEN {_differ(_CALL_COLUMNS)}"
    f" BEGIN {_session('OLD.session_id')} {_session('NEW.session_id')} {_low('min(OLD.ts_ms, NEW.ts_ms)')} END",
    f"CREATE TEMP TRIGGER IF NOT EXISTS tb_session_added AFTER INSERT ON main.sessions BEGIN {_session('NEW.id')} END",
    "CREATE TEMP TRIGGER IF NOT EXISTS tb_session_removed AFTER DELETE ON main.sessions"
    f" BEGIN {_session('OLD.id')} {_low('0')} END",
    "CREATE TEMP TRIGGER IF NOT EXISTS tb_session_changed AFTER UPDATE ON main.sessions"
    f" WHEN {_differ(_SESSION_COLUMNS)} BEGIN {_session('NEW.id')} END",
    "CREATE TEMP TRIGGER IF NOT EXISTS tb_session_repriced AFTER UPDATE ON main.sessions"
    f" WHEN {_differ(_PRICING)} BEGIN {_low(_SESSION_CALLS)} END",
    "CREATE TEMP TRIGGER IF NOT EXISTS tb_machine_added AFTER INSERT ON main.files"
    f" WHEN {_IS_MACHINE.format('NEW')} BEGIN {_MACHINES} END",
    "CREATE TEMP TRIGGER IF NOT EXISTS tb_machine_removed AFTER DELETE ON main.files"
    f" WHEN {_IS_MACHINE.format('OLD')} BEGIN {_MACHINES} END",
    "CREATE TEMP TRIGGER IF NOT EXISTS tb_machine_changed AFTER UPDATE ON main.files"
    f" WHEN ({_IS_MACHINE.format('OLD')} OR {_IS_MACHINE.format('NEW')}) AND ({_differ(_MACHINE_COLUMNS)})"
    f" BEGIN {_MACHINES} END",
]
_NAMES = tuple(sql.split()[6] for sql in TRIGGERS if " TRIGGER " in sql)


class Tracker:
    """The looks of one process at one ledger's connection (`Ledger.changes` calls `take` under its lock)."""

    def __init__(self) -> None:
        self._db: sqlite3.Connection | None = None
        self._version: int | None = None
        self._writes = -1  # the connection's rows written (`total_changes`, triggers' included) at the last look

    def take(self, db: sqlite3.Connection) -> Changes | None:
        """What changed since the last look, and a new look begins; None: unknown (see the module's docstring).
        Nothing written since, by this connection or another: nothing changed, and no table is read (so even where
        the triggers cannot be made, a ledger nobody writes is known unchanged)."""
        version = db.execute("PRAGMA data_version").fetchone()[0]
        same = db is self._db and version == self._version
        if same and db.total_changes == self._writes:
            return NOTHING
        self._db, self._version = db, version
        try:
            tracked = same and _installed(db)
            if not tracked:
                for sql in TRIGGERS:
                    db.execute(sql)
            sessions = frozenset(r[0] for r in db.execute("SELECT id FROM tb_changed_sessions"))
            low, machines = db.execute("SELECT ms, machines FROM tb_changed").fetchone()
            if sessions or low is not None or machines:
                db.execute("DELETE FROM tb_changed_sessions")
                db.execute("UPDATE tb_changed SET ms = NULL, machines = 0")
        finally:
            self._writes = db.total_changes
        return Changes(sessions, low, bool(machines)) if tracked else None


def _installed(db: sqlite3.Connection) -> bool:
    marks = ",".join("?" * len(_NAMES))
    found = db.execute(f"SELECT count(*) FROM sqlite_temp_master WHERE type='trigger' AND name IN ({marks})", _NAMES)
    return found.fetchone()[0] == len(_NAMES)
