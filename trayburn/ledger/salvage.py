"""What a damaged ledger keeps: its daily backups, its pages read without SQLite's b-trees, and the copy of what it
still holds into a rebuilt ledger. Never opens a file that is not a regular one, and never decides on its own
that a ledger is damaged (schema.py does).

Backups: rotating copies of the ledger beside it, one a day, the last seven, 0600. Each is made with SQLite's
online backup API (a consistent copy while other processes read and write: in WAL mode the copy's read
transaction blocks no writer), into a temp file beside the ledger, checked with `integrity_check` after writing,
then renamed into place, so a backup is whole and sound or not there at all. A ledger that fails the check is
never backed up over a good backup. A rebuild merges the newest sound backup with what the damaged file still
holds (`recover`, below).

Pages: the rows of a damaged SQLite file read page by page, over the documented file format
(https://www.sqlite.org/fileformat2.html), without SQLite's b-trees. SQLite reaches a table's rows from its root
page down; when a root or an interior page is damaged, every leaf page behind it is unreachable, though intact.
This reader walks the file's pages in order instead and decodes every cell of every table-leaf page (type 0x0D)
as a record: (rowid, values). Free pages (the freelist, whose old cells may hold rows since deleted or moved)
are left out. A page that does not decode (the damaged one) is skipped whole. Which table a row belongs to is
for the caller to tell, by its shape.

The copy: what a damaged ledger still yields into its rebuilt successor, or a ledger deleted or replaced under a
running trayburn into the file now at its place. A damaged file is read page by page (`read_pages`), so a
damaged root hides no intact leaf, and merged with the newest sound backup (`newest_sound`). A readable ledger
is read table by table in rowid ranges; a range SQLite cannot read is halved until only the unreadable rows are
left out. Rows the target already has win (by session id, by path, by a call's key and file); files are matched
by path. Then every call's owner is settled again, by the one rule.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import stat
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from .. import files
from .writer import SETTLE

log = logging.getLogger(__name__)

BACKUPS_KEPT = 7
BACKUP_EVERY_S = 86400.0
_NAME = re.compile(r"\.backup-(\d{8}-\d{6})$")


def backups(ledger: Path) -> list[Path]:
    """The ledger's backups, newest first: regular files only (a FIFO, device or link named like one is left
    alone: opening a FIFO waits for a writer that never comes)."""
    try:
        names = os.listdir(ledger.parent)
    except OSError:
        return []
    prefix = f"{ledger.name}.backup-"
    found = [n for n in names if n.startswith(prefix) and _NAME.search(n) and _regular(ledger.parent / n)]
    return [ledger.parent / n for n in sorted(found, reverse=True)]


def _regular(path: Path, opened: bool = False) -> bool:
    """`path` is a regular file, not a link (lstat: nothing opened). `opened`: checked again on a descriptor
    opened without blocking and without following a link, just before SQLite opens it by name."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return False
        if not opened:
            return True
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | _NOFOLLOW)
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode)
    finally:
        os.close(fd)


_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def backup_due(ledger: Path, now: float | None = None) -> bool:
    """No backup was made in the day before `now` (by the time in its name: when it was made)."""
    now = time.time() if now is None else now
    for b in backups(ledger)[:1]:
        found = _NAME.search(b.name)
        try:
            made = time.mktime(time.strptime(found[1], "%Y%m%d-%H%M%S")) if found else 0.0
        except (ValueError, OverflowError):
            return True
        return not 0 <= now - made < BACKUP_EVERY_S
    return True


def make_backup(db: sqlite3.Connection, ledger: Path, now: float | None = None) -> Path | None:
    """A backup of the open ledger `db` (at `ledger`), checked; the oldest beyond BACKUPS_KEPT removed. None when the
    copy failed its check or could not be written (logged: a backup never fails the caller)."""
    now = time.time() if now is None else now
    name = f"{ledger.name}.backup-{time.strftime('%Y%m%d-%H%M%S', time.localtime(now))}"
    target = ledger.parent / name
    tmp = ledger.parent / f".{name}.{os.getpid()}.tmp"  # two processes due at once never share one
    try:
        fd = files.open_private(tmp, os.O_RDWR | os.O_CREAT | os.O_TRUNC)
        os.close(fd)
        copy = sqlite3.connect(tmp, isolation_level=None)
        try:
            db.backup(copy)
            copy.execute("PRAGMA journal_mode=DELETE")
            verdict = copy.execute("PRAGMA integrity_check(1)").fetchone()[0]
        finally:
            copy.close()
        if verdict != "ok":
            log.warning("no backup of %s: the copy failed SQLite's integrity check (%s)", ledger, verdict)
            tmp.unlink(missing_ok=True)
            return None
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except (OSError, sqlite3.Error) as exc:
        log.warning("no backup of %s: %s", ledger, exc)
        tmp.unlink(missing_ok=True)
        return None
    for old in backups(ledger)[BACKUPS_KEPT:]:
        old.unlink(missing_ok=True)
    return target


