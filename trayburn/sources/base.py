"""The seam between where calls come from and the ledger that counts them: `Source`, the records a source hands
over (`SessionRecord`, `Call`) and their bounds. No SQL and no I/O here.

A `Source` finds its files (stat only), says whether any changed since the ledger last read them, and,
inside the ledger's write transaction, reads the changed ones and hands sessions and calls to a `Writer`.
The ledger owns the bookkeeping (checkpoints, failures, what went missing, who counts a call); a source
owns only its layout and its format. A new source (another machine's export, Cline's pre-4.0 VS Code
task folders) is a new module implementing `Source`, not an edit of the refresh.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Container, Mapping, Sized
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, TypeVar, runtime_checkable

from ..files import Checkpoint, FileStat

__all__ = [
    "Call",
    "Checkpoint",
    "Digested",
    "FileStat",
    "Known",
    "Plan",
    "Reader",
    "Seen",
    "SessionRecord",
    "Source",
    "Writer",
    "RETRY_RECENT_NS",
    "id_ms",
    "qualified_id",
    "reported_cost",
    "storable_id",
    "storable_text",
    "should_read",
    "command_words",
    "token_count",
]

T = TypeVar("T", bound=Sized)
Reader = Callable[[str, int], tuple[T, Checkpoint]]  # (path, size limit) -> (its bytes, or what stands for them)

RETRY_RECENT_NS = 60 * 10**9  # a broken file changed in the last minute is retried even if its stat looks the same


MAX_TOKENS = 2**53  # above this a token count is garbage (and would not fit SQLite's INTEGER)
MAX_COST = 10_000.0  # USD: above this a reported cost for one call is garbage (1e308 twice is Infinity)


def token_count(value: Any) -> int:
    """A token count as a file states it, for every source: a non-negative number up to MAX_TOKENS, else 0 (a
    string, a bool, NaN, a garbage size)."""
    if type(value) is int and 0 <= value <= MAX_TOKENS:  # the common case, decided first
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_TOKENS:
        return 0
    return int(value)


def reported_cost(value: Any) -> float | None:
    """A cost as a file states it, for every source: a finite number from 0 to MAX_COST; None otherwise (then
    estimated)."""
    if type(value) is float and 0 <= value <= MAX_COST:  # the common case, decided first
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_COST:
        return None  # NaN fails the comparison too
    return float(value)


# Times local time can show on every platform, whatever the zone (Windows' localtime stops in 3000):
MIN_MS = 86_400_000  # 1970-01-02T00:00:00Z
MAX_MS = 32_503_680_000_000 - 1  # 2999-12-31T23:59:59.999Z


def id_ms(session_id: str) -> int | None:
    """The epoch ms a session id begins with (`1796023651231_hi7ti` → 1796023651231), if plausible."""
    head = session_id.partition("_")[0]
    if not (head.isascii() and head.isdigit()):
        return None
    value = int(head)
    return value if 1e12 <= value <= MAX_MS else None  # (1e12 ms is 2001)


def storable_text(value: str) -> str:
    """A string from a file, storable and shown as it was meant: lone surrogates (what JavaScript writes for a
    string cut inside an emoji, JSON's "\\ud83d" alone) become U+FFFD; a pair split across two escapes joins up."""
    if value.isascii():  # the common case, decided first
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return value


def storable_id(value: str) -> str:
    """An identity from a file, storable and still distinct: a lone surrogate becomes its escape
    text (`\\ud83d`), so two ids differing only there stay two calls."""
    if value.isascii():
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    return value


class Call(NamedTuple):
    """One model call, from the parser to the ledger: a tuple, so a cold ingest builds no object per call beyond
    it, and the writer binds it as it is."""

    key: str  # identity across sessions: the message id (or session:index when it has none)
    seq: int  # its place in its file (rollups: -1), the ledger's `seq` (`index` is tuple's)
    ts_ms: int | None  # None: use the session's start
    model: str | None  # modelInfo.id; None: use the session's model
    input: int
    output: int
    cache_read: int
    cache_write: int
    cost: float | None  # as reported; None when absent or unusable
    tools: tuple[str, ...]
    note: str | None = None  # why a reported value was set aside (the call still counts, its cost estimated)
    provider: str | None = None  # modelInfo.provider; None: use the session's provider
    # the programs its shell commands ran (`command_words`), one run_commands block after another, each block's
    # words space-separated, blocks comma-separated; None: it ran none
    commands: str | None = None


_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
MAX_WORD = 40


def first_word(line: str) -> str:
    """The program a command line runs, as a word to group by: its first word past `VAR=value` assignments, without
    its folder or quotes (`FOO=1 ./node_modules/.bin/jest -x` → `jest`); "?" when there is none."""
    for word in line.split():
        if "=" in word and _ASSIGNMENT.match(word):
            continue
        if word.isalnum() and word.isascii():  # the usual word (`git`, `python3`): nothing to take off
            return word[:MAX_WORD]
        word = word.strip("\"'`([").rstrip(";&|)").replace("\\", "/").rsplit("/", 1)[-1]
        word = word.replace(",", "_")[:MAX_WORD]
        return word if word.isascii() else word.encode("utf-8", "replace").decode("utf-8")
    return "?"


def command_words(commands: Any) -> str:
    """The first words of a shell tool's command lines, space-separated: `commands` as the Cline CLI's run_commands
    gives it (a list, or a JSON-encoded list in one string, docs/formats/cline-cli.md), or a single command line."""
    if isinstance(commands, str):
        try:
            commands = json.loads(commands) if commands.lstrip().startswith("[") else [commands]
        except (ValueError, RecursionError):
            commands = [commands]
    if not isinstance(commands, list):
        return ""
    words = []
    for c in commands:
        if type(c) is not str:
            c = c.get("command") if isinstance(c, dict) else c
            if not isinstance(c, str):
                continue
        if not c.isspace() and c:
            words.append(first_word(c))
    return " ".join(words)


@dataclass(slots=True)
class Known:
    """What the ledger knows of one file: its last good and last failed checkpoints."""

    good: Checkpoint | None
    bad: Checkpoint | None
    gone: bool
    kind: str  # a source's word for the file: "manifest", "messages", "external", "machine", …
    session_id: str = ""
    id: int = 0  # the files row (0: none yet)
    origin: str | None = None  # None: this machine
    feed: str = "cline_cli"  # the Source that wrote it (`Source.feed`)
    meta: str | None = None  # the inode's metadata when `good` was taken (files.meta; None: not known)


def should_read(current: Checkpoint, known: Known) -> bool:
    """Read a file whose stat differs from its last good read, unless it is the very version that failed
    (retried anyway while it changed within the last minute: caught mid-write)."""
    if current == known.good:
        return False
    if current != known.bad:
        return True
    return time.time_ns() - current.mtime_ns < RETRY_RECENT_NS


def changed(f: FileStat, known: Known | None) -> bool:
    return known is None or known.gone or should_read(f.checkpoint, known)


@dataclass(slots=True)
class SessionRecord:
    """One session, from the parser (or a source) to the ledger: its sessions row, and what comes with it."""

    id: str
    folder: str | None
    started_ms: int | None
    ended_ms: int | None
    status: str
    title: str | None = None
    prompt: str | None = None
    cwd: str | None = None
    workspace_root: str | None = None
    model: str | None = None
    provider: str | None = None
    source: str | None = None  # the Cline client that wrote it ("cli", "vscode", …)
    forked_from: str | None = None
    rollup: Call | None = None  # its total as one call, counted only while no message of it has figures
    messages_path: str | None = None  # where the session says its messages are (not stored)


@dataclass
class Seen:
    """The stat phase's outcome, as the ledger needs it."""

    listed: bool  # False: the source's place could not be listed; the ledger then changes nothing
    sessions: int = 0
    files: int = 0
    problems: dict[str, str] = field(default_factory=dict)  # path -> what is wrong


@dataclass
class Plan:
    """Which changed sessions one write transaction reads now and which it leaves for later.

    A file not modified since a moment cannot hold a call made after it, so a session whose files are all
    older than `since_ns` cannot change the figures from `since_ns` on: it may wait. Those that can are
    never deferred; the others are read until `until` (a `time.perf_counter()` deadline; None: no limit)."""

    since_ns: int | None = None  # epoch ns; None: nothing is urgent
    until: float | None = None
    least: int = 0  # sessions read whatever the deadline (a slice of history always makes progress)
    deferred: int = 0  # sessions left for a later transaction
    faults: dict[str, str] = field(default_factory=dict)  # sessions to skip, with why (see `Writer.guard`)

    def defer(self, newest_mtime_ns: int) -> bool:
        """Whether to leave a changed session whose newest file has this mtime for later (counted)."""
        if self.since_ns is not None and newest_mtime_ns >= self.since_ns:
            return False
        if self.least > 0 or self.until is None or time.perf_counter() < self.until:
            self.least -= 1
            return False
        self.deferred += 1
        return True


class Writer(Protocol):
    """What a source may do inside the ledger's write transaction (see `ledger.writer.Refresh`)."""

    known: Mapping[str, Known]
    plan: Plan  # a source may ignore it (it then reads everything that changed in one transaction)
    max_file_bytes: int  # a larger file is not read (the refresh records why)

    def read(self, f: FileStat, sid: str, kind: str) -> tuple[bytes, Checkpoint] | None: ...
    def read_with(self, f: FileStat, sid: str, kind: str, reader: Reader[T]) -> tuple[T, Checkpoint] | None: ...
    def failed(self, f: FileStat, sid: str, kind: str, why: str) -> None: ...
    def ok(self, path: str, sid: str, kind: str, agent: str | None, c: Checkpoint) -> int: ...
    def session(self, record: SessionRecord, file_id: int, fallback_ms: int) -> None: ...
    def calls(self, sid: str, file_id: int, agent: str, calls: list[Call], fallback_ms: int) -> None: ...
    def seen(self, path: str) -> None: ...
    def live(self, sid: str) -> None: ...
    def has_session(self, sid: str) -> bool: ...
    def good_checkpoint(self, path: str) -> Checkpoint | None: ...
    def adopt(self, f: FileStat) -> bool: ...  # only its metadata changed: taken as last read, unread (`read` does too)
    def path_of_kind(self, sid: str, kind: str) -> str | None: ...
    def guard(self, sid: str, f: FileStat, kind: str, read: Callable[[], None]) -> None:
        """Run one session's `read`; if it raises, its writes are undone, it is skipped and `f` records why."""
        ...


def qualified_id(origin: str | None, sid: str) -> str:
    """A session id as stored: another machine's sessions are `<origin>/<id>`, so one copied between
    machines is two sessions whose calls (same message ids) are counted once by the ledger."""
    return sid if origin is None else f"{origin}/{sid}"


class Source(Protocol):
    """One place calls come from. `scan` stats; `needs_work` compares with the ledger's `known` files
    (a source looks only at those of its own `feed`); `ingest` reads and writes through the `Writer`,
    which stamps every row it writes with the source's `feed` and `origin`.

    The ledger keeps no list of sources: whoever refreshes (the engine) passes each one to
    `Ledger.refresh(source)`, one transaction each. A source must keep its identity (`feed`) from one
    run to the next: the files and sessions of a feed it no longer reports are marked gone / removed."""

    feed: str  # unique per source: "cline_cli", "vscode_tasks", "machine:<id>"
    origin: str | None  # the machine its sessions belong to; None: this one

    def scan(self, settled: Callable[[], Container[str]]) -> Seen: ...
    def needs_work(self, known: Mapping[str, Known]) -> bool: ...
    def ingest(self, writer: Writer) -> None: ...
    def watch_folders(self) -> tuple[str, ...]:
        """The folders a new session of this source appears in (a waker watches them for one added, so a
        running tray or window reads it at once rather than at its next poll); () for none."""
        ...


@runtime_checkable
class Digested(Protocol):
    """What a `Source` may add (a source without it gets the usual refresh every time)."""

    def digest(self) -> str | None:
        """A fingerprint of every file the last scan saw and its checkpoint; None: none. The ledger stores it
        once nothing is left to do (see `trusts_digest`), and a later refresh whose scan has the same digest
        does nothing without reading `known`: what a new process's `trayburn today` mostly is."""
        ...

    def trusts_digest(self, known: Mapping[str, Known]) -> bool:
        """Whether, with this `known`, `needs_work` depends on nothing but what the scan saw."""
        ...
