"""The machine file: one machine's counted calls and its sessions' summaries (docs/SYNC-FORMAT.md).

gzip-compressed JSON, one object. Rows are arrays whose columns are named in the file itself
(`session_fields`, `call_fields`), so a newer trayburn may add columns and an older one still reads
the columns it knows; `min_reader` is the oldest format version that can read the file at all.
gzip's length and checksum make a half-synced or truncated file fail as a whole, never half-read.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, TypeVar

import msgspec

T = TypeVar("T")

MAGIC = "trayburn-machine"
VERSION = 1  # this trayburn writes version 1 and reads any file whose min_reader is <= 1
EXT = ".json.gz"
# Decompressed: a gzip bomb stops here. Real files are kilobytes to a few megabytes (a call is ~120 bytes:
# 32 MB is ~250,000 calls, years of heavy use); the limit also bounds the time a file costs (~0.3 s to decode).
MAX_JSON_BYTES = 32 * 10**6
MAX_FILE_BYTES = MAX_JSON_BYTES  # packed: never more than it unpacks to (gzip of JSON packs 5-20x)

SESSION_FIELDS = (
    "id", "started_ms", "ended_ms", "status", "project", "source", "model", "provider", "title", "cwd",
    "workspace_root",
)  # fmt: skip
CALL_FIELDS = (
    "key", "ts_ms", "model", "provider", "input", "output", "cache_read", "cache_write", "cost", "session",
    "agent",
)  # fmt: skip
# Columns a file may lack (a reader fills None); the others are required.
OPTIONAL = {"ended_ms", "project", "source", "model", "provider", "title", "cwd", "workspace_root", "agent", "status"}

_Count = Annotated[int, msgspec.Meta(ge=0, le=10**12)]
_Ms = Annotated[int, msgspec.Meta(ge=0, le=2**52)]
_Cost = Annotated[float, msgspec.Meta(ge=0, le=10**7)]
_Text = str | None
SessionRow = tuple[str, _Ms | None, _Ms | None, _Text, _Text, _Text, _Text, _Text, _Text, _Text, _Text]
CallRow = tuple[str, _Ms, _Text, _Text, _Count, _Count, _Count, _Count, _Cost | None, int, _Text]


class FormatError(ValueError):
    """The bytes are not a machine file this trayburn can read; the message says why."""

    def __init__(self, message: str, kind: str = "garbage"):
        super().__init__(message)
        self.kind = kind  # "garbage" | "truncated" | "foreign" | "newer" | "too_big"


@dataclass(frozen=True)
class Header:
    version: int
    min_reader: int
    machine_id: str
    name: str
    host: str
    written_ms: int
    trayburn: str
    titles: bool


@dataclass
class MachineDoc:
    header: Header
    sessions: list[tuple] = field(default_factory=list)  # SessionRow
    calls: list[tuple] = field(default_factory=list)  # CallRow


_encoder = msgspec.json.Encoder()


def encode(doc: MachineDoc, level: int = 6) -> bytes:
    h = doc.header
    body = {
        "format": MAGIC,
        "version": VERSION,
        "min_reader": 1,
        "machine": {"id": h.machine_id, "name": h.name, "host": h.host},
        "written_ms": h.written_ms,
        "trayburn": h.trayburn,
        "titles": h.titles,
        "session_fields": SESSION_FIELDS,
        "sessions": doc.sessions,
        "call_fields": CALL_FIELDS,
        "calls": doc.calls,
    }
    packer = zlib.compressobj(level, zlib.DEFLATED, 31)  # 31: the gzip container (length + CRC)
    return packer.compress(_encoder.encode(body)) + packer.flush()


def decode(data: bytes, limit: int = MAX_JSON_BYTES) -> MachineDoc:
    """Raises FormatError (kind says which fault) for anything but a whole file this trayburn can read;
    `limit`: the most bytes it may unpack to."""
    body = _guarded(lambda: _json(_gunzip(data, limit)))
    header = _header(body)
    sessions = _guarded(lambda: _rows(body, "session", SESSION_FIELDS, SessionRow))
    calls = _guarded(lambda: _rows(body, "call", CALL_FIELDS, CallRow))
    if any(not 0 <= c[9] < len(sessions) for c in calls):
        raise FormatError("a call names a session the file does not hold")
    return MachineDoc(header, sessions, calls)


def read_header(data: bytes) -> Header:
    """The header alone; raises FormatError only (as `decode`)."""
    return _header(_guarded(lambda: _json(_gunzip(data))))


def _guarded(work: Callable[[], T]) -> T:
    """Nothing but a FormatError escapes the decoding of a file anyone can write: one nested past the
    decoder's depth, or whatever a decoder raises on hostile bytes, costs that file only, never the refresh."""
    try:
        return work()
    except FormatError:
        raise
    except (RecursionError, MemoryError) as exc:
        raise FormatError(f"nested or sized past what a machine file can be ({type(exc).__name__})") from None
    except Exception as exc:
        raise FormatError(f"unreadable ({type(exc).__name__}: {exc})") from None


