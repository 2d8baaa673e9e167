"""Reading and parsing a slice's files in a second process while this one writes the ledger.

A cold ingest spends about as long reading and decoding files as writing their rows into SQLite; a thread
cannot overlap the two (sqlite3 and msgspec fight over the GIL), a forked child can. The child reads and
parses the files in the order the ingest will ask for them and streams each outcome back; this process
takes them in that order and does everything else (every ledger write, every rule on what an outcome
means) exactly as if it had read the file itself. Anything unusual falls back to reading here:

- an outcome that raised in the child other than as a bad file (a bug met by one odd file): the file is
  read and parsed here, so the same exception meets the same `Writer.guard`;
- a child that died, or was never started: the rest is read here;
- a file the child was not given, or an item the child has not begun when this process gets to it (the
  child runs at the lowest priority, on what the machine has to spare): read here, the child skips it.

Only where fork is safe and pays: Linux, a process with no other thread (the CLI; the tray has threads),
and a slice with enough to read. Ctrl-C: the child ignores SIGINT and ends when this process closes its
end of the pipe (or dies); `close()` also kills and reaps it, so nothing lingers.
"""

from __future__ import annotations

import contextlib
import gc
import mmap
import os
import pickle
import select
import signal
import struct
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from .. import files
from .cline_cli import layout as cf
from .cline_cli.parse import ParseError

MIN_FOLDERS = 64  # fewer changed folders than this: not worth a fork (a few ms)
ENV = "TRAYBURN_PARSE_PROCESS"  # "0": never (a test compares both ways); "1": whenever possible

_HEAD = struct.Struct("<I")

# One file to read: (path, parse) where parse turns its bytes into what the ingest needs (or raises
# ParseError). `jobs(item)` gives an item's files; it runs in the child.
Job = tuple[str, Callable[[bytes], Any]]
Item = TypeVar("Item")


class Fetched:
    """A file read (and parsed) by the child: what `Writer.read_with` is given instead of its bytes (it
    counts `len`, the bytes read)."""

    __slots__ = ("size", "value", "error")

    def __init__(self, size: int, value: Any, error: str | None):
        self.size, self.value, self.error = size, value, error  # error: why it does not parse

    def __len__(self) -> int:
        return self.size


Outcome = tuple[Fetched, files.Checkpoint] | files.FileProblem


def wanted(items: int) -> bool:
    setting = os.environ.get(ENV)
    if setting == "0" or not hasattr(os, "fork") or sys.platform != "linux":
        return False
    if threading.active_count() != 1:  # forking a process with threads can copy a held lock
        return False
    return setting == "1" or items >= MIN_FOLDERS


class Prefetch(Generic[Item]):
    """The child reading the files of `items` in order, and this process's end of its pipe. `take(n, path)`
    gives the outcome for that file of the n-th item, or None: read it here (the child did not, or is gone).

    Never a wait for the child when it has not begun the item asked for (a busy machine gives it little
    time): this process reads that item itself and the child skips it, so the two share the work and a
    starved child costs about nothing. Two counters in memory both processes share: the item the child is
    on, and the first item it may still begin."""

    def __init__(self, items: Sequence[Item], jobs: Callable[[Item], list[Job]], limit_bytes: int):
        self.fd = -1  # our end of the pipe (-1: closed)
        self.buf = bytearray()
        self.ahead: tuple[int, str, tuple] | None = None  # received, not yet asked for (a later item's)
        self.taken = -1  # the last item this process chose to read itself
        self.shared = mmap.mmap(-1, 16)  # anonymous and shared: the child sees our writes, we see its
        self.at = memoryview(self.shared).cast("q")  # [child's item, first item the child may begin]
        self.at[0] = -1
        r, w = os.pipe()
        try:
            self.pid = os.fork()
        except OSError:
            os.close(r)
            os.close(w)
            self.pid = 0
            return
        if self.pid == 0:  # the child: never returns
            os.close(r)
            _child(items, jobs, limit_bytes, w, self.at)
        os.close(w)
        self.fd = r

    def take(self, n: int, path: str) -> Outcome | None:
        if n == self.taken:
            return None
        while True:
            got = self.ahead or self._receive(block=False)
            self.ahead = None
            if got is _NOT_YET:
                if self.at[0] < n:  # the child has not begun this item: ours (it will skip it)
                    self.at[1] = n + 1
                    self.taken = n
                    return None
                got = self._receive(block=True)  # it is on it (or past it): its outcome is coming
            if got is None or got is _NOT_YET:
                return None
            if got[0] > n:  # the child has nothing (more) for this item
                self.ahead = got
                return None
            if got[0] == n and got[1] == path:
                return _outcome(got[2])
            # an earlier item's or file's, that this process did not read after all: dropped

    def _receive(self, block: bool) -> Any:
        """The next outcome (n, path, outcome); _NOT_YET (only if not `block`); None once the child ended."""
        buf = self.buf
        while self.fd >= 0:
            if len(buf) >= _HEAD.size:
                end = _HEAD.size + _HEAD.unpack_from(buf)[0]
                if len(buf) >= end:
                    body = bytes(buf[_HEAD.size : end])
                    del buf[:end]
                    try:
                        return pickle.loads(body)
                    except Exception:  # (never seen): as if the child had died
                        break
            if not block and not select.select([self.fd], [], [], 0)[0]:
                return _NOT_YET
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:  # the child ended (or died): the rest is read here
                break
            buf += chunk
        self.close()
        return None

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        if self.pid > 0:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            self.pid = 0


_NOT_YET = object()


def _outcome(outcome: tuple) -> Outcome | None:
    kind = outcome[0]
    if kind == "ok":
        return Fetched(outcome[2], outcome[3], None), files.Checkpoint(*outcome[1])
    if kind == "bad":
        return Fetched(outcome[2], None, outcome[3]), files.Checkpoint(*outcome[1])
    if kind == "problem":
        return files.FileProblem(outcome[1])
    return None  # it raised: read and parse here


def _child(items: Sequence[Item], jobs: Callable[[Item], list[Job]], limit_bytes: int, fd: int, at: Any) -> None:
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the parent, which ends us
        os.nice(19)  # only what the machine has to spare: on a busy one the parent runs, and reads itself
        gc.freeze()  # the parent's objects are never collected here: their pages stay shared, not copied
        with os.fdopen(fd, "wb", buffering=1 << 16) as out:
            for n, item in enumerate(items):
                at[0] = n
                if n < at[1]:  # the parent read it itself
                    continue
                for path, parse in jobs(item):
                    body = pickle.dumps((n, path, _read(path, parse, limit_bytes)), pickle.HIGHEST_PROTOCOL)
                    out.write(_HEAD.pack(len(body)))
                    out.write(body)
                    out.flush()
    except BaseException:  # the parent went away (EPIPE), or anything: the parent reads the rest itself
        code = 1
    finally:
        os._exit(code)  # never the parent's atexit handlers, buffers or SQLite connection


def _read(path: str, parse: Callable[[bytes], Any], limit_bytes: int) -> tuple:
    try:
        data, ckpt = files.read(path, limit_bytes)
    except files.FileProblem as exc:
        return ("problem", str(exc))
    except Exception:
        return ("raised",)
    if time.time_ns() - ckpt.mtime_ns < cf.RACY_NS:  # read within the tick it was written: the parent reads it
        return ("raised",)  # itself, so the racy-timestamp rule (refresh.RACY_NS) judges its own read's time
    try:
        return ("ok", tuple(ckpt), len(data), parse(data))
    except ParseError as exc:
        return ("bad", tuple(ckpt), len(data), str(exc))
    except Exception:
        return ("raised",)
