"""This machine's part in sharing: who it is, writing its own file, and what `doctor` says about every
machine's file. Never writes outside `sync_dir/trayburn/` and the state folder, and never fails a refresh: a
missing, unwritable or full `sync_dir` is a problem named in `doctor`.

Who it is: an id made once and kept in the state folder, a name (the `machine_name` setting, else the host
name), and a host fingerprint that tells a cloned home folder (same id, another computer) from this one.

Its own file, `sync_dir/trayburn/machines/<id>.json.gz`: a refresh that counted something not yet shared
writes it, at once the first time (or when the file is missing, or `sync_titles` changed), then at most once a
minute while calls keep coming. What was last shared is kept in the state folder (`paths.sync_state_file`), so
the tray and the CLI share one rhythm.

What `doctor` says: this machine's id and file, and each other machine's file (its age, its format version,
what is wrong), those whose files went included.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import secrets
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .. import __version__, paths
from ..figures.day import display_title, project_name
from ..files import Refused, atomic_write, open_private, private_dir, read_file
from ..ledger import Ledger
from ..sources.machine import (
    EXT,
    MAX_CALLS,
    MAX_FILE_BYTES,
    MAX_JSON_BYTES,
    OLD_READER_BYTES,
    VERSION,
    FormatError,
    Header,
    MachineDoc,
    MachineSource,
    decode,
    encode_sized,
    read_header,
)
from . import host_name, machine_name

log = logging.getLogger(__name__)

EVERY_S = 60.0  # at most one write a minute while calls keep coming


@dataclass
class ShareState:
    """Kept in the state folder between processes."""

    shared_ms: int | None = None  # when this machine's file was last written
    pending: bool = False  # something counted since then
    titles: bool | None = None  # `sync_titles` when it was written
    name: str | None = None  # the machine's name when it was written
    path: str | None = None  # where it was written
    written: list[int] | None = None  # the file's (size, mtime_ns, inode) just after our write
    calls: int = 0
    bytes: int = 0
    problem: str | None = None  # why the last write did not happen
    problem_kind: str | None = None  # "missing" | "unwritable" | "refused"
    renamed: str | None = None  # why this machine took a new id (another computer wrote under its old one)
    tried_ms: int | None = None  # when a write was last tried (after one failed: retried once a minute)
    tried_path: str | None = None  # where
    size_note: str | None = None  # this machine's file nears what a reader takes (`size_note`)

    @classmethod
    def load(cls, path: Path) -> ShareState:
        try:
            doc = json.loads(read_file(path, 64_000, follow=False))
            return cls(**{k: v for k, v in doc.items() if k in cls.__dataclass_fields__})
        except (OSError, ValueError, TypeError):
            return cls()

    def save(self, path: Path) -> None:
        atomic_write(path, json.dumps(asdict(self)).encode() + b"\n")


class Sharing:
    """This machine's part in sharing: its identity, its file, and the sources for the others' files."""

    def __init__(self, state_dir: Path, ledger: Ledger, clock: Callable[[], float] = time.time):
        self.state_dir, self.ledger, self.clock = state_dir, ledger, clock
        self._sources: dict[tuple[str, str], MachineSource] = {}
        self._machine: Machine | None = None
        self._clash_memo: tuple[list[int], str | None] | None = None  # (our file's stat, what it said)
        self._unpacked = 0  # the last export's size once unpacked

    def machine(self, name: str | None) -> Machine:
        if self._machine is None or self._machine.name != machine_name(name):
            self._machine = this_machine(self.state_dir, name)
        return self._machine

    def name(self, setting: str | None) -> str:
        """This machine's name for people (no id is made for it)."""
        return machine_name(setting)

    def state(self) -> ShareState:
        return ShareState.load(paths.sync_state_file(self.state_dir))

    # ---- reading the others -----------------------------------------------------------------------

    def sources(self, sync_dir: str | None) -> list[MachineSource]:
        """One source per other machine: each file in the folder, and each machine the ledger holds (so a
        file that went is marked). Never our own id's file."""
        if not sync_dir:
            return []
        folder = paths.machines_dir(Path(sync_dir).expanduser())
        ours = (self._machine or this_machine(self.state_dir)).id  # the id alone: whatever its name
        ids = {f.origin for f in self.ledger.machine_files()} | set(_listed(folder))
        ids.discard(ours)
        return [self._source(folder, i) for i in sorted(ids)]

    def _source(self, folder: Path, origin: str) -> MachineSource:
        key = (str(folder), origin)
        if key not in self._sources:
            self._sources[key] = MachineSource(folder, origin, self.ledger.feed_sessions)
        return self._sources[key]

    # ---- writing ours -----------------------------------------------------------------------------

    def after_refresh(self, sync_dir: str | None, name: str | None, titles: bool, counted: bool) -> ShareState | None:
        """Write this machine's file if it is due. `counted`: this refresh changed this machine's calls. One
        process of this machine at a time (the tray and a CLI command may refresh at once): each finds the
        file as the last of them left it, so none takes the other for a clone."""
        if not sync_dir:
            return None
        with _one_at_a_time(self.state_dir) as mine:
            if not mine:
                log.warning("not shared this time: another trayburn process of this machine is still sharing")
                return self.state()
            return self._after_refresh(sync_dir, name, titles, counted)

    def _after_refresh(self, sync_dir: str, name: str | None, titles: bool, counted: bool) -> ShareState:
        state_path = paths.sync_state_file(self.state_dir)
        state = ShareState.load(state_path)
        before = asdict(state)
        state.pending = state.pending or counted
        target = paths.machines_dir(Path(sync_dir).expanduser()) / f"{self.machine(name).id}{EXT}"
        first = (
            state.shared_ms is None
            or state.path != str(target)
            or (state.titles, state.name)
            != (
                titles,
                self.machine(name).name,
            )
        )
        now_ms = int(self.clock() * 1000)
        due = first or not _exists(target) or (state.pending and now_ms - (state.shared_ms or 0) >= EVERY_S * 1000)
        clash = self._clash(state, target, self.machine(name))
        if clash == OWN_HISTORY:  # an older copy of our own file, or our state restored from a copy: rewritten
            due, clash = True, None
        if clash:  # another computer writes under our id: this one takes a new id, and says so
            self._renew(state, name, clash)
            target = paths.machines_dir(Path(sync_dir).expanduser()) / f"{self.machine(name).id}{EXT}"
            due = True
        # after a failed write (a full or read-only sync_dir), the whole export is tried again once a minute,
        # not at every poll
        waiting = (
            state.problem_kind in ("missing", "unwritable", "refused")
            and state.tried_path == str(target)
            and now_ms - (state.tried_ms or 0) < EVERY_S * 1000
        )
        if (due or state.problem) and not waiting:
            self._write(state, target, self.machine(name), titles, now_ms)
        if asdict(state) != before:
            state.save(state_path)
        return state

    def _renew(self, state: ShareState, name: str | None, clash: str) -> None:
        old = self.machine(name).id
        self._machine = new_id(self.state_dir, name)
        self._clash_memo = None
        state.renamed = (
            f"{clash}; this machine now shares as id {self._machine.id} (the other keeps {old}, and its calls"
            " are counted here as another machine's)"
        )
        state.shared_ms = state.written = None
        log.warning("%s", state.renamed)

    def _write(self, state: ShareState, target: Path, machine: Machine, titles: bool, now_ms: int) -> None:
        state.tried_ms, state.tried_path = now_ms, str(target)
        try:
            _prepare(target.parent)
            data, calls = self.export(machine, titles, now_ms)
            atomic_write(target, data)
            st = os.stat(target)
        except _NotShared as exc:
            state.problem, state.problem_kind = str(exc), exc.kind
            log.warning("not shared: %s", exc)
            return
        except OSError as exc:  # full, read-only, gone while writing
            state.problem, state.problem_kind = f"cannot write {target}: {exc.strerror or exc}", "unwritable"
            log.warning("not shared: %s", state.problem)
            return
        state.shared_ms, state.pending, state.titles, state.path = now_ms, False, titles, str(target)
        state.name = machine.name
        state.written, state.calls, state.bytes = [st.st_size, st.st_mtime_ns, st.st_ino], calls, len(data)
        state.problem = state.problem_kind = None
        state.size_note = size_note(calls, self._unpacked)
        if state.size_note:
            log.warning("%s", state.size_note)

    def _clash(self, state: ShareState, target: Path, machine: Machine) -> str | None:
        """Another computer writing under our id (a home, state folder or whole disk image cloned): our file
        is not as we left it and its header is not our last write (by its time, whatever its host name). A
        sync tool that only re-creates the file (new inode, same bytes) is no clash. Checked whenever the
        file is not as we left it (its header read once per version of it)."""
        try:
            st = os.lstat(target)
        except OSError:
            return None
        stamp = [st.st_size, st.st_mtime_ns, st.st_ino]
        if state.written == stamp:
            return None  # as we left it
        if self._clash_memo is not None and self._clash_memo[0] == stamp:
            return self._clash_memo[1]
        try:
            data = read_file(target, MAX_FILE_BYTES, follow=False)
            header = read_header(data)
        except (OSError, FormatError):
            header = None  # a broken or foreign file under our name: ours to replace
        clash = None
        if header is not None and header.written_ms != state.shared_ms:  # not our last write, whatever its host
            if header.host == machine.host and self._own_history(header, data, state):
                clash = OWN_HISTORY
            else:
                other = "another computer" if header.host != machine.host else "another computer with this one's host"
                clash = (
                    f"{other} ({header.name or 'unnamed'}) wrote this machine's id {machine.id} (a cloned disk or"
                    " home?)"
                )
        self._clash_memo = (stamp, clash)
        return clash

    def _own_history(self, header: Header, data: bytes, state: ShareState) -> bool:
        """Written by this computer (its host fingerprint): an older version of our file (the sync tool put one
        back: written before our last write), or a newer one while our state is an older copy (the state folder
        restored from a backup): then every session the file holds is one this machine holds too. A clone that
        has gone its own way holds sessions this one never saw."""
        if state.shared_ms is not None and header.written_ms < state.shared_ms:
            return True
        try:
            theirs = {row[0] for row in decode(data).sessions}
        except FormatError:
            return False
        return theirs <= {s.id for s in self.ledger.local_sessions()}

    def export(self, machine: Machine, titles: bool, now_ms: int) -> tuple[bytes, int]:
        """This machine's file: its calls (one per key) and its sessions; titles and paths only with `titles`."""
        sessions: list[tuple] = []
        index: dict[str, int] = {}
        for s in self.ledger.local_sessions():
            index[s.id] = len(sessions)
            where = s.workspace_root or s.cwd
            project = project_name(where) if where else None
            sessions.append(
                (
                    s.id, s.started_ms, s.ended_ms, s.status, project, s.source, s.model, s.provider,
                    display_title(s.title, s.prompt) if titles else None,
                    s.cwd if titles else None, s.workspace_root if titles else None,
                )
            )  # fmt: skip
        calls: list[tuple] = []
        for c in self.ledger.local_calls():
            if c.session_id not in index:  # a call without its session row: give it one
                index[c.session_id] = len(sessions)
                sessions.append((c.session_id, None, None, None, None, None, None, None, None, None, None))
            calls.append(
                (
                    c.key, c.ts_ms, c.model, c.provider, c.input, c.output, c.cache_read, c.cache_write, c.cost,
                    index[c.session_id], c.agent,
                )
            )  # fmt: skip
        header = Header(VERSION, 1, machine.id, machine.name, machine.host, now_ms, __version__, titles)
        data, self._unpacked = encode_sized(MachineDoc(header, sessions, calls))
        return data, len(calls)