def _gunzip(data: bytes, limit: int = MAX_JSON_BYTES) -> bytes:
    if data[:2] != b"\x1f\x8b":
        raise FormatError("not a trayburn machine file (not gzip)", "foreign")
    unpacker = zlib.decompressobj(31)
    try:
        out = unpacker.decompress(data, limit)
    except zlib.error as exc:
        raise FormatError(f"damaged ({exc})") from None
    if unpacker.unconsumed_tail:
        raise FormatError(f"over {limit:,} bytes once unpacked", "too_big")
    if not unpacker.eof:
        raise FormatError("truncated (still being synced, or cut short): the previous import is kept", "truncated")
    return out


def _json(raw: bytes) -> dict[str, Any]:
    try:
        body = msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        raise FormatError(f"not JSON ({exc})") from None
    except RecursionError:  # msgspec's own depth limit (a few hundred levels; a real file has four)
        raise FormatError("nested too deeply to be a machine file") from None
    if not isinstance(body, dict) or body.get("format") != MAGIC:
        raise FormatError("not a trayburn machine file (another program's?)", "foreign")
    return body


def _header(body: dict[str, Any]) -> Header:
    try:
        m = body["machine"]
        h = Header(
            int(body["version"]), int(body.get("min_reader", body["version"])), str(m["id"]), str(m.get("name") or ""),
            str(m.get("host") or ""), int(body.get("written_ms") or 0), str(body.get("trayburn") or "?"),
            bool(body.get("titles", False)),
        )  # fmt: skip
    except (KeyError, TypeError, ValueError) as exc:
        raise FormatError(f"its header is incomplete ({exc})") from None
    if h.min_reader > VERSION:
        raise FormatError(
            f"written by a newer trayburn ({h.trayburn}, format {h.version}, needs a reader of format "
            f"{h.min_reader}; this one reads {VERSION}): upgrade trayburn on this machine",
            "newer",
        )
    return h


def _rows(body: dict[str, Any], what: str, ours: tuple[str, ...], row_type: Any) -> list[Any]:
    names, rows = body.get(f"{what}_fields"), body.get(f"{what}s")
    if not isinstance(names, list) or not isinstance(rows, list):
        raise FormatError(f"no {what}s table")
    if tuple(names) != ours:
        rows = _reorder(what, names, rows, ours)
    try:
        return msgspec.convert(rows, list[row_type])
    except msgspec.ValidationError as exc:
        raise FormatError(f"a {what} row is malformed ({exc})") from None


def _reorder(what: str, names: list[Any], rows: list[Any], ours: tuple[str, ...]) -> list[list[Any]]:
    """A file from another format version: the columns this one knows, by name; the others are left out."""
    where = {name: i for i, name in enumerate(names)}
    missing = [n for n in ours if n not in where and n not in OPTIONAL]
    if missing:
        raise FormatError(f"its {what}s lack the column(s) {', '.join(missing)}")
    picks = [where.get(n, -1) for n in ours]
    try:
        return [[r[i] if i >= 0 else None for i in picks] for r in rows]
    except (IndexError, KeyError, TypeError):
        raise FormatError(f"a {what} row is shorter than its columns") from None
