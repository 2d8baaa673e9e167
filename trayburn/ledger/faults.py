"""What SQLite's error codes mean for the ledger, and the typed errors trayburn raises for them.

The ledger is sacred: only SQLite saying the file is corrupt (SQLITE_CORRUPT, SQLITE_NOTADB) or a
failed integrity check lets trayburn move it aside. A full disk, an I/O error, a file that cannot be
opened or written (FULL, IOERR, CANTOPEN, READONLY, PERM) leave it exactly as it is: the error says
what is wrong, and what can still be read is served, marked stale.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path
from typing import Literal

from ..errors import Exit, TrayburnError

NEARLY_FULL = 1 << 20  # bytes free under which an I/O error is taken for a full disk

Verdict = Literal["corrupt", "busy", "full", "io", "read_only", "other"]

_PRIMARY: dict[int, Verdict] = {
    sqlite3.SQLITE_CORRUPT: "corrupt",
    sqlite3.SQLITE_NOTADB: "corrupt",
    sqlite3.SQLITE_BUSY: "busy",
    sqlite3.SQLITE_LOCKED: "busy",
    sqlite3.SQLITE_FULL: "full",
    sqlite3.SQLITE_IOERR: "io",
    sqlite3.SQLITE_CANTOPEN: "read_only",
    sqlite3.SQLITE_READONLY: "read_only",
    sqlite3.SQLITE_PERM: "read_only",
}
_WORDS: list[tuple[str, Verdict]] = [  # only for an error without a code (not raised by SQLite itself)
    ("malformed", "corrupt"),
    ("not a database", "corrupt"),
    ("locked", "busy"),
    ("disk is full", "full"),
    ("disk i/o", "io"),
    ("readonly", "read_only"),
    ("unable to open", "read_only"),
]


def verdict(exc: BaseException) -> Verdict:
    """What an error from SQLite (or from the OS, opening the ledger file) says about the ledger."""
    if isinstance(exc, OSError):
        if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
            return "full"
        return "read_only" if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS) else "io"
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return _PRIMARY.get(code & 0xFF, "other")
    text = str(exc).lower()
    return next((v for words, v in _WORDS if words in text), "other")


class LedgerError(TrayburnError):
    """The ledger cannot be used; the message says why and what to do."""

    kind, code = "ledger", Exit.LEDGER


class LedgerBusy(LedgerError):
    """Another process held the ledger's lock for longer than `busy_timeout_s`: nothing was changed;
    try again later (the next poll)."""

    kind, code = "ledger_busy", Exit.BUSY


class LedgerUnavailable(LedgerError):
    """The ledger cannot be written now (nothing was changed, nothing moved aside); what it holds may
    still be read, as of its last refresh. `Ledger.fault` holds one while it lasts."""

    kind, code = "ledger_io", Exit.IO_ERROR
    what = "could not be read or written (an I/O error)"
    todo = "check the disk"

    def __init__(self, path: Path, exc: BaseException):
        super().__init__(f"the ledger {path} {self.what} ({exc}); nothing was changed or moved; {self.todo}")
        self.path = path


class LedgerFull(LedgerUnavailable):
    kind, code = "ledger_disk_full", Exit.IO_ERROR
    what = "cannot be written: the disk is full"
    todo = "free some space (the figures are as of the last refresh until then)"


class LedgerReadOnly(LedgerUnavailable):
    kind, code = "ledger_read_only", Exit.CANT_WRITE
    what = "cannot be opened for writing"
    todo = "check its permissions and its folder's (the figures are as of the last refresh until then)"


def unavailable(path: Path, exc: BaseException) -> LedgerUnavailable:
    """The typed error for a fault that leaves the ledger as it is. SQLite says only "disk I/O error"
    when a full disk stops it sizing its shared-memory file: the free space then says which it was."""
    kind = verdict(exc)
    if kind == "io" and _says_io(exc) and _nearly_full(path.parent):
        kind = "full"
    cls = LedgerFull if kind == "full" else LedgerReadOnly if kind == "read_only" else LedgerUnavailable
    return cls(path, exc)


def _says_io(exc: BaseException) -> bool:
    """An I/O error as such (SQLite's, or EIO), not an OS error that names another cause (a folder gone)."""
    return not isinstance(exc, OSError) or exc.errno == errno.EIO


def _nearly_full(folder: Path) -> bool:
    """Little space left on a disk that has a size (/proc and some FUSE mounts give 0 blocks, 0 free)."""
    try:
        st = os.statvfs(folder)
    except (OSError, AttributeError):  # no statvfs on Windows
        return False
    return st.f_blocks > 0 and st.f_bavail * st.f_frsize < NEARLY_FULL


def busy_error(path: Path, waited_s: float, exc: sqlite3.Error) -> LedgerBusy:
    return LedgerBusy(f"the ledger {path} is locked by another process (waited {waited_s:g} s: {exc}); try again later")


def is_busy(exc: sqlite3.Error) -> bool:
    """SQLITE_BUSY or SQLITE_LOCKED ("database is locked"): another connection holds the lock."""
    return verdict(exc) == "busy"