NEAR = 0.75  # a file this near a reader's bound (calls or bytes) is said in doctor, as a sharing problem


def size_note(calls: int, unpacked: int) -> str | None:
    """What `doctor` says of this machine's file's size: near the bound of every reader (a problem: past it, the
    others refuse the file whole), or past what trayburn 0.3 and older read (they refuse it; newer ones read it)."""
    if calls >= NEAR * MAX_CALLS or unpacked >= NEAR * MAX_JSON_BYTES:
        return (
            f"this machine's shared file holds {calls:,} calls ({unpacked / 1e6:.0f} MB unpacked); other machines"
            f" read at most {MAX_CALLS:,} calls and {MAX_JSON_BYTES // 10**6} MB: past that they refuse it whole"
        )
    if unpacked > OLD_READER_BYTES:
        return (
            f"this machine's shared file is {unpacked / 1e6:.0f} MB unpacked: trayburn 0.3 and older, which read"
            " at most"
            f" {OLD_READER_BYTES // 10**6} MB, refuse it (upgrade trayburn on the other machines)"
        )
    return None


OWN_HISTORY = "own history"  # `_clash`: the file under our id is this machine's own, an older or a newer copy


class _NotShared(Exception):
    def __init__(self, message: str, kind: str):
        super().__init__(message)
        self.kind = kind


