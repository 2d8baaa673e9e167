"""Which session folders changed since the last look, from the kernel (Linux inotify), so that a running
tray's poll need not stat every file of every session that ended (10,000 stats a poll at 5,000 sessions).

It only ever narrows what a scan stats: a folder is skipped only while it has a watch added before its
last listing and no event came for it since. Anything the watcher cannot vouch for (another platform, no
watch left, an event queue that overflowed, a folder whose watch went away) is stat-ed as before, and the
scan's full sweep (every few minutes) lists everything whatever the watcher says. A tray takes at most a
quarter of the user's inotify watches (and never more than MAX_WATCHES): editors need theirs.
"""

from __future__ import annotations

import errno
import os
import re
import struct
import sys
import weakref
from typing import Any

MAX_WATCHES = 8192
# IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE, IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE, IN_DELETE_SELF,
# IN_MOVE_SELF, IN_ONLYDIR: anything that changes what a folder holds or what its files stat as
_MASK = 0x002 | 0x004 | 0x008 | 0x040 | 0x080 | 0x100 | 0x200 | 0x400 | 0x800 | 0x01000000
_IN_IGNORED, _IN_Q_OVERFLOW = 0x8000, 0x4000
_GONE = 0x400 | 0x800 | 0x2000 | _IN_IGNORED  # IN_DELETE_SELF, IN_MOVE_SELF, IN_UNMOUNT: no longer that path
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len (then `len` bytes of name)


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
        while True:
            try:
                data = os.read(self._fd, 64 * 1024)
            except BlockingIOError:
                break
            except OSError as exc:
                if exc.errno == errno.EINTR:
                    continue
                return None
            if not data:
                break
            at = 0
            while at + _EVENT.size <= len(data):
                wd, mask, _, size = _EVENT.unpack_from(data, at)
                at += _EVENT.size + size
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


# File systems whose changes made by another machine reach no inotify watch here: stat-ed at every poll.
NETWORK = {"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "afs", "ceph", "glusterfs", "lustre", "gpfs", "ncpfs"}
NETWORK_PREFIXES = ("fuse.",)  # sshfs, rclone, s3fs…


def watcher(folder: str) -> Watcher | None:
    """A new watcher for the session folders under `folder`, or None where the platform has none or the
    folder is on a network file system (then every scan stats as before)."""
    if not sys.platform.startswith("linux") or _network(folder):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, AttributeError):
        return None
    if fd < 0:  # EMFILE: the user's instances are taken
        return None
    return Watcher(libc, fd, _limit())


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