def daily_backup(db: sqlite3.Connection, ledger: Path, now: float | None = None) -> Path | None:
    """`make` when one is due and the ledger holds a call (the cheap checks first: one folder listing)."""
    if not backup_due(ledger, now):
        return None
    try:
        if db.execute("SELECT 1 FROM calls LIMIT 1").fetchone() is None:
            return None
    except sqlite3.Error:
        return None
    return make_backup(db, ledger, now)


def newest_sound(ledger: Path) -> Path | None:
    """The newest backup that opens and passes SQLite's quick check (never a file that is not a regular one)."""
    for b in backups(ledger):
        if not _regular(b, opened=True):
            continue
        try:
            src = sqlite3.connect(f"{b.absolute().as_uri()}?mode=ro", uri=True, isolation_level=None)
        except sqlite3.Error:
            continue
        try:
            if src.execute("PRAGMA quick_check(1)").fetchone()[0] == "ok":
                return b
        except sqlite3.Error:
            pass
        finally:
            src.close()
    return None


MAGIC = b"SQLite format 3\x00"
TABLE_LEAF = 0x0D
SIZES = (4096, 512, 1024, 2048, 8192, 16384, 32768, 65536)  # the page sizes SQLite writes
MAX_FREE = 1 << 22  # freelist pages followed at most (a loop in a damaged chain ends there)


class NotSQLite(ValueError):
    """The file's header is not SQLite's (or is itself the damaged page)."""