def _prepare(folder: Path) -> None:
    """`sync_dir` must exist (an unmounted network home is not created); `trayburn/machines` under it
    is made, and neither may be a link (nothing is ever written outside `sync_dir/trayburn/`)."""
    sync_dir = folder.parent.parent
    if not sync_dir.is_dir():
        raise _NotShared(f"sync_dir {sync_dir} is not a folder (missing, or not mounted?)", "missing")
    for part in (folder.parent, folder):
        try:
            if stat.S_ISLNK(os.lstat(part).st_mode):
                raise _NotShared(f"{part} is a symbolic link; trayburn writes only in a real folder there", "refused")
        except FileNotFoundError:
            pass
    try:
        private_dir(folder)
    except Refused as exc:
        raise _NotShared(str(exc), "refused") from None


LOCK_WAIT_S = 10.0  # another process of this machine sharing longer (a hung network sync_dir): skip this turn


@contextlib.contextmanager
def _one_at_a_time(state_dir: Path) -> Iterator[bool]:
    """An exclusive lock on `sync.lock` in the state folder while this process shares (POSIX; elsewhere
    none): True once held; False when another process of this machine held it for LOCK_WAIT_S."""
    try:
        import fcntl
    except ImportError:
        yield True
        return
    fd = open_private(private_dir(state_dir) / "sync.lock", os.O_RDWR | os.O_CREAT)
    try:
        deadline = time.monotonic() + LOCK_WAIT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    yield False
                    return
                time.sleep(0.02)
        yield True
    finally:
        os.close(fd)


