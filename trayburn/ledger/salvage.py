"""What a damaged ledger keeps: its pages (pages.py) merged with the newest sound backup (backups.py) into a
rebuilt ledger; and what it held that nothing gave back (`rebuilt`, for `doctor`). Never decides on its own that
a ledger is damaged (schema.py does).

Copying a ledger's rows into another: what a damaged ledger still yields into its rebuilt successor, or a
ledger deleted or replaced under a running trayburn into the file now at its place.

A damaged file's page rows are committed first (a backup that fails costs only itself), then the newest
sound backup is merged (`backups.problem` says which are not: each is tried in turn). A readable ledger is
read table by table in rowid ranges; a range SQLite cannot read is halved until only the unreadable rows are
left out. Rows the target already has win (by session id, by path, by a call's key and file); files are
matched by path. Then every call's owner is settled again, by the one rule. The calls the damaged file held
are known beyond its table's own pages, by key, from its indexes: those the rebuild and the refreshes after it
do not bring back are counted and dated as lost.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from ..files import atomic_write
from . import backups
from .pages import NotSQLite, Pages, read_pages
from .writer import SETTLE

log = logging.getLogger(__name__)

CHUNK = 1024  # rows per range read
CHECKPOINT = (
    "size", "mtime_ns", "inode", "bad_size", "bad_mtime_ns", "bad_inode", "error", "ctime_ns", "bad_ctime_ns", "meta",
)  # fmt: skip
NEEDED = {"key", "session_id", "file_id", "ts_ms", "input", "output", "cache_read", "cache_write"}


class Salvaged(NamedTuple):
    calls: int  # calls rows copied (or already there)
    of: int  # calls rows the source held, as far as it says
    pages: int = 0  # calls rows read from the damaged file's pages
    backup: str | None = None  # the backup merged (its file name)
    from_backup: int = 0  # calls rows that backup added
    refused: tuple[tuple[str, str], ...] = ()  # backups passed over: (file name, why)
    missing: tuple[tuple[str, int | None], ...] = ()  # (key, ts_ms if known) of calls held that neither gave


def recover(
    broken: Path, db: sqlite3.Connection, ledger: Path | None = None, newest_schema: int = 99
) -> Salvaged | None:
    """What a damaged ledger file still holds, copied into `db` (a new, empty ledger), merged with the newest
    sound backup beside the ledger: the file's rows first, read page by page (`read_pages`: a damaged root or
    interior page hides no intact leaf behind it) and committed, then the rows of the first backup, newest
    first, that is sound (`backups.problem`) and merges whole; each call's owner is then settled once. Files
    are copied without their checkpoints, so every file still on disk is read again. `ledger`: where the
    backups are (default: beside `db`); `newest_schema`: the newest ledger schema a backup may have. None
    when neither yields anything."""
    rows: dict[str, list[tuple]] = {}
    held: dict[int, tuple[str, int | None]] = {}
    if broken.is_file():
        try:
            rows, held = _page_rows(read_pages(broken))
        except (OSError, NotSQLite) as exc:
            log.warning("no page of %s could be read: %s", broken, exc)
    pages = len(rows.get("calls", []))
    _in_one(db, lambda: _insert_pages(db, rows))  # committed: a backup that fails below costs only itself
    refused: list[tuple[str, str]] = []
    merged, added = None, 0
    for found in backups.listed(ledger if ledger is not None else _ledger_path(db)):
        why = backups.problem(found, newest_schema)
        if why is None:
            before = _count(db, 0)
            why = _merge_backup(found.path, db)
            added = _count(db, 0) - before
        if why is None:
            merged = found.path.name
            break
        refused.append((found.path.name, why))
        log.info("the backup %s was not used: %s", found.path, why)  # (the notice says it)
    if not pages and merged is None:
        return None
    _in_one(db, lambda: (db.execute(_SHADOWED_ROLLUPS), db.execute(SETTLE)))
    calls = _count(db, 0)
    missing = _missing(db, held)
    return Salvaged(calls, max(calls, len(held)), pages, merged, added, tuple(refused), missing)


def _in_one(db: sqlite3.Connection, work) -> None:
    db.execute("BEGIN IMMEDIATE")
    try:
        work()
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def _merge_backup(path: Path, db: sqlite3.Connection) -> str | None:
    """The backup's rows the target lacks, in one transaction (rolled back whole when it fails): None, or why not."""
    try:
        src = backups.open_backup(path)
    except sqlite3.Error as exc:
        return str(exc)
    try:
        got = merge(src, db, keep_checkpoints=False, settle=False)
    except sqlite3.Error as exc:
        return f"it could not be read ({exc})"
    finally:
        src.close()
    return None if got is not None else "it lacks the ledger's columns"


