"""Finding Cline's session files and reading them safely. Stats only; parsing lives in parse.py."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import NamedTuple

MESSAGES_SUFFIX = ".messages.json"


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


def scan(sessions_dir: str) -> Scan:
    """Every session folder with the stats of its manifest and messages files."""
    out = Scan()
    try:
        entries = list(os.scandir(sessions_dir))
    except OSError as exc:
        out.problems[sessions_dir] = _why(exc)
        return out
    for entry in entries:
        try:
            if not entry.is_dir():
                continue
        except OSError as exc:
            out.problems[entry.path] = _why(exc)
            continue
        folder = _scan_folder(entry.name, entry.path, out.problems)
        if folder:
            out.folders.append(folder)
    return out


def _scan_folder(sid: str, path: str, problems: dict[str, str]) -> Folder | None:
    try:
        entries = list(os.scandir(path))
    except OSError as exc:
        problems[path] = _why(exc)
        return None
    manifest, lead, others = None, None, []
    manifest_name, lead_name = sid + ".json", sid + MESSAGES_SUFFIX
    for entry in entries:
        name = entry.name
        if name != manifest_name and not name.endswith(MESSAGES_SUFFIX):
            continue
        try:
            stat = FileStat(entry.path, checkpoint(entry.stat()))
        except OSError as exc:
            problems[entry.path] = _why(exc)
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
    """The whole file and its checkpoint as read (fstat on the open handle)."""
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            if st.st_size > limit_bytes:
                raise FileProblem(
                    f"too large: {st.st_size / 1e6:.0f} MB is over the {limit_bytes / 1e6:.0f} MB limit "
                    "(setting max_file_mb)"
                )
            return fh.read(), checkpoint(st)
    except OSError as exc:
        raise FileProblem(_why(exc)) from None


def _why(exc: OSError) -> str:
    import errno

    reasons = {
        errno.EACCES: "permission denied",
        errno.ELOOP: "symbolic link loop",
        errno.ENOENT: "vanished while reading",
        errno.EISDIR: "is a folder",
    }
    return reasons.get(exc.errno, exc.strerror or str(exc))
