"""Which session folders changed since the last look, from the kernel (Linux inotify), so that a running
tray's poll need not stat every file of every session that ended (10,000 stats a poll at 5,000 sessions).

It only ever narrows what a scan stats: a folder is skipped only while it has a watch added before its
last listing and no event came for it since. Anything the watcher cannot vouch for (another platform, no
watch left, an event queue that overflowed, a folder whose watch went away) is stat-ed as before, and the
scan's full sweep (every few minutes) lists everything whatever the watcher says. A tray takes at most a
quarter of the user's inotify watches (and never more than MAX_WATCHES): editors need theirs.

`Waker` is the other half: it wakes a poller (the tray's, an open window's) the moment a session is written or a
session folder appears, so a call is shown within a second instead of at the next poll. It decides nothing: the
woken poll reads what it would read at its interval, and the interval stays (a missed event costs only time).
Other platforms have no waker and poll at their interval.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import select
import struct
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterable
from typing import Any

MAX_WATCHES = 8192
# IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE, IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE, IN_DELETE_SELF,
# IN_MOVE_SELF, IN_ONLYDIR: anything that changes what a folder holds or what its files stat as
_MASK = 0x002 | 0x004 | 0x008 | 0x040 | 0x080 | 0x100 | 0x200 | 0x400 | 0x800 | 0x01000000
_IN_IGNORED, _IN_Q_OVERFLOW = 0x8000, 0x4000
_GONE = 0x400 | 0x800 | 0x2000 | _IN_IGNORED  # IN_DELETE_SELF, IN_MOVE_SELF, IN_UNMOUNT: no longer that path
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len (then `len` bytes of name)


def read_events(fd: int) -> list[tuple[int, int, bytes]] | None:
    """Every event queued on an inotify descriptor, as (watch, mask, name), read without blocking; None when
    the read failed (what changed is then unknown). Shared by the scan's Watcher and the tray's Waker."""
    events: list[tuple[int, int, bytes]] = []
    while True:
        try:
            data = os.read(fd, 64 * 1024)
        except BlockingIOError:
            return events
        except OSError as exc:
            if exc.errno == errno.EINTR:
                continue
            return None
        if not data:
            return events
        at = 0
        while at + _EVENT.size <= len(data):
            wd, mask, _, size = _EVENT.unpack_from(data, at)
            events.append((wd, mask, data[at + _EVENT.size : at + _EVENT.size + size].rstrip(b"\0")))
            at += _EVENT.size + size


class Watcher:
    def __init__(self, libc: Any, fd: int, limit: int):
        self._libc, self._fd, self._limit = libc, fd, limit
        self._paths: dict[int, str] = {}  # watch descriptor -> folder path
        self._watched: dict[str, tuple[int, int]] = {}  # folder path -> its watch and the folder's inode
        self._finalizer = weakref.finalize(self, os.close, fd)

    def watch(self, path: str) -> None:
        """Watch a folder, before it is listed (what changes after the listing is then seen)."""
        try:
            inode = os.stat(path).st_ino
        except OSError:
            return
        if path in self._watched:
            if self._watched[path][1] == inode:
                return
            self._forget(self._watched[path][0], drop=True)  # another folder now has that path
        if len(self._watched) >= self._limit:
            return
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(path), _MASK)
        if wd < 0:  # ENOSPC (the user's limit), ENOENT (gone): stat-ed as before
            return
        if wd in self._paths:  # the same folder by another path (a link): one path keeps it
            return
        self._paths[wd], self._watched[path] = path, (wd, inode)

    def unwatch(self, path: str) -> None:
        """No longer vouched for (a file in it has another name elsewhere, changed through that one)."""
        if path in self._watched:
            self._forget(self._watched[path][0], drop=True)

    def reset(self) -> None:
        """Every watch dropped (events were lost): folders are watched again as they are listed."""
        for wd in list(self._paths):
            self._forget(wd, drop=True)

    def _forget(self, wd: int, drop: bool) -> None:
        path = self._paths.pop(wd, None)
        if path is not None:
            self._watched.pop(path, None)
        if drop:  # (a watch on a folder moved elsewhere would go on reporting it)
            self._libc.inotify_rm_watch(self._fd, wd)

    def watched(self, path: str) -> bool:
        return path in self._watched

    def changed(self) -> set[str] | None:
        """The paths of the folders with an event since the last call; None: unknown (an overflow, a read
        that failed): every folder is to be stat-ed."""
        seen: set[str] = set()
        unknown = False
        events = read_events(self._fd)
        if events is None:
            return None
        for wd, mask, _name in events:
            if mask & _IN_Q_OVERFLOW:
                unknown = True
                continue
            path = self._paths.get(wd)
            if path is None:
                continue
            seen.add(path)
            if mask & _GONE:  # the folder went away, or moved: that path is no longer vouched for
                self._forget(wd, drop=not mask & _IN_IGNORED)
        return None if unknown else seen

    def close(self) -> None:
        self._finalizer()


# File systems whose changes made by another machine (a host, a guest, a cluster node) reach no inotify watch
# here: stat-ed at every poll. Network ones; a virtual machine's shared folders (virtiofs, VirtualBox's vboxsf,
# VMware's vmhgfs, Hyper-V's drvfs/9p); WebDAV (davfs); cluster file systems (ocfs2, gfs2); every FUSE one.
NETWORK = {
    "nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "afs", "ceph", "glusterfs", "lustre", "gpfs", "ncpfs",
    "virtiofs", "vboxsf", "vmhgfs", "drvfs", "davfs", "coda", "ocfs2", "gfs2", "gfs", "beegfs", "orangefs",
    "fuse", "fuseblk",
}  # fmt: skip
NETWORK_PREFIXES = ("fuse.",)  # sshfs, rclone, s3fs, vmhgfs-fuse…


# What wakes a poller (`Waker`): a session folder added to a sessions folder (IN_CREATE, IN_MOVED_TO), and a
# file written, closed or renamed into an active session's folder (IN_MODIFY, IN_CLOSE_WRITE, IN_MOVED_TO,
# IN_CREATE, IN_DELETE).
_ROOT_MASK = 0x100 | 0x080 | 0x01000000
_ACTIVE_MASK = 0x002 | 0x008 | 0x080 | 0x100 | 0x200 | 0x01000000
_IN_ISDIR = 0x40000000
DEBOUNCE_S = 0.1  # after the first event, this long for the rest of a write (Cline writes, then truncates)
MAX_ACTIVE = 64  # session folders a waker watches for writes (the most recently active ones)
NEW_FOLDER_S = 3600.0  # a session folder that appeared is watched this long, calls or not


class Waker:
    """Says, as soon as it happens, that a session may have changed: a folder added to a sessions folder, or a
    file written in the folder of a recently active session. One inotify instance of its own (the scan's
    `Watcher` keeps its events for itself); it reads nothing of the files and decides nothing: a poller woken
    by it polls as it would at its interval, and a poller it never wakes (an event missed, no inotify here)
    still polls at its interval. Watches: the sessions folders, at most MAX_ACTIVE session folders."""

    def __init__(self, libc: Any, fd: int, clock: Callable[[], float] = time.monotonic):
        self._libc, self._fd, self.clock = libc, fd, clock
        self._lock = threading.Lock()
        self._paths: dict[int, str] = {}  # watch descriptor -> folder
        self._watched: dict[str, int] = {}  # folder -> watch descriptor
        self._roots: set[str] = set()
        self._active: set[str] = set()
        self._new: dict[str, float] = {}  # a session folder that appeared -> when
        self._read_end, self._write_end = os.pipe()
        self._closed = False
        self._finalizer = weakref.finalize(self, _close_all, fd, self._read_end, self._write_end)

    def fileno(self) -> int:
        return self._fd

    def follow(self, roots: Iterable[str], active: Iterable[str]) -> None:
        """Watch these sessions folders and these session folders (the recently active first; at most
        MAX_ACTIVE with the ones that appeared in the last hour); drop the watches of the rest."""
        with self._lock:
            now = self.clock()
            self._new = {p: t for p, t in self._new.items() if now - t < NEW_FOLDER_S}
            self._roots = {os.path.normpath(r) for r in roots}
            wanted = list(dict.fromkeys([*self._new, *(os.path.normpath(a) for a in active)]))[:MAX_ACTIVE]
            self._active = set(wanted) - self._roots
            for path in [p for p in self._watched if p not in self._roots and p not in self._active]:
                wd = self._watched.pop(path)
                self._paths.pop(wd, None)
                self._libc.inotify_rm_watch(self._fd, wd)
            for path in self._roots:
                self._add(path, _ROOT_MASK)
            for path in self._active:
                self._add(path, _ACTIVE_MASK)

    def follow_sessions(self, roots: Iterable[str], ids: Iterable[str]) -> None:
        """`follow()` with the session folders of these ids (the latest first) under each sessions folder."""
        roots = list(roots)
        ids = list(ids)[:MAX_ACTIVE]
        self.follow(roots, [os.path.join(r, i) for r in roots for i in ids if os.path.isdir(os.path.join(r, i))])

    def pending(self) -> bool:
        """Without waiting: whether something changed since the last look (for an event loop watching
        `fileno()`, such as Tk's file handlers; the caller debounces)."""
        return self._drain()

    def _add(self, path: str, mask: int) -> None:
        if path in self._watched:
            return
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(path), mask)
        if wd >= 0:  # (gone, or the user's watches taken: that folder only waits for the poll)
            self._paths[wd], self._watched[path] = path, wd

    def watched(self) -> set[str]:
        with self._lock:
            return set(self._watched)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until something changed (True, after DEBOUNCE_S more for the rest of the write), `timeout`
        passed, or `close()` (False)."""
        deadline = None if timeout is None else self.clock() + timeout
        while not self._closed:
            left = None if deadline is None else max(0.0, deadline - self.clock())
            try:
                ready, _, _ = select.select([self._fd, self._read_end], [], [], left)
            except (OSError, ValueError):  # closed meanwhile
                return False
            if self._read_end in ready or self._closed:
                return False
            if not ready:
                return False
            if self._drain():
                time.sleep(DEBOUNCE_S)  # a debounce, not a synchronisation: the poll reads whatever is there
                self._drain()
                return not self._closed
        return False

    def _drain(self) -> bool:
        """Read the queued events; True if one may mean a changed session. A folder that appeared in a
        sessions folder is watched at once (its first file comes a moment later)."""
        news = False
        with self._lock:
            events = read_events(self._fd)
            if events is None:
                return True  # unknown: worth a poll
            for wd, mask, name in events:
                if mask & _IN_Q_OVERFLOW:
                    news = True
                    continue
                folder = self._paths.get(wd)
                if folder is None:
                    continue
                if mask & _IN_IGNORED:  # the folder went away: its watch with it
                    self._paths.pop(wd, None)
                    self._watched.pop(folder, None)
                    continue
                if name.endswith(b".tmp"):  # half of an atomic write: its rename comes next
                    continue
                news = True
                if folder in self._roots and mask & _IN_ISDIR and len(self._new) < MAX_ACTIVE:
                    path = os.path.join(folder, os.fsdecode(name))
                    self._new[path] = self.clock()
                    self._add(path, _ACTIVE_MASK)
        return news

    def close(self) -> None:
        """Ends any `wait()` at once; the descriptors (and the watches with them) go when the waker does."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(OSError):
            os.write(self._write_end, b"x")


