"""Copying a ledger's rows into another: what a damaged ledger still yields into its rebuilt
successor, or a ledger deleted or replaced under a running trayburn into the file now at its place.

A damaged file is read page by page (pages.py), so a damaged root hides no intact leaf, and merged with
the newest sound backup (backup.py). A readable ledger is read table by table in rowid ranges; a range
SQLite cannot read is halved until only the unreadable rows are left out. Rows the target already has
win (by session id, by path, by a call's key and file); files are matched by path. Then every call's
owner is settled again, by the one rule.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from .writer import SETTLE

log = logging.getLogger(__name__)

CHUNK = 1024  # rows per range read
CHECKPOINT = ("size", "mtime_ns", "inode", "bad_size", "bad_mtime_ns", "bad_inode", "error")
NEEDED = {"key", "session_id", "file_id", "ts_ms", "input", "output", "cache_read", "cache_write"}


class Salvaged(NamedTuple):
    calls: int  # calls rows copied (or already there)
    of: int  # calls rows the source held, as far as it says


def recover(broken: Path, db: sqlite3.Connection, ledger: Path | None = None) -> Salvaged | None:
    """What a damaged ledger file still holds, copied into `db` (a new, empty ledger), merged with the newest
    sound backup beside the ledger (backup.py): the file's rows first, read page by page (pages.py: a damaged
    root or interior page hides no intact leaf behind it), then the backup's rows the file no longer has.
    Files are copied without their checkpoints, so every file still on disk is read again. The pages are
    read before `db`'s write lock is taken, which is then held for the inserts and one settling of every
    call's owner (about a second at 5,000 sessions). `ledger`: where the backups are (default: beside `db`).
    None when neither yields anything."""
    from . import backup, pages

    rows: dict[str, list[tuple]] = {}
    held = 0
    if broken.is_file():
        try:
            rows, held = _page_rows(pages.read(broken))
        except (OSError, pages.NotSQLite) as exc:
            log.warning("no page of %s could be read: %s", broken, exc)
    saved = backup.newest_sound(ledger if ledger is not None else _ledger_path(db))
    if not any(rows.values()) and saved is None:
        return None
    if saved is not None:
        db.execute("ATTACH DATABASE ? AS saved", (str(saved),))
    try:
        db.execute("BEGIN IMMEDIATE")
        try:
            _insert_pages(db, rows)
            if saved is not None:
                _insert_saved(db)
            db.execute(_SHADOWED_ROLLUPS)
            db.execute(SETTLE)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        of = db.execute("SELECT count(*) FROM saved.calls").fetchone()[0] if saved is not None else 0
    finally:
        if saved is not None:
            db.execute("DETACH DATABASE saved")
    calls = db.execute("SELECT count(*) FROM calls").fetchone()[0]
    return Salvaged(calls, max(calls, held, of))


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
              "bad_mtime_ns", "bad_inode", "error", "gone", "origin", "feed"),
    "calls": ("id", "key", "session_id", "file_id", "agent", "seq", "ts_ms", "model", "input", "output",
              "cache_read", "cache_write", "cost", "tools", "counted", "provider"),
}  # fmt: skip
_FEWEST = {"sessions": 13, "files": 13, "calls": 15}  # schema 2's rows, before the columns schema 3 added


def _kind(v: list) -> str | None:
    """Which of the ledger's tables a row of this shape belongs to (None: another table's, or an index's)."""
    n = len(v)
    if n >= 13 and v[0] is None and isinstance(v[1], str | bytes) and isinstance(v[2], str):
        calls = _FEWEST["calls"] <= n <= 16 and all(isinstance(v[i], int) for i in (3, 6, 8, 9, 10, 11))
        if calls:
            return "calls"
        return "files" if n <= 15 and isinstance(v[3], str) else None
    master = ("table", "index", "trigger", "view")
    if _FEWEST["sessions"] <= n <= 16 and isinstance(v[0], str) and v[0] not in master:
        return "sessions"
    return None


def _page_rows(found) -> tuple[dict[str, list[tuple]], int]:
    """Every row the pages yield, by table (a row's rowid as its id), and the most calls rows the file held
    as far as its rowids tell."""
    rows: dict[str, list[tuple]] = {t: [] for t in _TABLES}
    highest = 0
    for _page, rowid, values in found.rows():
        kind = _kind(values)
        if kind is None:
            continue
        if kind != "sessions":
            values[0] = rowid  # the INTEGER PRIMARY KEY is the rowid, stored as NULL in the record
        if kind == "calls":
            highest = max(highest, rowid)
            if len(values) > 14:
                values[14] = 0  # counted: settled again at the end
        elif kind == "files":
            values[5:12] = [None] * len(values[5:12])  # no checkpoint: every file on disk is read again
        rows[kind].append(tuple(values))
    return rows, highest


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
        " '(recovered: file ' || c.file_id || ' of a damaged ledger)', c.session_id, 'messages', 1"
        " FROM calls c WHERE NOT EXISTS (SELECT 1 FROM files f WHERE f.id = c.file_id) GROUP BY c.file_id"
    )


def _insert_saved(db: sqlite3.Connection) -> None:
    """The backup's rows the pages did not give (by session id, by path, by a call's key and file's path)."""
    cols = {t: sorted(_columns(db, t) & _saved_columns(db, t)) for t in _TABLES}
    names = ",".join(cols["sessions"])
    db.execute(f"INSERT OR IGNORE INTO main.sessions({names}) SELECT {names} FROM saved.sessions")
    names = ",".join(c for c in cols["files"] if c != "id" and c not in CHECKPOINT)
    db.execute(f"INSERT OR IGNORE INTO main.files({names}) SELECT {names} FROM saved.files")
    kept = [c for c in cols["calls"] if c not in ("id", "counted", "file_id")]
    db.execute(
        f"INSERT OR IGNORE INTO main.calls({','.join(kept)}, file_id, counted)"
        f" SELECT {','.join('c.' + c for c in kept)}, m.id, 0 FROM saved.calls c"
        " JOIN saved.files sf ON sf.id = c.file_id JOIN main.files m ON m.path = sf.path"
    )


def _saved_columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in db.execute(f"PRAGMA saved.table_info({table})")}


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
    for rowid, row in readable(src, "calls", names):
        highest = max(highest, rowid)
        values = list(row)
        values[at] = file_ids.get(values[at]) or _lost_file(dst, values[at], values[names.index("session_id")])
        file_ids[row[at]] = values[at]
        batch.append(values)
        copied += 1
    dst.executemany(sql, batch)
    return Salvaged(copied, max(copied, _count(src, highest)))


def _lost_file(dst: sqlite3.Connection, old_id: int, sid: str) -> int:
    """A files row for calls whose own files row could not be read (marked gone: it is not on disk)."""
    cursor = dst.execute(
        "INSERT OR IGNORE INTO files(path, session_id, kind, gone) VALUES(?, ?, 'messages', 1)",
        (f"(recovered: file {old_id} of a damaged ledger)", sid),
    )
    if cursor.rowcount:
        return cursor.lastrowid or 0
    return dst.execute(
        "SELECT id FROM files WHERE path=?", (f"(recovered: file {old_id} of a damaged ledger)",)
    ).fetchone()[0]


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
