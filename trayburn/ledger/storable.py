"""Names from the file system kept byte-exact in the ledger, whatever bytes they hold.

A folder or file name that is not valid UTF-8 (`b"sess\\xff"`) reaches Python as a str with
surrogate escapes, which SQLite cannot take as text. Such a value is bound as its file-system bytes
(a BLOB, which SQLite keeps in a TEXT column as it is) and read back through `text()` (os.fsdecode)
where a path is read, so the path a scan gives and the path the ledger holds are the same str. Session ids
from such folder names are escaped text instead (`parse._key`, as for ids inside files), so they
print and can be typed back.
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..sources.base import Call, Checkpoint, FileStat, Known, Reader, Row, SessionRecord, T, Writer
from ..sources.cline_cli.parse import _key


def text(value: str | bytes | None) -> str | None:
    """A path as read from the ledger: a BLOB (a name that is not UTF-8) as the str Python names it by.
    (Not a column converter: sqlite3 gives None to a converter's empty string.)"""
    return os.fsdecode(value) if isinstance(value, bytes) else value


def _storable(value: Any) -> Any:
    if type(value) is str and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return os.fsencode(value)
    return value


def _bind(params: Any) -> Any:
    if isinstance(params, Mapping):
        return {k: _storable(v) for k, v in params.items()}
    return tuple(_storable(v) for v in params)


class LedgerConnection(sqlite3.Connection):
    """A connection that binds a str SQLite cannot encode as its file-system bytes. Parameters are
    looked at only when binding them as they are failed (before any row was written by `execute`;
    `executemany` is run again whole, which the ledger's statements allow: all are upserts)."""

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        try:
            return super().execute(sql, parameters)
        except UnicodeEncodeError:
            return super().execute(sql, _bind(parameters))

    def executemany(self, sql: str, seq_of_parameters: Iterable[Any], /) -> sqlite3.Cursor:
        rows = seq_of_parameters if isinstance(seq_of_parameters, list | tuple) else list(seq_of_parameters)
        try:
            return super().executemany(sql, rows)
        except UnicodeEncodeError:
            return super().executemany(sql, [_bind(r) for r in rows])


def storable_id(sid: str) -> str:
    return sid if sid.isascii() else _key(sid)


class StorableIds:
    """The `Writer` a source is given: session ids made storable, printable text on the way in."""

    def __init__(self, writer: Writer):
        self._w = writer
        self.known: Mapping[str, Known] = writer.known
        self.max_file_bytes = writer.max_file_bytes

    def read(self, f: FileStat, sid: str, kind: str) -> tuple[bytes, Checkpoint] | None:
        return self._w.read(f, storable_id(sid), kind)

    def read_with(self, f: FileStat, sid: str, kind: str, reader: Reader[T]) -> tuple[T, Checkpoint] | None:
        return self._w.read_with(f, storable_id(sid), kind, reader)

    def failed(self, f: FileStat, sid: str, kind: str, why: str) -> None:
        self._w.failed(f, storable_id(sid), kind, why)

    def ok(self, path: str, sid: str, kind: str, agent: str | None, c: Checkpoint) -> int:
        return self._w.ok(path, storable_id(sid), kind, agent, c)

    def session(self, record: SessionRecord, rollup: Call | None, file_id: int, fallback_ms: int) -> None:
        if not record.id.isascii():
            record = dataclasses.replace(record, id=storable_id(record.id))
        self._w.session(record, rollup, file_id, fallback_ms)

    def calls(self, sid: str, file_id: int, agent: str, calls: list[Call], fallback_ms: int) -> None:
        self._w.calls(storable_id(sid), file_id, agent, calls, fallback_ms)

    def rows(self, sid: str, file_id: int, agent: str, rows: list[Row], fallback_ms: int) -> None:
        self._w.rows(storable_id(sid), file_id, agent, rows, fallback_ms)

    def seen(self, path: str) -> None:
        self._w.seen(path)

    def live(self, sid: str) -> None:
        self._w.live(storable_id(sid))

    def has_session(self, sid: str) -> bool:
        return self._w.has_session(storable_id(sid))

    def good_checkpoint(self, path: str) -> Checkpoint | None:
        return self._w.good_checkpoint(path)

    def path_of_kind(self, sid: str, kind: str) -> str | None:
        return self._w.path_of_kind(storable_id(sid), kind)

    def guard(self, sid: str, f: FileStat, kind: str, read: Callable[[], None]) -> None:
        self._w.guard(storable_id(sid), f, kind, read)

    def __getattr__(self, name: str) -> Any:  # whatever else the Writer offers, as it is
        return getattr(self._w, name)
