"""Another machine's file in `sync_dir/trayburn/machines/<id>.json.gz`: its format, and the file as a source.
Never writes a machine file (sync/share.py does).

Read by checkpoint like a session file (unchanged: not read); its sessions are stored as `<id>/<session>`
and its calls under their own keys, so a call this machine (or a third) also holds counts once. A file
that fails to read or parse keeps its previous import and is retried; a file that disappears keeps its
history, its sessions marked removed; a folder that cannot be seen at all (sync_dir unmounted) changes
nothing. A symbolic link or anything but a regular file is never read.

The format (docs/SYNC-FORMAT.md; sync/share.py writes it, this source reads it): one machine's counted calls and
its sessions' summaries, gzip-compressed JSON, one object. Rows are arrays whose columns are named in the file itself
(`session_fields`, `call_fields`), so a newer trayburn may add columns and an older one still reads
the columns it knows; `min_reader` is the oldest format version that can read the file at all.
gzip's length and checksum make a half-synced or truncated file fail as a whole, never half-read.
"""

from __future__ import annotations

import os
import stat
import zlib
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, TypeVar

import msgspec

from ..files import checkpoint
from .base import Call, Checkpoint, FileStat, Known, Seen, SessionRecord, Writer, changed, qualified_id

T = TypeVar("T")

MAGIC = "trayburn-machine"
VERSION = 1  # this trayburn writes version 1 and reads any file whose min_reader is <= 1
EXT = ".json.gz"
# The reader's bounds. Unpacked: a gzip bomb stops here (a call is ~90-125 bytes of JSON: 128 MB holds the
# MAX_CALLS rows, years of heavy use); rows: at most MAX_CALLS calls, which bounds a file's memory (~0.5 GB at the
# limit) and time (a few seconds). trayburn 0.3 and older read at most OLD_READER_BYTES unpacked: a bigger file is
# read by this version on, and the writer says so in `doctor` (sync/share.py).
MAX_CALLS = 800_000  # over two years at 1,000 calls a day
MAX_JSON_BYTES = 128 * 10**6
MAX_FILE_BYTES = 64 * 10**6  # packed (gzip of these rows packs 3-5x)
OLD_READER_BYTES = 32 * 10**6

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
    """A machine file's header: its format, the machine that wrote it and when."""

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
    """A machine file as read: its header, sessions and calls."""

    header: Header
    sessions: list[tuple] = field(default_factory=list)  # SessionRow
    calls: list[tuple] = field(default_factory=list)  # CallRow


_encoder = msgspec.json.Encoder()


def encode(doc: MachineDoc, level: int = 6) -> bytes:
    return encode_sized(doc, level)[0]


def encode_sized(doc: MachineDoc, level: int = 6) -> tuple[bytes, int]:
    """The file's bytes, and how many bytes they unpack to (what a reader's bound is on)."""
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
    raw = _encoder.encode(body)
    return packer.compress(raw) + packer.flush(), len(raw)


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
    if len(rows) > MAX_CALLS:
        raise FormatError(f"{len(rows):,} {what}s, over the {MAX_CALLS:,} a machine file can hold", "too_big")
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


KIND = "machine"


class MachineSource:
    def __init__(self, folder: Path, origin: str, held: Callable[[str], list[str]]):
        """`held(feed)`: the sessions the ledger holds of this feed (kept live when the file is not read)."""
        self.folder, self.machine_id, self.feed = folder, origin, f"machine:{origin}"
        self.origin: str | None = origin  # (typed as the Source seam has it)
        self.path = str(folder / f"{origin}{EXT}")
        self.held = held
        self.stat: FileStat | None = None
        # what the last import wrote of each session (a hash of its rows), with the checkpoint it was read
        # at: used only while the ledger's good checkpoint of the file is that one (so it was committed)
        self._imported: tuple[Checkpoint | None, dict[str, int]] = (None, {})

    def watch_folders(self) -> tuple[str, ...]:
        """Another machine's file is written (renamed) into the machines folder its sync tool keeps."""
        return (str(self.folder),)

    def scan(self, settled: Callable[[], Container[str]]) -> Seen:
        self.stat = None
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            return Seen(listed=self.folder.is_dir())  # the folder unseen (unmounted): change nothing
        except OSError as exc:
            return Seen(listed=False, problems={self.path: exc.strerror or str(exc)})
        if not stat.S_ISREG(st.st_mode):
            what = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a regular file"
            return Seen(listed=False, problems={self.path: f"is {what}; trayburn reads only regular machine files"})
        if st.st_size > MAX_FILE_BYTES:  # real files are kilobytes to a few megabytes: not read at all
            why = f"is {st.st_size:,} bytes, over the {MAX_FILE_BYTES:,} a machine file can be; not read"
            return Seen(listed=False, problems={self.path: why})
        self.stat = FileStat(self.path, checkpoint(st))
        return Seen(listed=True, sessions=1, files=1)

    def needs_work(self, known: Mapping[str, Known]) -> bool:
        if self.stat is None:
            return any(k.feed == self.feed and not k.gone for k in known.values())  # it went: mark it
        return changed(self.stat, known.get(self.path))

    def ingest(self, writer: Writer) -> None:
        if self.stat is None:
            return  # the ledger marks the file gone and its sessions removed; their calls keep counting
        writer.seen(self.path)
        got = writer.read(self.stat, self.machine_id, KIND)
        doc = None
        if got is not None:
            try:
                doc = decode(got[0])
                if doc.header.machine_id != self.machine_id:
                    raise FormatError(f"its header names machine {doc.header.machine_id}, not {self.machine_id}")
            except FormatError as exc:
                writer.failed(self.stat, self.machine_id, KIND, str(exc))
                doc = None
        if doc is None or got is None:
            for sid in self.held(self.feed):  # the previous import stands
                writer.live(sid)
            return
        known = writer.known.get(self.path)
        was, imported = self._imported
        if known is None or known.good is None or known.good != was:
            imported = {}  # not ours to trust: that import was not committed, or another process imported since
        file_id = writer.ok(self.path, self.machine_id, KIND, doc.header.name or None, got[1])
        self._imported = (got[1], _merge(writer, self.machine_id, doc, file_id, imported))


def _merge(writer: Writer, origin: str, doc: MachineDoc, file_id: int, imported: dict[str, int]) -> dict[str, int]:
    """Sessions and calls into the ledger; a session whose rows hash as at the last (committed) import of
    this file is only kept live. Returns the hashes written."""
    fallback = doc.header.written_ms
    rows: dict[int, list[tuple]] = {}
    for c in doc.calls:
        rows.setdefault(c[9], []).append(c)
    hashes: dict[str, int] = {}
    for index, s in enumerate(doc.sessions):
        sid = qualified_id(origin, s[0])
        mine = rows.get(index, [])
        hashes[sid] = digest = hash((s, *mine))
        writer.live(sid)
        if imported.get(sid) == digest:
            continue
        record = SessionRecord(
            sid, None, s[1], s[2], s[3] or "completed", title=s[8], cwd=s[9], workspace_root=s[10] or s[4],
            model=s[6], provider=s[7], source=s[5],
        )  # fmt: skip
        writer.session(record, file_id, fallback)
        groups: dict[str, list[Call]] = {}
        for c in mine:
            group = groups.setdefault(c[10] or "lead", [])
            group.append(Call(c[0], len(group), c[1], c[2], c[4], c[5], c[6], c[7], c[8], (), provider=c[3]))
        for agent, calls in groups.items():
            writer.calls(sid, file_id, agent, calls, fallback)
    return hashes
