"""Generic file access: trayburn's own files kept private, bounded reads, a file's checkpoint (what says it
changed), and blake2b. Never knows a layout: where an app keeps its files and what they hold is the caller's.

trayburn's own files: folders 0700 and files 0600 whatever the umask, never written through a symbolic link,
read without blocking and within a bound, and the one atomic writer. Everything trayburn writes goes through
here (the settings file, the log, the tray's lock and notification state, the autostart entry, the demo's copy
of the sessions). A folder of trayburn's is made private; one that belongs to someone else and that other users
can write is refused, since anyone could plant a file or a link in it.

blake2b, the one hash trayburn's hot paths use, without OpenSSL: `import hashlib` loads libcrypto (3.6 MB of
memory and 3 ms of every start) for hashes trayburn never needs there. CPython's own `_blake2` is what
`hashlib.blake2b` is anyway.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

try:
    from _blake2 import blake2b as blake2b
except ImportError:  # a Python without it: hashlib's
    from hashlib import blake2b as blake2b


PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
# A file or folder changed within this of now may change again within the same timestamp tick, with the same
# size, which no stat shows (the racy-timestamp rule, as git's): what was seen of it is not trusted yet.
RACY_NS = 2 * 10**9
_POSIX = os.name == "posix"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_COMMON = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


class Refused(OSError):
    """trayburn will not use this path; the message names it and says why."""

    def __init__(self, kind: str, path: str | os.PathLike[str], message: str) -> None:
        super().__init__(message)
        self.kind = kind  # "link" | "not_a_file" | "too_big" | "not_private" | "not_ours"
        self.path = Path(path)


def _ours(st: os.stat_result) -> bool:
    return not _POSIX or st.st_uid == os.geteuid()


def private_dir(path: str | os.PathLike[str]) -> Path:
    """The folder, created if missing; made 0700 when it is ours. A folder of another user's that
    other users can write is refused (Refused "not_private"), and so is a shared folder with the sticky bit
    (`/tmp` itself, as root): its mode is never changed."""
    folder = Path(path)
    folder.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
    st = os.stat(folder)  # followed: the folder itself may be a link (a moved ~/.local, say)
    if not _POSIX:
        return folder
    if _ours(st) and st.st_mode & stat.S_ISVTX:  # a shared folder (/tmp as root): never made private
        raise Refused(
            "not_private",
            folder,
            f"{folder} is a folder shared by every user (its sticky bit is set), so trayburn will not keep its "
            "files there nor change its mode; choose a folder of your own",
        )
    if _ours(st):
        if stat.S_IMODE(st.st_mode) != PRIVATE_DIR:
            os.chmod(folder, PRIVATE_DIR)
    elif st.st_mode & 0o022:
        raise Refused(
            "not_private",
            folder,
            f"{folder} can be written by other users, so trayburn will not keep its files there; "
            "choose a folder of your own",
        )
    return folder


def open_private(path: str | os.PathLike[str], flags: int) -> int:
    """os.open for a file of trayburn's: created 0600 (an existing one of ours is made 0600), never
    through a symbolic link, only a regular file of our own. Raises Refused or OSError."""
    try:
        fd = os.open(path, flags | _NOFOLLOW | _COMMON, PRIVATE_FILE)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK) and os.path.islink(path):
            raise _link(path) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused("not_a_file", path, f"{path} is {describe(st)}, not a regular file; remove it")
        if not _ours(st):
            raise Refused("not_ours", path, f"{path} belongs to another user; trayburn will not write to it")
        if _POSIX and stat.S_IMODE(st.st_mode) != PRIVATE_FILE:
            os.fchmod(fd, PRIVATE_FILE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def atomic_write(path: str | os.PathLike[str], data: bytes, durable: bool = True) -> None:
    """Write the whole file: a temp file beside it (0600), fsync, then replace. A link at `path` is
    replaced, never followed; a missing folder is created 0700. `durable=False`: no fsync, for a file
    whose loss in a crash costs only time (the file is still never seen half-written)."""
    target = Path(path)
    target.parent.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
    import tempfile  # (4 ms of imports: only where a file is written)

    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        if _POSIX:
            os.fchmod(fd, PRIVATE_FILE)  # whatever the umask
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if durable:
        _sync_dir(target.parent)


def _sync_dir(folder: Path) -> None:
    """So the rename itself survives a crash (POSIX; best effort)."""
    if not _POSIX:
        return
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def read_file(path: str | os.PathLike[str], limit: int, follow: bool = True) -> bytes:
    """The whole of a regular file, opened without blocking (a FIFO never hangs) and never read past
    `limit` bytes (a link to /dev/zero never eats memory). Raises FileNotFoundError, Refused
    ("not_a_file", "too_big", and "link" when not `follow`) or OSError."""
    try:
        fd = os.open(path, os.O_RDONLY | _COMMON | (0 if follow else _NOFOLLOW))
    except OSError as exc:
        if not follow and exc.errno in (errno.ELOOP, errno.EMLINK) and os.path.islink(path):
            raise _link(path) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused("not_a_file", path, f"{path} is {describe(st)}, not a regular file")
        if st.st_size > limit:
            raise _too_big(path, limit)  # refused unread
        chunks, total, want = [], 0, st.st_size + 1  # one read in the usual case; more if it grew since
        while total <= limit and (chunk := os.read(fd, min(want, limit + 1 - total))):
            chunks.append(chunk)
            total += len(chunk)
            want = 1 << 16
        if total > limit:
            raise _too_big(path, limit)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _too_big(path: str | os.PathLike[str], limit: int) -> Refused:
    return Refused("too_big", path, f"{path} is over the {limit:,}-byte limit")


def _link(path: str | os.PathLike[str]) -> Refused:
    return Refused(
        "link", path, f"{path} is a symbolic link; trayburn does not follow links among its own files (remove it)"
    )


def describe(st: os.stat_result) -> str:
    """What a path that is not a regular file is, in words."""
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


class Checkpoint(NamedTuple):
    """What says a file changed: a rewrite that keeps size, mtime and inode (a tool restoring times, a copy
    with `cp -p` into place) still moves the change time, which only the kernel sets. So does a change of the
    inode's metadata alone (chmod, chown, another hard link): `metadata_only` tells that one apart."""

    size: int
    mtime_ns: int
    inode: int
    ctime_ns: int


