"""Finding Cline's session files and reading them safely. Stats only; parsing lives in parse.py."""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass, field
from typing import NamedTuple

MESSAGES_SUFFIX = ".messages.json"
RACY_NS = 2 * 10**9  # a folder changed this recently is listed again at the next scan


class Checkpoint(NamedTuple):
    size: int
    mtime_ns: int
    inode: int


@dataclass(slots=True)
class FileStat:
    path: str
    checkpoint: Checkpoint


@dataclass(slots=True)
class Folder:
    session_id: str
    path: str
    manifest: FileStat | None
    messages: list[FileStat]  # the lead's file first when present


@dataclass
class Scan:
    folders: list[Folder] = field(default_factory=list)
    problems: dict[str, str] = field(default_factory=dict)  # path -> what is wrong


class FileProblem(Exception):
    """A file could not be read; the message says why in plain words."""


def checkpoint(st: os.stat_result) -> Checkpoint:
    return Checkpoint(st.st_size, st.st_mtime_ns, st.st_ino)


def stat_file(path: str) -> Checkpoint:
    return checkpoint(os.stat(path))


class ScanCache:
    """What each folder held when it was last listed, by its stamp (mtime, ctime, inode). Cline rewrites
    its files in place, which leaves the folder's stamp alone; adding, removing or renaming a file
    changes it. So a folder with the same stamp has its files stat-ed without being listed again."""

    def __init__(self) -> None:
        self._listings: dict[str, tuple[tuple[int, int, int], list[str]]] = {}
        self.used = False  # set by the first scan

    def names(self, path: str, stamp: tuple[int, int, int]) -> list[str] | None:
        hit = self._listings.get(path)
        return hit[1] if hit is not None and hit[0] == stamp else None

    def remember(self, path: str, stamp: tuple[int, int, int], names: list[str], now_ns: int) -> None:
        if now_ns - max(stamp[0], stamp[1]) > RACY_NS:
            self._listings[path] = (stamp, names)
        else:  # changed a moment ago: it may change again within the same timestamp tick
            self._listings.pop(path, None)


def _stamp(path: str) -> tuple[int, int, int]:
    st = os.stat(path)
    return st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def scan(sessions_dir: str, cache: ScanCache | None = None) -> Scan:
    """Every session folder with the stats of its manifest and messages files. Folders whose stamp
    is the one in `cache` are not listed again (a refresh with nothing new then only stats)."""
    out = Scan()
    cache = ScanCache() if cache is None else cache
    now = time.time_ns()
    stamping = cache.used  # a first scan lists every folder anyway: stamping them pays from the second
    cache.used = True
    prefix = os.path.join(sessions_dir, "x")[:-1]  # + name == os.path.join(sessions_dir, name), minus its cost
    for name in _folder_names(sessions_dir, cache, now, out.problems) or ():
        folder = _scan_folder(name, prefix + name, out.problems, cache, now if stamping else None)
        if folder:
            out.folders.append(folder)
    return out


def _folder_names(sessions_dir: str, cache: ScanCache, now: int, problems: dict[str, str]) -> list[str] | None:
    """The sub-folders' names, oldest sessions first (the ledger's inserts then mostly append)."""
    try:
        stamp = _stamp(sessions_dir)
        names = cache.names(sessions_dir, stamp)
        if names is not None:
            return names
        entries = sorted(os.scandir(sessions_dir), key=lambda e: e.name)
    except OSError as exc:
        problems[sessions_dir] = _why(exc)
        return None
    names, clean = [], True
    for entry in entries:
        try:
            if entry.is_dir():
                names.append(entry.name)
        except OSError as exc:
            problems[entry.path] = _why(exc)
            clean = False
    if clean:
        cache.remember(sessions_dir, stamp, names, now)
    return names


def _scan_folder(sid: str, path: str, problems: dict[str, str], cache: ScanCache, now: int | None) -> Folder | None:
    """`now` None: list the folder without stamping it or using the cache."""
    manifest_name, lead_name = sid + ".json", sid + MESSAGES_SUFFIX
    try:
        stamp = None if now is None else _stamp(path)
        names = None if stamp is None else cache.names(path, stamp)
        if names is None:
            names = [e.name for e in os.scandir(path) if e.name == manifest_name or e.name.endswith(MESSAGES_SUFFIX)]
            if stamp is not None:
                cache.remember(path, stamp, names, now)
    except OSError as exc:
        problems[path] = _why(exc)
        return None
    manifest, lead, others = None, None, []
    prefix = path + os.sep  # == os.path.join(path, name) minus its cost: `path` ends with a folder's name
    for name in names:
        file_path = prefix + name
        try:  # os.stat, not DirEntry.stat: on Windows only os.stat gives the inode a checkpoint holds
            st = os.stat(file_path)
            stat = FileStat(file_path, Checkpoint(st.st_size, st.st_mtime_ns, st.st_ino))
        except OSError as exc:
            problems[file_path] = _why(exc)
            continue
        if name == manifest_name:
            manifest = stat
        elif name == lead_name:
            lead = stat
        else:
            others.append(stat)
    if manifest is None:
        return None
    others.sort(key=lambda f: f.path)
    return Folder(sid, path, manifest, ([lead] if lead else []) + others)


def read(path: str, limit_bytes: int) -> tuple[bytes, Checkpoint]:
    """The whole file and its checkpoint as read (fstat on the open handle). Opened without
    blocking, so a FIFO cannot hang us; only regular files are read, and never past the limit."""
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
    return data, checkpoint(st)


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
    return reasons.get(exc.errno, exc.strerror or str(exc))
