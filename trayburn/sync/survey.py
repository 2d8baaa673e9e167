"""What `doctor` says about sharing: this machine's id and file, and each other machine's file (its age,
its format version, what is wrong), those whose files went included."""

from __future__ import annotations

import os
import stat
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .. import paths
from ..files import read_file
from . import fileformat as ff
from .share import Sharing, _listed


@dataclass
class MachineStatus:
    id: str
    name: str | None
    path: str
    this: bool
    age_s: float | None = None  # since the file was last written (its mtime)
    version: int | None = None  # its format version
    trayburn: str | None = None  # the trayburn that wrote it
    problem: str | None = None
    gone: bool = False  # the file left the folder: its history is kept
    calls: int = 0  # calls counted as this machine's, all time (a call also held here counts for this one)


@dataclass
class SyncHealth:
    sync_dir: str | None
    machine_id: str | None = None
    machine_name: str | None = None
    titles: bool = False
    shared_ms: int | None = None
    problem: str | None = None  # why this machine's file was not written
    problem_kind: str | None = None
    renamed: str | None = None  # why this machine took a new id (another computer wrote under its old one)
    machines: list[MachineStatus] = field(default_factory=list)

    @property
    def problem_line(self) -> str | None:
        """The first thing wrong with sharing, for the menu's problem line (None: nothing)."""
        if self.problem:
            return self.problem
        bad = next((m for m in self.machines if m.problem and not m.this), None)
        return f"{bad.name or bad.id}'s shared file: {bad.problem}" if bad else None

    def to_json(self) -> dict:
        return {**asdict(self), "problem_line": self.problem_line}


def survey(sharing: Sharing, sync_dir: str | None, name: str | None, titles: bool) -> SyncHealth:
    if not sync_dir:
        return SyncHealth(None, machine_name=sharing.name(name), titles=titles)
    machine = sharing.machine(name)
    state = sharing.state()
    out = SyncHealth(sync_dir, machine.id, machine.name, titles, state.shared_ms, state.problem, state.problem_kind)
    out.renamed = state.renamed
    counted = sharing.ledger.counted_by_origin()
    folder = paths.machines_dir(Path(sync_dir).expanduser())
    held = {f.origin: f for f in sharing.ledger.machine_files()}
    for mid in sorted(set(_listed(folder)) | set(held) | {machine.id}):
        row = held.get(mid)
        status = _status(folder / f"{mid}{ff.EXT}", mid, mid == machine.id)
        if status.this and not status.name:  # its file not written yet (or unreadable): it is still this one
            status.name = machine.name
        status.calls = counted.get(None if status.this else mid, 0)
        if row is not None:
            status.name = status.name or row.name
            status.problem = status.problem or row.error
        out.machines.append(status)
    out.machines.sort(key=lambda m: (not m.this, m.name or "", m.id))
    return out


def _status(path: Path, mid: str, this: bool) -> MachineStatus:
    status = MachineStatus(mid, None, str(path), this)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        status.gone = True
        return status
    except OSError as exc:
        status.problem = exc.strerror or str(exc)
        return status
    status.age_s = max(0.0, time.time() - st.st_mtime)
    if not stat.S_ISREG(st.st_mode):
        status.problem = "is a symbolic link" if stat.S_ISLNK(st.st_mode) else "is not a regular file"
        return status
    try:
        header = ff.read_header(read_file(path, ff.MAX_FILE_BYTES, follow=False))
    except ff.FormatError as exc:
        status.problem = str(exc)
        return status
    except OSError as exc:
        status.problem = str(exc)
        return status
    status.name, status.version, status.trayburn = header.name or None, header.version, header.trayburn
    return status
