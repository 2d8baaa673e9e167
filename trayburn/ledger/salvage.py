"""Copying a ledger's rows into another: what a damaged ledger still yields into its rebuilt
successor, or a ledger deleted or replaced under a running trayburn into the file now at its place.

Rows are read table by table in rowid ranges; a range SQLite cannot read is halved until only the
unreadable rows are left out. Rows the target already has win (by session id, by path, by a call's
key and file); files are matched by path. Then every call's owner is settled again, by the one rule.
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


def recover(broken: Path, db: sqlite3.Connection) -> Salvaged | None:
    """The rows a damaged ledger file still yields, copied into `db` (a new, empty ledger). Files are
    copied without their checkpoints, so every file still on disk is read again. None when nothing of
    it can be read as a ledger."""
    if not broken.is_file():
        return None
    try:
        src = sqlite3.connect(f"{broken.absolute().as_uri()}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        log.warning("nothing recovered from %s: %s", broken, exc)
        return None
    try:
        return merge(src, db, keep_checkpoints=False)
    finally:
        src.close()


def merge(src: sqlite3.Connection, dst: sqlite3.Connection, keep_checkpoints: bool) -> Salvaged | None:
    """Copy what `src` holds (and can be read) into `dst`, in one transaction of `dst`'s."""
    columns = {t: _columns(src, t) & _columns(dst, t) for t in ("sessions", "files", "calls")}
    if not columns["calls"] >= NEEDED or not {"id", "path", "session_id", "kind"} <= columns["files"]:
        return None
    dst.execute("BEGIN IMMEDIATE")
    try:
        _copy_sessions(src, dst, columns["sessions"])
        file_ids = _copy_files(src, dst, columns["files"], keep_checkpoints)
        got = _copy_calls(src, dst, columns["calls"], file_ids)
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