@dataclass(slots=True)
class FileStat:
    path: str
    checkpoint: Checkpoint


class FileProblem(Exception):
    """A file could not be read; the message says why in plain words."""


def checkpoint(st: os.stat_result) -> Checkpoint:
    return Checkpoint(st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)


def stat_file(path: str) -> Checkpoint:
    return checkpoint(os.stat(path))


def meta(st: os.stat_result) -> str:
    """The inode's metadata whose change moves the change time and leaves the content as it was: mode, number
    of links, owner and group ("100644 1 1000 1000"). Stored beside a checkpoint: never change what it holds or
    how it is written without dropping the stored ones (an equal text must always mean equal metadata)."""
    return f"{st.st_mode:o} {st.st_nlink} {st.st_uid} {st.st_gid}"


def meta_at(path: str | bytes, c: Checkpoint) -> str | None:
    """`meta` of the file at `path` as it was when `c` was taken: a stat now that shows `c`'s inode and change
    time (nothing of the inode changed since: any change moves that time). None when it shows other ones, or the
    path does not stat (gone; or not a file: a Kilo session's row)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError, TypeError):  # (ValueError: a NUL in the name)
        return None
    return meta(st) if st.st_ino == c.inode and st.st_ctime_ns == c.ctime_ns else None


def metadata_only(path: str, now: Checkpoint, was: Checkpoint, was_meta: str | None) -> str | None:
    """The file's metadata now, when what moved its change time since `was` (whose metadata was `was_meta`) was
    a change of that metadata alone: size, mtime and inode as they were, the mode, links, owner or group not. The
    content is then as it was at `was`, and `now` may stand for it without a read. None otherwise: read it (the
    change time alone moved, or `was_meta` is not known, or the path no longer shows `now`).

    What it cannot tell: a rewrite keeping size and mtime *and* a chmod (or chown, or link) of the same file
    between two looks, which it takes for the chmod alone."""
    if was_meta is None or now.ctime_ns == was.ctime_ns or now[:3] != was[:3]:
        return None
    meta_now = meta_at(path, now)
    return meta_now if meta_now is not None and meta_now != was_meta else None


def read(path: str, limit_bytes: int) -> tuple[bytes, Checkpoint]:
    """The whole file and its checkpoint as read (fstat on the open handle). Opened without
    blocking, so a FIFO cannot hang us; only regular files are read, and never past the limit."""
    data, st = read_stat(path, limit_bytes)
    return data, checkpoint(st)


def read_stat(path: str, limit_bytes: int) -> tuple[bytes, os.stat_result]:
    """`read`, with the whole fstat of the open handle."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise FileProblem(_why(exc)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FileProblem("is a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file")
        _check_size(st.st_size, limit_bytes)
        data = _read_all(fd, st.st_size, limit_bytes)
    except OSError as exc:
        raise FileProblem(_why(exc)) from None
    finally:
        os.close(fd)
    return data, st


def _read_all(fd: int, size: int, limit_bytes: int) -> bytes:
    """Usually one read of the size fstat gave; read on to the end when the file changed size
    since (or the read came back short), never past the limit."""
    data = os.read(fd, size + 1)
    if len(data) == size:
        return data
    parts, total = [data], len(data)
    while chunk := os.read(fd, 1 << 20):
        parts.append(chunk)
        total += len(chunk)
        _check_size(total, limit_bytes)  # it may have grown since fstat
    _check_size(total, limit_bytes)
    return b"".join(parts)


def _check_size(size: int, limit_bytes: int) -> None:
    if size > limit_bytes:
        raise FileProblem(f"too large: {_amount(size)} is over the {_amount(limit_bytes)} limit (setting max_file_mb)")


def _amount(size: int) -> str:
    return f"{size / 1e6:.0f} MB" if size >= 10**6 else f"{size:,} bytes"


def _why(exc: OSError) -> str:
    import errno

    reasons = {
        errno.EACCES: "permission denied",
        errno.ELOOP: "symbolic link loop",
        errno.ENOENT: "vanished while reading",
        errno.EISDIR: "is a folder",
    }
    why = reasons.get(exc.errno) if exc.errno is not None else None
    return why or exc.strerror or str(exc)


# ---- text read from files anyone could write, safe to print ----------------------------------------------------

# What a terminal would obey rather than show: C0 controls but tab and newline (ESC, BEL, a lone CR…),
# DEL, C1 controls (0x9b is CSI on its own), and the bidirectional overrides that reorder a line.
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def clean(text: str) -> str:
    """Text safe to print: titles, model names and paths come from files anyone could write, so an
    OSC 52 clipboard write or a screen clear in a title is removed, never sent to the terminal."""
    text = CONTROLS.sub("", text)
    return text if text.isascii() else _escaped(text)


def _escaped(text: str) -> str:
    """A name that is not UTF-8 (a surrogate escape, as Python reads it) shown as its escape: `sess\\udcff`."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text