def _exists(path: Path) -> bool:
    return os.path.lexists(path)


def _listed(folder: Path) -> list[str]:
    """Machine ids of the files in the folder (temp files, other names and other extensions ignored)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    ids = (n.removesuffix(EXT) for n in names if n.endswith(EXT) and not n.startswith("."))
    return [i for i in ids if ID_PATTERN.fullmatch(i)]


ID_PATTERN = re.compile(r"[0-9a-f]{16}")


@dataclass(frozen=True)
class Machine:
    """This machine as it names itself in the sync folder."""

    id: str  # 16 hex digits, the machine file's name
    name: str  # for people
    host: str  # fingerprint of the computer (not of the home folder): differs on a cloned home


def host_fingerprint() -> str:
    """A hash of what names the computer itself: /etc/machine-id where there is one, and the host name.
    Never the home folder's contents, which a clone copies."""
    parts = [host_name()]
    for path in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
        try:
            parts.append(read_file(path, 4096).decode("ascii", "replace").strip())
            break
        except OSError:
            continue
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def this_machine(state: Path, name: str | None = None) -> Machine:
    """The id from the state folder, made (and saved, private) the first time."""
    path = paths.machine_file(state)
    machine_id = _read_id(path)
    if machine_id is None:
        machine_id = secrets.token_hex(8)
        atomic_write(path, json.dumps({"id": machine_id}).encode() + b"\n")
    return Machine(machine_id, machine_name(name), host_fingerprint())


def new_id(state: Path, name: str | None = None) -> Machine:
    """A new id for this machine (its old one was found in use by another computer)."""
    machine_id = secrets.token_hex(8)
    atomic_write(paths.machine_file(state), json.dumps({"id": machine_id}).encode() + b"\n")
    return Machine(machine_id, machine_name(name), host_fingerprint())


def _read_id(path: Path) -> str | None:
    try:
        doc = json.loads(read_file(path, 4096, follow=False))
    except (OSError, Refused, ValueError):
        return None
    value = doc.get("id") if isinstance(doc, dict) else None
    return value if isinstance(value, str) and ID_PATTERN.fullmatch(value) else None


@dataclass
class MachineStatus:
    """One machine's file in the sync folder as `doctor` shows it."""

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
    """Sharing as `doctor` shows it: this machine's file and every other machine's."""

    sync_dir: str | None
    machine_id: str | None = None
    machine_name: str | None = None
    titles: bool = False
    shared_ms: int | None = None
    problem: str | None = None  # why this machine's file was not written
    problem_kind: str | None = None
    renamed: str | None = None  # why this machine took a new id (another computer wrote under its old one)
    machines: list[MachineStatus] = field(default_factory=list)
    size_note: str | None = None  # this machine's file nears (or passes) what readers take (`size_note`)

    @property
    def problem_line(self) -> str | None:
        """The first thing wrong with sharing, for the menu's problem line (None: nothing)."""
        if self.problem:
            return self.problem
        if self.size_note:
            return self.size_note
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
    out.renamed, out.size_note = state.renamed, state.size_note
    counted = sharing.ledger.counted_by_origin()
    folder = paths.machines_dir(Path(sync_dir).expanduser())
    held = {f.origin: f for f in sharing.ledger.machine_files()}
    for mid in sorted(set(_listed(folder)) | set(held) | {machine.id}):
        row = held.get(mid)
        status = _status(folder / f"{mid}{EXT}", mid, mid == machine.id)
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
        header = read_header(read_file(path, MAX_FILE_BYTES, follow=False))
    except FormatError as exc:
        status.problem = str(exc)
        return status
    except OSError as exc:
        status.problem = str(exc)
        return status
    status.name, status.version, status.trayburn = header.name or None, header.version, header.trayburn
    return status