def _missing(db: sqlite3.Connection, held: dict[int, tuple[str, int | None]]) -> tuple[tuple[str, int | None], ...]:
    """Of the calls the damaged file held (by its pages and indexes), those whose key the new ledger lacks."""
    if not held:
        return ()
    keys = {key for key, _ in held.values()}
    have: set[str] = set()
    listed = list(keys)
    for i in range(0, len(listed), 500):
        part = listed[i : i + 500]
        have.update(r[0] for r in db.execute(f"SELECT key FROM calls WHERE key IN ({','.join('?' * len(part))})", part))
    out: dict[str, int | None] = {}
    for key, ts in held.values():
        if key not in have and (out.get(key) is None):
            out[key] = ts
    return tuple(sorted(out.items(), key=lambda kv: (kv[1] or 0, kv[0])))


# A session's rollup row (seq < 0: its total, while no message of it had metrics) brought back from an older
# page or backup beside its per-message rows would count twice: dropped, as a refresh drops it.
_SHADOWED_ROLLUPS = "DELETE FROM calls WHERE seq < 0 AND session_id IN (SELECT session_id FROM calls WHERE seq >= 0)"


def _ledger_path(db: sqlite3.Connection) -> Path:
    return Path(next(r[2] for r in db.execute("PRAGMA database_list") if r[1] == "main"))


# The current schema's columns in table order (migrations append, so an older row is a prefix of these).
_TABLES = {
    "sessions": ("id", "folder", "started_ms", "ended_ms", "status", "title", "prompt", "cwd", "workspace_root",
                 "model", "provider", "source", "forked_from", "removed", "origin", "feed"),
    "files": ("id", "path", "session_id", "kind", "agent", "size", "mtime_ns", "inode", "bad_size",
              "bad_mtime_ns", "bad_inode", "error", "gone", "origin", "feed", "ctime_ns", "bad_ctime_ns", "meta"),
    "calls": ("id", "key", "session_id", "file_id", "agent", "seq", "ts_ms", "model", "input", "output",
              "cache_read", "cache_write", "cost", "tools", "counted", "provider", "commands"),
}  # fmt: skip
_FEWEST = {"sessions": 13, "files": 13, "calls": 15}  # schema 2's rows, before the columns schema 3 added


def _kind(v: list) -> str | None:
    """Which of the ledger's tables a row of this shape belongs to (None: another table's, or an index's)."""
    n = len(v)
    if n >= 13 and v[0] is None and isinstance(v[1], str | bytes) and isinstance(v[2], str):
        calls = _FEWEST["calls"] <= n <= 17 and all(isinstance(v[i], int) for i in (3, 6, 8, 9, 10, 11))
        if calls:
            return "calls"
        return "files" if n <= len(_TABLES["files"]) and isinstance(v[3], str) else None
    master = ("table", "index", "trigger", "view")
    if _FEWEST["sessions"] <= n <= 16 and isinstance(v[0], str) and v[0] not in master:
        return "sessions"
    return None


def _page_rows(found: Pages) -> tuple[dict[str, list[tuple]], dict[int, tuple[str, int | None]]]:
    """Every row the pages yield, by table (a row's rowid as its id), and every call the file held as far as
    its pages and indexes tell: rowid -> (key, its time when it was counted)."""
    rows: dict[str, list[tuple]] = {t: [] for t in _TABLES}
    keys: dict[int, str] = {}
    times: dict[int, int] = {}
    for _page, rowid, values in found.rows():
        kind = _kind(values)
        if kind is None:
            continue
        if kind != "sessions":
            values[0] = rowid  # the INTEGER PRIMARY KEY is the rowid, stored as NULL in the record
        if kind == "calls":
            keys[rowid] = values[1]
            if len(values) > 14:
                if values[14] == 1:
                    times[rowid] = values[6]
                values[14] = 0  # counted: settled again at the end
        elif kind == "files":
            values[5:12] = [None] * len(values[5:12])  # no checkpoint: every file on disk is read again
            values[15:18] = [None] * len(values[15:18])  # (its change times, and the metadata beside them)
        rows[kind].append(tuple(values))
    for entry in found.index_rows():
        shape = tuple(type(v) for v in entry)
        if shape == (str, int, int):  # calls' UNIQUE(key, file_id): key, file id, rowid
            keys.setdefault(entry[2], entry[0])
        elif shape == (int, int):  # calls_day: a counted call's time, rowid
            times.setdefault(entry[1], entry[0])
    return rows, {rowid: (key, times.get(rowid)) for rowid, key in keys.items()}


