"""Finding the Cline CLI's session folders and files and stat-ing them cheaply (`scan`, `relist`, `ScanCache`).
Never parses a file (parse.py does) and never speaks SQL.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...files import RACY_NS, Checkpoint, FileStat, _why, atomic_write, meta  # (RACY_NS: changed since: listed again)

if TYPE_CHECKING:
    from ...watch import Watcher

MESSAGES_SUFFIX = ".messages.json"
FULL_SWEEP_S = 300.0  # every session folder is listed again at least this often (a running process's scans)
WATCHED_SWEEPS = 6  # while folders are watched (watch.py), a full sweep every 6 x FULL_SWEEP_S: 30 minutes
ENDED_SWEEP_S = 300.0  # a watched ended session's files are stat-ed again at least this often (an event: at once)


@dataclass(slots=True)
class Folder:
    session_id: str
    path: str
    manifest: FileStat
    messages: list[FileStat]  # the lead's file first when present


@dataclass
class Scan:
    folders: list[Folder] = field(default_factory=list)
    problems: dict[str, str] = field(default_factory=dict)  # path -> what is wrong
    swept: bool = True  # every session folder was listed (not taken from a cache)


class ScanCache:
    """What a scan learnt, for the next one in this process.

    The sessions folder's listing is kept by its stamp (mtime, ctime, inode): adding or removing a session
    folder changes it. A session folder's stamp says nothing useful (Cline rewrites files in place), and
    stat-ing 5,000 of them costs as much as stat-ing their files, so a session folder is listed again only
    when something may have been added to it (see `scan`). Each folder's last `Folder` is kept; when every
    one of its files stats as before, that same object is returned again."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        sweep_s: float = FULL_SWEEP_S,
        saved: str | None = None,
        wall_ns: Callable[[], int] = time.time_ns,
    ) -> None:
        """`saved`: a file where a process's first scan finds the folder listings an earlier process made
        (`Saved`), so that it lists only the folders changed since. `wall_ns`: the wall clock (epoch ns) the
        racy-timestamp rule compares a folder's times with."""
        self.saved, self.wall_ns = saved, wall_ns
        self._listings: dict[str, tuple[tuple[int, int, int], list[str]]] = {}
        self._dir: str | None = None
        # id -> its last listing, and its files as ("<id>/<file name>", checkpoint) pairs
        self._folders: dict[str, tuple[Folder, list[tuple[str, Checkpoint]]]] = {}
        self.settled: Callable[[], Container[str]] = frozenset  # the ids of sessions that cannot grow (see `scan`)
        self.clock, self.sweep_s = clock, sweep_s
        self._swept_at: float | None = None
        self._ended_at: float | None = None
        self.used = False  # set by the first scan
        self.watcher: Watcher | None = None  # from the second scan, where the platform has one (watch.py)
        # the sessions folder's entries at its last listing: name -> (inode, a link's target)
        self._inodes: dict[str, tuple[int, str]] = {}
        self._watch_tried = False

    def _watcher(self, sessions_dir: str) -> Watcher | None:
        if not self._watch_tried:
            self._watch_tried = True
            from ... import watch  # (a long-running process's second scan: a command never loads it)

            self.watcher = watch.watcher(sessions_dir)
        return self.watcher

    def close(self) -> None:
        if self.watcher is not None:
            self.watcher.close()
            self.watcher = None

    def names(self, path: str, stamp: tuple[int, int, int]) -> list[str] | None:
        hit = self._listings.get(path)
        return hit[1] if hit is not None and hit[0] == stamp else None

    def remember(self, path: str, stamp: tuple[int, int, int], names: list[str], now_ns: int) -> None:
        if now_ns - max(stamp[0], stamp[1]) > RACY_NS:
            self._listings[path] = (stamp, names)
        else:  # changed a moment ago: it may change again within the same timestamp tick
            self._listings.pop(path, None)

    def _sweep_due(self, watching: bool = False) -> bool:
        """A full sweep (every folder listed) every `sweep_s`; WATCHED_SWEEPS times as rarely while the kernel
        reports changes (a sweep of 5,000 folders costs 0.1 s of a core; the sweep of the ended sessions' files,
        every ENDED_SWEEP_S, covers what a watch cannot see meanwhile)."""
        now = self.clock()
        if self._swept_at is None or now - self._swept_at >= self.sweep_s * (WATCHED_SWEEPS if watching else 1):
            self._swept_at = self._ended_at = now
            return True
        return False

    def _ended_due(self) -> bool:
        """The watched ended sessions' files are stat-ed every ENDED_SWEEP_S (10 polls at the tray's default
        30 s; 0.04 s at 5,000 sessions), not at every poll: they cannot grow unless resumed, and a resumed
        session's write is an event."""
        now = self.clock()
        if self._ended_at is None or now - self._ended_at >= min(ENDED_SWEEP_S, self.sweep_s):
            self._ended_at = now
            return True
        return False