def _close_all(*fds: int) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


def waker() -> Waker | None:
    """A new waker, or None where the platform has no inotify (macOS, Windows: those poll at their
    interval) or the user's inotify instances are taken."""
    libc, fd = _inotify()
    return None if libc is None else Waker(libc, fd)


def _inotify() -> tuple[Any, int]:
    if not sys.platform.startswith("linux"):
        return None, -1
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, AttributeError):
        return None, -1
    return (libc, fd) if fd >= 0 else (None, -1)  # EMFILE: the user's instances are taken


def watcher(folder: str) -> Watcher | None:
    """A new watcher for the session folders under `folder`, or None where the platform has none or the
    folder is on a network file system (then every scan stats as before)."""
    if not sys.platform.startswith("linux") or _network(folder):
        return None
    libc, fd = _inotify()
    return None if libc is None else Watcher(libc, fd, _limit())


def _network(folder: str, mountinfo: str | None = None) -> bool:
    """Whether `folder` is on a network (or FUSE) file system, from /proc/self/mountinfo (or the text given);
    unknown: False."""
    if mountinfo is None:
        try:
            with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as fh:
                mountinfo = fh.read()
        except OSError:
            return False
    target, best, kind = os.path.realpath(folder), -1, ""
    for line in mountinfo.splitlines():
        head, sep, tail = line.partition(" - ")
        fields = head.split()
        if not sep or len(fields) < 5 or not tail.split():
            continue
        point = _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), fields[4])  # (a space is written \040)
        if (target == point or target.startswith(point.rstrip("/") + "/")) and len(point) > best:
            best, kind = len(point), tail.split()[0]
    return kind in NETWORK or kind.startswith(NETWORK_PREFIXES)


_OCTAL = re.compile(r"\\([0-7]{3})")


def _limit() -> int:
    try:
        with open("/proc/sys/fs/inotify/max_user_watches", encoding="ascii") as fh:
            return max(0, min(MAX_WATCHES, int(fh.read()) // 4))
    except (OSError, ValueError):
        return 1024