def _insert_pages(db: sqlite3.Connection, rows: dict[str, list[tuple]]) -> None:
    """The pages' rows into the new ledger, ids kept (it is empty); calls whose files row was on the damaged
    page get a files row of their own, marked gone (its file, if still on disk, is read again under its path)."""
    for table in ("sessions", "files", "calls"):
        items = rows.get(table, [])
        for n in sorted({len(r) for r in items}):
            names = _TABLES[table][:n]
            sql = f"INSERT OR IGNORE INTO {table}({','.join(names)}) VALUES({','.join('?' * n)})"
            db.executemany(sql, [r for r in items if len(r) == n])
    db.execute(
        "INSERT OR IGNORE INTO files(id, path, session_id, kind, gone) SELECT c.file_id,"
        " '(recovered: file ' || c.file_id || ' of a damaged ledger)', c.session_id, 'messages', 1"  # (LOST)
        " FROM calls c WHERE NOT EXISTS (SELECT 1 FROM files f WHERE f.id = c.file_id) GROUP BY c.file_id"
    )


def merge(
    src: sqlite3.Connection, dst: sqlite3.Connection, keep_checkpoints: bool, settle: bool = True
) -> Salvaged | None:
    """Copy what `src` holds (and can be read) into `dst`, in one transaction of `dst`'s (`settle`: and settle
    every call's owner again; False: the caller does, after its last merge)."""
    columns = {t: _columns(src, t) & _columns(dst, t) for t in ("sessions", "files", "calls")}
    if not columns["calls"] >= NEEDED or not {"id", "path", "session_id", "kind"} <= columns["files"]:
        return None
    dst.execute("BEGIN IMMEDIATE")
    try:
        _copy_sessions(src, dst, columns["sessions"])
        _name_lost_files(src, dst)
        file_ids = _copy_files(src, dst, columns["files"], keep_checkpoints)
        got = _copy_calls(src, dst, columns["calls"], file_ids)
        if settle:
            dst.execute(SETTLE)
        dst.execute("COMMIT")
    except BaseException:
        if dst.in_transaction:
            dst.execute("ROLLBACK")
        raise
    return got


