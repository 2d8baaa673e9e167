"""Reading the rows of a damaged SQLite file page by page, over the documented file format
(https://www.sqlite.org/fileformat2.html), without SQLite's b-trees.

SQLite reaches a table's rows from its root page down; when a root or an interior page is damaged, every
leaf page behind it is unreachable, though intact. This reader walks the file's pages in order instead and
decodes every cell of every table-leaf page (type 0x0D) as a record: (rowid, values). Free pages (the
freelist, whose old cells may hold rows since deleted or moved) and pages past the database's size are left
out. A page that does not decode (the damaged one) is skipped whole. Which table a row belongs to is for the
caller to tell, by its shape. Index-leaf pages (0x0A) are read too (`index_rows`): what an index holds of a
table's rows survives the table's own pages.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

MAGIC = b"SQLite format 3\x00"
TABLE_LEAF = 0x0D
INDEX_LEAF = 0x0A
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
        if self.header:  # pages past the database's own size (when its header says it) are not part of it
            first = self.page(1)
            pages = struct.unpack(">I", first[28:32])[0]
            if pages and first[24:28] == first[92:96]:
                self.count = min(self.count, pages)

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
        trunk = struct.unpack(">I", self.page(1)[32:36])[0]  # (the WAL's page 1 when it holds a newer one)
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
        for number, cells in self._pages(self._leaf):
            for rowid, values in cells:
                yield number, rowid, values

    def index_rows(self) -> Iterator[list]:
        """The values of every entry of every index-leaf page not on the freelist (a row's rowid last)."""
        for _number, entries in self._pages(self._index_leaf):
            yield from entries

    def _pages(self, decode: Callable[[int], Iterator[T]]) -> Iterator[tuple[int, list[T]]]:
        """(page number, what `decode` makes of it) for every page not on the freelist; a page that does not
        decode (the damaged one) is skipped whole, never half-read."""
        free = self.free()
        for number in range(1, self.count + 1):
            if number in free:
                continue
            try:
                found = list(decode(number))
            except (IndexError, ValueError, struct.error, UnicodeDecodeError, OverflowError):
                continue
            yield number, found

    def _index_leaf(self, number: int) -> Iterator[list]:
        page = self.page(number)
        at = 100 if number == 1 else 0
        if page[at] != INDEX_LEAF:
            return
        cells = struct.unpack(">H", page[at + 3 : at + 5])[0]
        for p in struct.unpack(f">{cells}H", page[at + 8 : at + 8 + 2 * cells]):
            if not at + 8 + 2 * cells <= p < self.usable:
                raise ValueError("a cell pointer outside the page")
            size, p = varint(page, p)
            yield record(self._payload(page, p, size, index=True))

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

    def _payload(self, page: bytes, p: int, size: int, index: bool = False) -> bytes:
        """The cell's payload, its overflow pages followed where it does not fit on the page."""
        u = self.usable
        most = ((u - 12) * 64 // 255) - 23 if index else u - 35
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