class Saved:
    """The folder listings of a process's first scan, kept in a file for the next process's: a warm `trayburn
    today` lists only the folders changed since. A folder whose stamp (mtime, ctime, inode, device) is as when
    it was listed holds the same entries (adding, removing or renaming one sets its mtime and ctime); its files
    are still stat-ed (Cline rewrites them in place). So does one whose change time alone moved, with its mode,
    owner or group (`files.meta`, saved beside the stamp): a chmod or chown, which adds no entry; it takes the
    new stamp unlisted (`_moved_by_meta`). A listing is kept only when its folder had not changed for RACY_NS
    before it was listed (a change within the same timestamp tick could leave the stamp as it was). It vouches
    for names only: a file that no longer stats sends its folder to a listing. A missing, unreadable or foreign
    file counts as none; the file holds no figure (the ledger does)."""

    VERSION = 1

    def __init__(self, names: list | None = None, folders: dict[str, list] | None = None) -> None:
        self.names = names  # [the sessions folder's stamp (mtime, ctime, inode, its meta), its sub-folders' names]
        # name -> [mtime, ctime, inode, device, its messages files' names or None, its meta] (an older trayburn's
        # entries lack the meta: such a folder is listed again when its change time moves)
        self.folders = folders or {}
        self.changed = False

    @classmethod
    def load(cls, path: str, sessions_dir: str) -> Saved:
        try:
            with open(path, "rb") as fh:
                doc = json.loads(fh.read())
            if doc["version"] == cls.VERSION and doc["dir"] == sessions_dir and isinstance(doc["folders"], dict):
                return cls(doc["names"], doc["folders"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
        return cls()

    def store(self, path: str | None, sessions_dir: str) -> None:
        """Written again only when a listing changed; best effort (a process that cannot write it lists more)."""
        if not self.changed or path is None:
            return
        doc = {"version": self.VERSION, "dir": sessions_dir, "names": self.names, "folders": self.folders}
        with contextlib.suppress(OSError, ValueError):
            atomic_write(path, json.dumps(doc, separators=(",", ":")).encode(), durable=False)

    def listed(self, stamp: tuple[int, int, int] | None, names: list[str], its_meta: str | None = None) -> None:
        self.names, self.changed = ([[*stamp, its_meta], names] if stamp else None), True

    def names_at(self, st: os.stat_result, now: int) -> list[str] | None:
        """The sessions folder's saved sub-folder names, when its stamp (`st`) is as saved or was moved by a change
        of its metadata alone (then saved with the new stamp); None: list it."""
        try:
            was, names = self.names or (None, None)
            if was is None or not isinstance(names, list):
                return None
            if was[:3] == [st.st_mtime_ns, st.st_ctime_ns, st.st_ino]:
                if len(was) < 4:  # an older trayburn's stamp: its metadata is the folder's now (nothing moved since)
                    self.listed((st.st_mtime_ns, st.st_ctime_ns, st.st_ino), names, meta(st))
                return names
            moved = _moved_by_meta(was, was[3] if len(was) > 3 else None, st, now)
        except (TypeError, ValueError, IndexError, KeyError):  # a damaged file: none
            return None
        if moved is None:
            return None
        self.listed((st.st_mtime_ns, st.st_ctime_ns, st.st_ino), names, moved)
        return names

    def scan(self, names: Sequence[str], out: Scan, base: int | None, prefix: str, now: int) -> None:
        """Every folder: stat-ed, then its saved files stat-ed when its stamp is as saved, else listed.
        Written for speed (a warm `today`'s walk): one stat per file and per folder, nothing listed."""
        stat_, new, sep, above, old = os.stat, tuple.__new__, os.sep, ("" if base is not None else prefix), self.folders
        kept: dict[str, list] = {}
        folders = out.folders
        for name in names:
            hit = old.get(name)
            try:
                st = stat_(above + name, dir_fd=base)
                if hit is not None:
                    if (
                        hit[0] != st.st_mtime_ns
                        or hit[1] != st.st_ctime_ns
                        or hit[2] != st.st_ino
                        or hit[3] != st.st_dev
                    ):
                        hit = _restamped(hit, st, now)  # (None: listed again)
                    elif len(hit) == 5:  # an older trayburn's entry: the metadata of its stamp added
                        hit = [*hit, meta(st)]
                if hit is not None:
                    path, inside = prefix + name + sep, above + name + sep
                    m = stat_(inside + name + ".json", dir_fd=base)
                    messages = []
                    for file in hit[4] if hit[4] is not None else (name + MESSAGES_SUFFIX,):
                        f = stat_(inside + file, dir_fd=base)
                        messages.append(
                            FileStat(path + file, new(Checkpoint, (f.st_size, f.st_mtime_ns, f.st_ino, f.st_ctime_ns)))
                        )
                    ckpt = new(Checkpoint, (m.st_size, m.st_mtime_ns, m.st_ino, m.st_ctime_ns))
                    folders.append(Folder(name, prefix + name, FileStat(path + name + ".json", ckpt), messages))
                    kept[name] = hit
                    continue
            # gone, or a file that no longer stats, or a saved entry of another shape (a damaged or hand-edited
            # file): the listing says which
            except (OSError, LookupError, TypeError, ValueError):
                pass
            self._list(name, out, prefix, now, kept)
        self.changed = self.changed or kept != old
        self.folders = kept

    @staticmethod
    def _list(name: str, out: Scan, prefix: str, now: int, kept: dict[str, list]) -> None:
        """The folder listed, and kept if it was listed cleanly and had not changed for RACY_NS before."""
        try:
            st: os.stat_result | None = os.stat(prefix + name)
        except OSError:
            st = None
        before = len(out.problems)
        folder = _list_folder(name, prefix + name, out.problems, None)
        if folder is None:
            return
        out.folders.append(folder)
        if st is not None and len(out.problems) == before and now - max(st.st_mtime_ns, st.st_ctime_ns) > RACY_NS:
            kept[name] = [st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev, _messages_names(folder), meta(st)]


def _restamped(hit: list, st: os.stat_result, now: int) -> list | None:
    """A saved folder entry with the folder's new stamp, when a change of its metadata alone moved it (its names
    are as listed); None otherwise."""
    moved = _moved_by_meta(hit, hit[5], st, now) if len(hit) > 5 and hit[3] == st.st_dev else None
    return None if moved is None else [st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev, hit[4], moved]


def _moved_by_meta(was: Sequence, was_meta: object, st: os.stat_result, now: int) -> str | None:
    """The folder's metadata now, when what moved its change time since its stamp `was` (mtime, ctime, inode)
    was saved with `was_meta` is a change of that metadata alone (as `files.metadata_only` tells for a file: the
    mtime and inode as they were, the mode, links, owner or group not) at least RACY_NS ago. An entry added or
    removed sets the mtime too. None otherwise."""
    if not isinstance(was_meta, str) or was[0] != st.st_mtime_ns or was[2] != st.st_ino or was[1] == st.st_ctime_ns:
        return None
    now_meta = meta(st)
    return now_meta if now_meta != was_meta and now - st.st_ctime_ns > RACY_NS else None


def _messages_names(folder: Folder) -> list[str] | None:
    """The folder's messages files' names, as saved (None: the lead's alone, as most folders hold)."""
    names = [os.path.basename(f.path) for f in folder.messages]
    return None if names == [folder.session_id + MESSAGES_SUFFIX] else names


def scan(sessions_dir: str, cache: ScanCache | None = None) -> Scan:
    """Every session folder with the stats of its manifest and messages files.

    The sessions folder is stat-ed (listed when its stamp changed), so new session folders are found at
    every scan. A session folder is listed (scandir) when (a) `cache` has no listing of it (a first scan
    keeps none), (b) a file of its last listing is gone or stats differently (an active session rewrites
    its lead messages file or manifest after every model call and status change, and its subagents' files
    appear only meanwhile), (c) its id is not in `cache.settled` (idle, running, pending, or not a session
    yet: it may be in the middle of a tool call), (d) its last listing had no lead messages file or a file
    it could not stat, or (e) this scan is a full sweep (the first, then one every `sweep_s`), which bounds
    the delay for anything else (a file copied by hand into an old folder), or (f) the kernel reported an
    event in it (watch.py; a running tray's polls). Otherwise (an ended session's folder) only the files of
    its last listing are stat-ed: at every scan where the folder has no watch (no inotify, a network or
    virtual file system, a folder linked in or replaced, a file with another hard link), and where it has one,
    every ENDED_SWEEP_S: the kernel's silence is trusted for five minutes at most, not until a full sweep."""
    out = Scan()
    cache = ScanCache() if cache is None else cache
    now = cache.wall_ns()
    memo = cache._folders if cache.used else None  # a first scan lists every folder anyway: keeping them pays
    saved = Saved.load(cache.saved, sessions_dir) if memo is None and cache.saved else None
    watcher = cache._watcher(sessions_dir) if memo is not None else None
    changed = watcher.changed() if watcher is not None else None  # before any stat: what changes later is seen
    lost = watcher is not None and changed is None  # events were dropped (a full queue): what changed is unknown
    if lost and watcher is not None:
        watcher.reset()  # every folder listed again, each watched afresh
    out.swept = sweep = cache._sweep_due(watching=watcher is not None) or lost
    restat = sweep or cache._ended_due()  # the ended sessions' files stat-ed in this scan
    cache.used = True  # from the second (a process doing one refresh never does)
    if cache._dir != sessions_dir:
        cache._folders.clear()
        cache._dir = sessions_dir
    prefix = os.path.join(sessions_dir, "x")[:-1]  # + name == os.path.join(sessions_dir, name), minus its cost
    names, fresh = _folder_names(sessions_dir, cache, now, out.problems, sweep, saved)
    folders, stat_ = out.folders, os.stat
    settled = () if sweep or not names or not memo else cache.settled()
    # stat "<id>/<file>" from it: a shorter path walk
    base = _open_dir(sessions_dir) if settled or saved is not None else None
    above = "" if base is not None else prefix
    if saved is not None:
        try:
            saved.scan(names or (), out, base, prefix, now)
        finally:
            if base is not None:
                os.close(base)
        saved.store(cache.saved, sessions_dir)
        return out
    try:
        for name in names or ():
            hit = None if name not in settled or memo is None else memo.get(name)
            if hit is not None and changed is not None and watcher is not None and watcher.watched(prefix + name):
                if prefix + name in changed:
                    hit = None  # something happened in it (a file added, say): listed again at once
                elif not restat:
                    folders.append(hit[0])  # no event since it was listed, and stat-ed under ENDED_SWEEP_S ago
                    continue
            if hit is not None:  # the hot path: stat the files it had, nothing else
                for path, known in hit[1]:
                    try:
                        st = stat_(above + path, dir_fd=base)
                    except OSError:  # gone (or unreadable): listing it again tells which
                        break
                    if (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns) != known:
                        break
                else:
                    folders.append(hit[0])
                    continue
            folder = _list_folder(name, prefix + name, out.problems, memo, watcher)
            if folder is not None:
                folders.append(folder)
    finally:
        if base is not None:
            os.close(base)
    if fresh and memo and len(memo) > len(folders):  # forget folders that were removed
        keep = {f.session_id for f in folders}
        for name in [n for n in memo if n not in keep]:
            del memo[name]
    return out


def relist(scan: Scan, paths: set[str], cache: ScanCache) -> None:
    """List these folders of `scan` again (the ledger knows files in them that the scan did not see:
    another process found them)."""
    folders = []
    for folder in scan.folders:
        again: Folder | None = folder
        if folder.path in paths:
            again = _list_folder(folder.session_id, folder.path, scan.problems, cache._folders, cache.watcher)
        if again is not None:
            folders.append(again)
    scan.folders = folders


def _open_dir(path: str) -> int | None:
    """A descriptor of the folder for `os.stat(..., dir_fd=)`, where the platform has it (not Windows)."""
    if os.stat not in os.supports_dir_fd:
        return None
    try:
        return os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return None


def _folder_names(
    sessions_dir: str, cache: ScanCache, now: int, problems: dict[str, str], sweep: bool, saved: Saved | None = None
) -> tuple[list[str] | None, bool]:
    """The sub-folders' names, oldest sessions first (the ledger's inserts then mostly append), and
    whether they were listed now (not taken from the cache)."""
    try:
        st = os.stat(sessions_dir)
        stamp = st.st_mtime_ns, st.st_ctime_ns, st.st_ino
        names = None if sweep else cache.names(sessions_dir, stamp)
        if names is not None:
            return names, False
        if saved is not None and (names := saved.names_at(st, now)) is not None:
            return names, True
        entries = sorted(os.scandir(sessions_dir), key=lambda e: e.name)
    except OSError as exc:
        problems[sessions_dir] = _why(exc)
        return None, False
    names, clean, inodes = [], True, dict[str, tuple[int, str]]()
    for entry in entries:
        try:
            if entry.is_dir():
                names.append(entry.name)
                # the entry's own inode (a link's, not its target's), and a link's target: a link re-pointed
                # in place often gets the inode its old self just freed
                inodes[entry.name] = (entry.inode(), os.readlink(entry.path) if entry.is_symlink() else "")
        except OSError as exc:
            problems[entry.path] = _why(exc)
            clean = False
    if cache.watcher is not None:  # an entry now another folder or link (replaced, re-pointed): not vouched for
        gone = [n for n, ino in cache._inodes.items() if inodes.get(n, ino) != ino]
        for name in gone:
            cache.watcher.unwatch(os.path.join(sessions_dir, name))
        cache._inodes = inodes
    if clean:
        cache.remember(sessions_dir, stamp, names, now)
    if saved is not None:
        saved.listed(stamp if clean and now - max(stamp[0], stamp[1]) > RACY_NS else None, names, meta(st))
    return names, clean


def _list_folder(
    sid: str, path: str, problems: dict[str, str], memo: dict | None, watcher: Watcher | None = None
) -> Folder | None:
    """`_scan_folder`, remembering the result in `memo` when it may be reused (see `scan`): not when it
    lacks its lead messages file or has a file it could not stat (it is then listed at every scan). Watched
    first, so what changes after the listing comes as an event."""
    if memo is None:
        return _scan_folder(sid, path, problems, None)[0]
    if watcher is not None:
        watcher.watch(path)
    before, linked = len(problems), list[str]()
    folder, files = _scan_folder(sid, path, problems, [], linked)
    if linked and watcher is not None:  # a file with another name elsewhere: changed through that one, no event here
        watcher.unwatch(path)
    if (
        folder is None
        or len(problems) != before
        or not folder.messages
        or folder.messages[0].path != path + os.sep + sid + MESSAGES_SUFFIX
    ):
        memo.pop(sid, None)
    else:
        memo[sid] = (folder, files)
    return folder


def _scan_folder(
    sid: str, path: str, problems: dict[str, str], files: list | None, linked: list[str] | None = None
) -> tuple[Folder | None, list | None]:
    """The folder, and its files as ("<id>/<file name>", checkpoint) pairs added to `files` (if given).
    Written for speed (it runs for every folder of a new process's scan): one pass over the listing."""
    manifest_name, lead_name = sid + ".json", sid + MESSAGES_SUFFIX
    manifest: FileStat | None = None
    lead: FileStat | None = None
    others: list[FileStat] = []
    inside, stat_, new = sid + os.sep, os.stat, tuple.__new__  # (a Checkpoint without its Python-level __new__)
    try:
        with os.scandir(path) as listing:
            for entry in listing:
                name = entry.name
                if name != manifest_name and not name.endswith(MESSAGES_SUFFIX):
                    continue
                file_path = entry.path
                try:  # os.stat, not DirEntry.stat: on Windows only os.stat gives the inode a checkpoint holds
                    st = stat_(file_path)
                except OSError as exc:
                    problems[file_path] = _why(exc)
                    continue
                ckpt = new(Checkpoint, (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns))
                stat = FileStat(file_path, ckpt)
                if linked is not None and st.st_nlink > 1:
                    linked.append(file_path)
                if files is not None:
                    files.append((inside + name, ckpt))
                if name == manifest_name:
                    manifest = stat
                elif name == lead_name:
                    lead = stat
                else:
                    others.append(stat)
    except OSError as exc:  # the folder could not be listed (or stopped listing half-way)
        problems[path] = _why(exc)
        return None, files
    if manifest is None:
        return None, files
    if others:
        others.sort(key=lambda f: f.path)
    return Folder(sid, path, manifest, ([lead] if lead else []) + others), files