def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    try:
        return {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
    except sqlite3.Error:
        return set()


def _copy_sessions(src: sqlite3.Connection, dst: sqlite3.Connection, cols: set[str]) -> None:
    if "id" not in cols:
        return
    names = sorted(cols)
    sql = f"INSERT OR IGNORE INTO sessions({','.join(names)}) VALUES({','.join('?' * len(names))})"
    dst.executemany(sql, (row for _, row in readable(src, "sessions", names)))


LOST = "(recovered: file {} of a damaged ledger)"  # the path of a files row made for calls whose own was lost
_LOST_GLOB = "(recovered: file * of a damaged ledger)"


def _name_lost_files(src: sqlite3.Connection, dst: sqlite3.Connection) -> None:
    """A files row made for calls whose own row was on a damaged page takes back its path from `src` (the same
    id, the same session, a path `dst` does not hold yet): `src`'s copies of those calls then find them by
    (key, file), and count once."""
    lost = dst.execute("SELECT id, path, session_id FROM files WHERE path GLOB ?", (_LOST_GLOB,)).fetchall()
    for file_id, path, sid in lost:
        old = path.split()[2]
        if not old.isdigit():
            continue
        try:
            row = src.execute("SELECT path, session_id FROM files WHERE id=?", (int(old),)).fetchone()
        except sqlite3.Error:
            continue
        if row is None or row[1] != sid or dst.execute("SELECT 1 FROM files WHERE path=?", (row[0],)).fetchone():
            continue
        dst.execute("UPDATE files SET path=? WHERE id=?", (row[0], file_id))


def _copy_files(src: sqlite3.Connection, dst: sqlite3.Connection, cols: set[str], keep: bool) -> dict[int, int]:
    """Files rows by path (a path the target has keeps its row); old id -> the target's id."""
    names = sorted(cols - {"id"} - (set() if keep else set(CHECKPOINT)))
    sql = f"INSERT OR IGNORE INTO files({','.join(names)}) VALUES({','.join('?' * len(names))})"
    old: dict[int, str] = {}
    rows = []
    for _, row in readable(src, "files", ["id", *names]):
        path = row[1 + names.index("path")]
        old[row[0]] = os.fsdecode(path) if isinstance(path, bytes) else path  # a BLOB: a name kept byte-exact
        rows.append(row[1:])
    dst.executemany(sql, rows)
    by_path = dict(dst.execute("SELECT path, id FROM files"))
    return {file_id: by_path[path] for file_id, path in old.items() if path in by_path}


def _copy_calls(src: sqlite3.Connection, dst: sqlite3.Connection, cols: set[str], file_ids: dict[int, int]) -> Salvaged:
    names = sorted(cols - {"id", "counted"})
    at = names.index("file_id")
    sql = f"INSERT OR IGNORE INTO calls({','.join(names)}, counted) VALUES({','.join('?' * len(names))}, 0)"
    copied, highest = 0, 0
    batch = []
    key, sid = names.index("key"), names.index("session_id")
    # calls whose file is unknown: a copy of one under its file's path would count it twice
    held = "SELECT c.key, c.session_id FROM calls c JOIN files f ON f.id = c.file_id WHERE f.path GLOB ?"
    lost = set(dst.execute(held, (_LOST_GLOB,)))
    for rowid, row in readable(src, "calls", names):
        highest = max(highest, rowid)
        if lost and (row[key], row[sid]) in lost:
            continue
        values = list(row)
        values[at] = file_ids.get(values[at]) or _lost_file(dst, values[at], values[names.index("session_id")])
        file_ids[row[at]] = values[at]
        batch.append(values)
        copied += 1
    dst.executemany(sql, batch)
    return Salvaged(copied, max(copied, _count(src, highest)))


def _lost_file(dst: sqlite3.Connection, old_id: int, sid: str) -> int:
    """A files row for calls whose own files row could not be read (marked gone: it is not on disk)."""
    path = LOST.format(old_id)
    cursor = dst.execute(
        "INSERT OR IGNORE INTO files(path, session_id, kind, gone) VALUES(?, ?, 'messages', 1)", (path, sid)
    )
    if cursor.rowcount:
        return cursor.lastrowid or 0
    return dst.execute("SELECT id FROM files WHERE path=?", (path,)).fetchone()[0]


def _count(src: sqlite3.Connection, highest: int) -> int:
    """How many calls rows the source held: its count where SQLite can still give it, else its last id."""
    try:
        return src.execute("SELECT count(*) FROM calls").fetchone()[0]
    except sqlite3.Error:
        return highest


def readable(src: sqlite3.Connection, table: str, names: list[str]) -> Iterator[tuple[int, tuple]]:
    """(rowid, row) for every row of the table SQLite can read, in rowid order; unreadable ranges left out."""
    try:
        top = src.execute(f"SELECT max(rowid) FROM {table}").fetchone()[0] or 0
    except sqlite3.Error:
        top = 1 << 20  # the table's last page is unreadable: walk a range that surely holds it
    sql = f"SELECT rowid, {','.join(names)} FROM {table} WHERE rowid BETWEEN ? AND ?"
    for lo in range(0, top + 1, CHUNK):
        yield from _range(src, sql, lo, min(lo + CHUNK - 1, top))


def _range(src: sqlite3.Connection, sql: str, lo: int, hi: int) -> Iterator[tuple[int, tuple]]:
    try:
        rows = src.execute(sql, (lo, hi)).fetchall()
    except sqlite3.Error:
        if lo == hi:
            return
        mid = (lo + hi) // 2
        yield from _range(src, sql, lo, mid)
        yield from _range(src, sql, mid + 1, hi)
        return
    for r in rows:
        yield r[0], tuple(r[1:])


# ---- what a rebuild said, kept for `doctor` -------------------------------------------------------------

REBUILT = "rebuilt.json"  # beside the ledger: the last rebuild, what it recovered and what it could not
LISTED = 100_000  # missing calls kept by key at most (beyond: counted only)


def said(got: Salvaged) -> str:
    """What a rebuild recovered and from where, for people."""
    back = got.of - len(got.missing)
    where = f"{got.pages} from its pages"
    if got.backup:
        where += f", {got.from_backup} more from the backup {got.backup}"
    out = f"recovered {back} of {got.of} calls from it ({where})"
    if got.refused:
        out += "; backups not used: " + "; ".join(f"{name} ({why})" for name, why in got.refused)
    if got.missing:
        out += f"; {len(got.missing)} it held were in no page or backup"
    return out


def keep_record(ledger: Path, notice: str, got: Salvaged | None) -> None:
    """The rebuild's record beside the ledger (best effort: a rebuild never fails for it)."""
    got = got or Salvaged(0, 0)
    doc = {
        "at_ms": int(time.time() * 1000),
        "pid": os.getpid(),
        "notice": notice,
        "held": got.of,
        "pages": got.pages,
        "backup": got.backup,
        "from_backup": got.from_backup,
        "refused": [list(r) for r in got.refused],
        "missing": [list(m) for m in got.missing[:LISTED]],
        "missing_unlisted": max(0, len(got.missing) - LISTED),
        "seen": False,
    }
    try:
        atomic_write(ledger.parent / REBUILT, json.dumps(doc).encode())
    except OSError as exc:
        log.warning("the record of the rebuild of %s was not kept: %s", ledger, exc)


@dataclass
class Rebuilt:
    """The last rebuild of the ledger, and what it held that is still not back (after the refreshes since)."""

    at_ms: int
    notice: str
    held: int  # calls the damaged ledger held, as far as its pages and indexes tell
    lost: int  # of them, calls whose key the ledger still lacks
    days: list[tuple[str, int]]  # (local day, calls lost) for those whose time is known
    undated: int  # lost calls whose time is not known
    seen: bool  # `doctor` has shown it
    here: bool  # made by this process

    def line(self) -> str:
        if not self.lost:
            return f"all {self.held} calls the damaged ledger held are back (its pages, backups and Cline's files)"
        days = ", ".join(f"{day}: {n}" for day, n in self.days)
        undated = f"{', ' if days else ''}{self.undated} of unknown day" if self.undated else ""
        return (
            f"recovered {self.held - self.lost} of the {self.held} calls the damaged ledger held; {self.lost} are in"
            f" no page, backup or Cline file: lost ({days}{undated}; their tokens and costs are not known)"
        )

    def to_json(self) -> dict:
        return {**asdict(self), "line": self.line()}


def rebuilt(db: sqlite3.Connection, ledger: Path) -> Rebuilt | None:
    """The last rebuild's record, with what is still missing now (None: no rebuild recorded, or unreadable)."""
    try:
        doc = json.loads((ledger.parent / REBUILT).read_bytes())
        missing = [(str(k), t if isinstance(t, int) else None) for k, t in doc["missing"]]
        at_ms, notice, held = int(doc["at_ms"]), str(doc["notice"]), int(doc["held"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    have: set[str] = set()
    keys = [k for k, _ in missing]
    for i in range(0, len(keys), 500):
        part = keys[i : i + 500]
        have.update(r[0] for r in db.execute(f"SELECT key FROM calls WHERE key IN ({','.join('?' * len(part))})", part))
    lost = [(k, t) for k, t in missing if k not in have]
    days: dict[str, int] = {}
    for _, t in lost:
        if t is not None:
            day = datetime.fromtimestamp(t / 1000).date().isoformat()
            days[day] = days.get(day, 0) + 1
    unlisted = int(doc.get("missing_unlisted") or 0)
    undated = sum(1 for _, t in lost if t is None) + unlisted
    seen, here = bool(doc.get("seen")), doc.get("pid") == os.getpid()
    return Rebuilt(at_ms, notice, held, len(lost) + unlisted, sorted(days.items()), undated, seen, here)


def mark_seen(ledger: Path) -> None:
    """`doctor` showed the last rebuild: from now on it is history, no longer a problem."""
    path = ledger.parent / REBUILT
    try:
        doc = json.loads(path.read_bytes())
        if not doc.get("seen"):
            doc["seen"] = True
            atomic_write(path, json.dumps(doc).encode())
    except (OSError, ValueError, AttributeError) as exc:
        log.debug("the rebuild's record not marked seen: %s", exc)