class Pages:
    def __init__(self, data: bytes, wal: bytes = b"", guess: int | None = None):
        """`guess`: the page size to assume when the header (page 1) is the damaged page: no freelist is
        then known, and the file's text is taken as UTF-8 (as trayburn's ledger always is)."""
        self.data, self.header = data, guess is None
        if guess is not None:
            self.size = self.usable = guess
        else:
            if len(data) < 512 or data[:16] != MAGIC:
                raise NotSQLite("not an SQLite file (its header is damaged or missing)")
            size = struct.unpack(">H", data[16:18])[0]
            self.size = 65536 if size == 1 else size
            if self.size < 512 or self.size & (self.size - 1):
                raise NotSQLite(f"its page size ({size}) is not one SQLite writes")
            self.usable = self.size - data[20]
            if data[56:60] not in (b"\x00\x00\x00\x01", b"\x00\x00\x00\x00"):
                raise NotSQLite("its text is not UTF-8")
        self.count = len(data) // self.size
        self.newer = _committed(wal, self.size)  # pages the WAL holds a newer committed copy of
        self.count = max([self.count, *self.newer])

    def page(self, number: int) -> bytes:
        newer = self.newer.get(number)
        if newer is not None:
            return newer
        return self.data[(number - 1) * self.size : number * self.size]

    def free(self) -> set[int]:
        """The freelist's pages (trunks and leaves), as far as its chain can be followed."""
        out: set[int] = set()
        if not self.header:
            return out
        trunk = struct.unpack(">I", self.data[32:36])[0]
        while 0 < trunk <= self.count and trunk not in out and len(out) < MAX_FREE:
            out.add(trunk)
            page = self.page(trunk)
            following, n = struct.unpack(">II", page[:8])
            n = min(n, (self.usable - 8) // 4)
            out.update(x for x in struct.unpack(f">{n}I", page[8 : 8 + 4 * n]) if 0 < x <= self.count)
            trunk = following
        return out

    def rows(self) -> Iterator[tuple[int, int, list]]:
        """(page number, rowid, values) of every cell of every table-leaf page not on the freelist."""
        free = self.free()
        for number in range(1, self.count + 1):
            if number in free:
                continue
            try:
                cells = list(self._leaf(number))
            except (IndexError, ValueError, struct.error, UnicodeDecodeError, OverflowError):
                continue  # the damaged page: skipped whole, never half-read
            for rowid, values in cells:
                yield number, rowid, values

    def _leaf(self, number: int) -> Iterator[tuple[int, list]]:
        page = self.page(number)
        at = 100 if number == 1 else 0
        if page[at] != TABLE_LEAF:
            return
        cells = struct.unpack(">H", page[at + 3 : at + 5])[0]
        pointers = struct.unpack(f">{cells}H", page[at + 8 : at + 8 + 2 * cells])
        out = []
        for p in pointers:
            if not at + 8 + 2 * cells <= p < self.usable:
                raise ValueError("a cell pointer outside the page")
            out.append(self._cell(page, p))
        yield from out

    def _cell(self, page: bytes, p: int) -> tuple[int, list]:
        size, p = varint(page, p)
        rowid, p = varint(page, p)
        payload = self._payload(page, p, size)
        return rowid, record(payload)

    def _payload(self, page: bytes, p: int, size: int) -> bytes:
        """The cell's payload, its overflow pages followed where it does not fit on the page."""
        u = self.usable
        most = u - 35
        if size <= most:
            return page[p : p + size]
        least = ((u - 12) * 32 // 255) - 23
        local = least + (size - least) % (u - 4)
        if local > most:
            local = least
        parts = [page[p : p + local]]
        overflow = struct.unpack(">I", page[p + local : p + local + 4])[0]
        left, seen = size - local, set()
        while left > 0:
            if not 0 < overflow <= self.count or overflow in seen:
                raise ValueError("a broken overflow chain")
            seen.add(overflow)
            chunk = self.page(overflow)
            take = min(left, u - 4)
            parts.append(chunk[4 : 4 + take])
            left -= take
            overflow = struct.unpack(">I", chunk[:4])[0]
        return b"".join(parts)


def varint(buf: bytes, p: int) -> tuple[int, int]:
    """SQLite's big-endian varint (1-9 bytes) at `p`: (value, the offset after it)."""
    value = 0
    for i in range(8):
        b = buf[p + i]
        value = (value << 7) | (b & 0x7F)
        if b < 0x80:
            return value, p + i + 1
    return (value << 8) | buf[p + 8], p + 9


_INT = {1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8}


def record(payload: bytes) -> list:
    """A record's values (NULL, integers, REAL, TEXT as str, BLOB as bytes)."""
    header, p = varint(payload, 0)
    if not 0 < header <= len(payload):
        raise ValueError("a record header past its payload")
    types = []
    while p < header:
        t = payload[p]
        if t < 0x80:  # a one-byte serial type: all but long TEXT and BLOB
            p += 1
        else:
            t, p = varint(payload, p)
        types.append(t)
    values: list = []
    add = values.append
    at = header
    for t in types:
        if t >= 12:
            n = (t - 12) >> 1
            raw = payload[at : at + n]
            add(raw.decode("utf-8") if t & 1 else bytes(raw))
            at += n
        elif t == 0:
            add(None)
        elif t < 7:
            n = _INT[t]
            add(int.from_bytes(payload[at : at + n], "big", signed=True))
            at += n
        elif t == 7:
            add(_DOUBLE(payload, at)[0])
            at += 8
        elif t < 10:
            add(t - 8)
        else:
            raise ValueError("a reserved serial type")
    if at > len(payload):
        raise ValueError("a value past its record")
    return values


_DOUBLE = struct.Struct(">d").unpack_from


def _committed(wal: bytes, size: int) -> dict[int, bytes]:
    """The last committed copy of each page in a WAL file (frames after the last commit, or of an older
    generation of the WAL, whose salts differ from its header's, are left out; checksums are not checked)."""
    if len(wal) < 32 or struct.unpack(">I", wal[:4])[0] not in (0x377F0682, 0x377F0683):
        return {}
    if struct.unpack(">I", wal[8:12])[0] != size:
        return {}
    salts = wal[16:24]
    pending: dict[int, bytes] = {}
    out: dict[int, bytes] = {}
    at = 32
    while at + 24 + size <= len(wal):
        number, commit = struct.unpack(">II", wal[at : at + 8])
        if wal[at + 8 : at + 16] != salts:
            break
        pending[number] = wal[at + 24 : at + 24 + size]
        if commit:
            out.update(pending)
            pending = {}
        at += 24 + size
    return out


def read_pages(path: Path) -> Pages:
    """The file's pages, with the committed pages of its WAL (`<path>-wal`) where there is one."""
    wal = Path(str(path) + "-wal")
    try:
        newer = wal.read_bytes()
    except OSError:
        newer = b""
    data = path.read_bytes()
    try:
        return Pages(data, newer)
    except NotSQLite:
        if data[:16] == MAGIC:
            raise
    # the header itself damaged: the page size that decodes the most rows
    best = max((Pages(data, newer, size) for size in SIZES), key=lambda p: sum(1 for _ in p.rows()))
    if not any(True for _ in best.rows()):
        raise NotSQLite("not an SQLite file (its header is damaged or missing, and no page decodes)")
    return best


CHUNK = 1024  # rows per range read
CHECKPOINT = ("size", "mtime_ns", "inode", "bad_size", "bad_mtime_ns", "bad_inode", "error")
NEEDED = {"key", "session_id", "file_id", "ts_ms", "input", "output", "cache_read", "cache_write"}


class Salvaged(NamedTuple):
    calls: int  # calls rows copied (or already there)
    of: int  # calls rows the source held, as far as it says


def recover(broken: Path, db: sqlite3.Connection, ledger: Path | None = None) -> Salvaged | None:
    """What a damaged ledger file still holds, copied into `db` (a new, empty ledger), merged with the newest
    sound backup beside the ledger (`newest_sound`): the file's rows first, read page by page (`read_pages`: a damaged
    root or interior page hides no intact leaf behind it), then the backup's rows the file no longer has.
    Files are copied without their checkpoints, so every file still on disk is read again. The pages are
    read before `db`'s write lock is taken, which is then held for the inserts and one settling of every
    call's owner (about a second at 5,000 sessions). `ledger`: where the backups are (default: beside `db`).
    None when neither yields anything."""
    pass

    rows: dict[str, list[tuple]] = {}
    held = 0
    if broken.is_file():
        try:
            rows, held = _page_rows(read_pages(broken))
        except (OSError, NotSQLite) as exc:
            log.warning("no page of %s could be read: %s", broken, exc)
    saved = newest_sound(ledger if ledger is not None else _ledger_path(db))
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
