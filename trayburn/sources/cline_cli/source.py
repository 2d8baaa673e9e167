"""The Cline CLI's sessions folder as a source: `<sessions>/<id>/<id>.json` (the manifest), the lead's
`<id>.messages.json` beside it, subagents' `*.messages.json`, and a manifest's `messages_path` used only
while the co-located lead file is missing or has never parsed. Other Cline clients that write the same
layout (with another `source` in the manifest) come through here too. Never speaks SQL: it writes through the
ledger's `Writer`.
"""

from __future__ import annotations

import functools
import marshal
import os
from collections.abc import Callable, Container, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from ... import files
from ...files import blake2b
from ..base import Known, Seen, SessionRecord, Writer, changed, should_read
from . import layout

if TYPE_CHECKING:
    from types import ModuleType

    from .parse import Messages

LEAD, OTHER, EXTERNAL, MANIFEST = "messages", "messages", "external", "manifest"
P = TypeVar("P")


class ClineCliSource:
    feed = "cline_cli"
    origin: str | None = None  # this machine

    def __init__(self, sessions_dir: str, clock: Callable[[], float], saved: str | None = None):
        """`saved`: where the folder listings are kept for the next process (`layout.Saved`)."""
        self.sessions_dir = str(sessions_dir)
        self.listings = layout.ScanCache(clock, saved=saved)  # see `layout.scan` for when a folder is listed again
        self.last = layout.Scan()
        # folders (the very objects the scan gave) found as last read against this `known` dict; its live files
        self._checked: tuple[object | None, dict[str, tuple[layout.Folder, int]], int, bool] = (None, {}, 0, False)
        self._digest_memo: tuple[list[layout.Folder], str | None] | None = None  # (the folders, their digest)
        # the last slice's folders against this scan and this `known`: (scan, known, order) (see `_Ingest.run`)
        self._order: tuple[object, object, Order] | None = None

    def watch_folders(self) -> tuple[str, ...]:
        """A new session is a folder added to the sessions folder."""
        return (self.sessions_dir,)

    # ---- stat phase -----------------------------------------------------------------------------

    def scan(self, settled: Callable[[], Container[str]]) -> Seen:
        self.listings.settled = settled
        self.last = scan = layout.scan(self.sessions_dir, self.listings)
        return Seen(
            listed=self.sessions_dir not in scan.problems,  # unlisted: change nothing (not "all removed")
            sessions=len(scan.folders),
            files=sum(1 + len(f.messages) for f in scan.folders),
            problems=scan.problems,
        )

    def digest(self) -> str | None:
        """Computed again only when the scan found other folders than last time (a tray's poll: 0.3 ms to
        compare, where the digest takes 6; the scan returns the very same `Folder` objects for the folders
        whose files all stat as before, and equal ones for those it listed again)."""
        folders, memo = self.last.folders, self._digest_memo
        same = memo is not None and memo[0] == folders and not self.last.problems
        self._digest_memo = (list(folders), memo[1] if same and memo is not None else _digest(self.last))
        return self._digest_memo[1]

    def trusts_digest(self, known: Mapping[str, Known]) -> bool:
        """No file outside the scan matters: no session reads its calls from a `messages_path` elsewhere
        (whose changes only `_externals_changed` stats; one marked gone too: it may come back). Sessions
        without their lead file give no digest."""
        return not any(k.kind == EXTERNAL and k.feed == self.feed for k in known.values())

    def needs_work(self, known: Mapping[str, Known]) -> bool:
        """Whether some file changed (or came, or went) since the ledger last read it. A folder the scan
        gave as the same object as at the last check against this same `known` is not checked again."""
        if self._checked[0] is not known:  # (what `known` holds in all: counted only once every folder is as read)
            self._checked = (known, {}, -1, False)
        _, checked, live, externals = self._checked
        seen = 0
        for folder in self.last.folders:
            hit = checked.get(folder.path)
            if hit is not None and hit[0] is folder:
                seen += hit[1]
                continue
            m = known.get(folder.manifest.path)
            if m is None or changed(folder.manifest, m):
                return True
            n = 1
            if m.good is not None:  # else not a session: its manifest never parsed and has not changed since
                for f in folder.messages:
                    k = known.get(f.path)
                    if (k is None or k.good != f.checkpoint or k.gone) and changed(f, k):  # the first test, inline
                        return True
                    n += 1
            checked[folder.path] = (folder, n)
            seen += n
        if live < 0:
            live = sum(1 for k in known.values() if not k.gone and k.kind != EXTERNAL and k.feed == self.feed)
            externals = any(k.kind == EXTERNAL for k in known.values())
            self._checked = (known, checked, live, externals)
        return live != seen or (externals and self._externals_changed(known))

    def _externals_changed(self, known: Mapping[str, Known]) -> bool:
        """A `messages_path` file matters only while its session has no usable co-located file."""
        leadless = {f.session_id for f in self.last.folders if not _lead_usable(f, known.get(_lead_path(f)))}
        return any(_external_changed(p, k) for p, k in known.items() if k.kind == EXTERNAL and k.session_id in leadless)

    # ---- read phase (inside the ledger's write transaction) -------------------------------------

    def ingest(self, writer: Writer) -> None:
        relisted = self._relist_unseen(writer.known)
        self._checked = (None, {}, 0, False)  # `known` is updated in place by the ledger after this
        memo = self._order
        again = not relisted and memo is not None and memo[0] is self.last and memo[1] is writer.known
        ingest = _Ingest(self.last, writer, memo[2] if again and memo else None)
        self._order = None
        ingest.run()  # (the ledger pauses the cycle collector for the whole refresh: store._collector_paused)
        self._order = (self.last, writer.known, ingest.order)

    def _relist_unseen(self, known: Mapping[str, Known]) -> bool:
        """List again the folders holding files the ledger knows and the scan did not see (another process
        found them since this one listed the folder), rather than mark those files gone."""
        scan = self.last
        if scan.swept:
            return False
        seen = {f.path for d in scan.folders for f in (d.manifest, *d.messages)}
        folders = {d.path for d in scan.folders}
        unseen = {
            os.path.dirname(p)
            for p, k in known.items()
            if not k.gone and k.kind != EXTERNAL and k.feed == ClineCliSource.feed and p not in seen
        }
        if unseen & folders:
            layout.relist(scan, unseen & folders, self.listings)
            return True
        return False


class Order(NamedTuple):
    """After a slice, the folders of its scan: those found as last read or read by it (or by an earlier
    slice), and those left for later in reading order with their newest mtime. A folder that never settles
    (a session without its lead file, say) is so read once per refresh, not at the head of every slice: a
    refresh of slices shorter than those folders took would never have ended."""

    settled: list[layout.Folder]
    changed: list[tuple[int, layout.Folder]]


class _Ingest:
    def __init__(self, scan: layout.Scan, writer: Writer, last: Order | None = None):
        """`last`: the previous slice's `order` against the same scan and the same `known` (which the ledger
        updated in place since): a folder it found as last read still is, and one it left for later still is
        not (only reading a folder writes its files' rows), so a slice of a long ingest (many slices) looks
        at no folder but those it reads."""
        self.scan, self.w, self.known, self.last = scan, writer, writer.known, last
        self.order = Order([], [])
        self.parse: ModuleType = _parse_module()

    def run(self) -> None:
        """Changed folders in the order the plan wants them: those whose files changed since its moment
        first (never deferred), then the rest newest first (a deadline may leave some for later)."""
        w, last = self.w, self.last
        settled, changed = self.order
        if last is None:
            for folder in self.scan.folders:
                if self._as_last_read(folder):  # the usual folder: nothing to do but note that it is there
                    settled.append(folder)
                else:
                    changed.append((_newest(folder), folder))
            changed.sort(key=lambda pair: pair[0], reverse=True)
        else:
            settled += last.settled
            changed += last.changed
        read: list[layout.Folder] = []
        left: list[tuple[int, layout.Folder]] = []
        plan, guard = w.plan, w.guard
        for at, (newest, folder) in enumerate(changed):
            if plan.defer(newest):  # newest first: every folder after it is as old, so left for later too
                left = changed[at:]
                plan.deferred += len(left) - 1
                break
            guard(folder.session_id, folder.manifest, MANIFEST, functools.partial(self._folder, folder))
            read.append(folder)
        if not left:  # (a slice that deferred some marks nothing gone: noting all its folders would cost each
            for folder in settled:  # slice of a long ingest a walk of the whole scan)
                self._note(folder)
        self.order = Order(settled + read, left)

    def _note(self, folder: layout.Folder) -> None:
        w = self.w
        w.seen(folder.manifest.path)
        for f in folder.messages:
            w.seen(f.path)
        w.live(folder.session_id)

    def _as_last_read(self, folder: layout.Folder) -> bool:
        """Every file as it was when last read and parsed, the lead's among them (so no `messages_path`). A file
        whose metadata alone changed since (a chmod, say) is taken as it is (`Writer.adopt`: a stat, never deferred
        as a read may be)."""
        known, adopt = self.known, self.w.adopt
        for f in (folder.manifest, *folder.messages):
            k = known.get(f.path)
            if k is None or k.gone or (k.good != f.checkpoint and not adopt(f)):
                return False
        return bool(folder.messages) and folder.messages[0].path == _lead_path(folder)

    def _folder(self, folder: layout.Folder) -> None:
        sid, w = folder.session_id, self.w
        w.seen(folder.manifest.path)
        fallback = folder.manifest.checkpoint.mtime_ns // 10**6
        manifest = self._manifest(folder, fallback)
        if manifest is None and not w.has_session(sid):
            return  # not a session (yet): its manifest does not parse
        w.live(sid)
        for f in folder.messages:
            w.seen(f.path)
            self._messages(sid, f, LEAD, fallback)
        external = self._external(folder, manifest)
        if external:
            w.seen(external.path)
            self._messages(sid, external, EXTERNAL, fallback)

    @cached_property
    def scanned(self) -> set[str]:  # built on first use: only a session without its lead file needs it
        return {os.path.abspath(f.path) for d in self.scan.folders for f in [d.manifest, *d.messages]}

    def _external(self, folder: layout.Folder, manifest: SessionRecord | None) -> files.FileStat | None:
        """`messages_path`, used only when the co-located lead file is missing or has never parsed."""
        lead = _lead_path(folder)
        if any(f.path == lead for f in folder.messages) and self.w.good_checkpoint(lead) is not None:
            return None
        path = manifest.messages_path if manifest else self.w.path_of_kind(folder.session_id, EXTERNAL)
        if not path or os.path.abspath(path) in self.scanned:  # never another session's (or our own) file
            return None
        try:
            return files.FileStat(path, files.stat_file(path))
        except OSError:
            return None

    def _manifest(self, folder: layout.Folder, fallback: int) -> SessionRecord | None:
        f, sid = folder.manifest, folder.session_id
        m = self._parsed(f, sid, MANIFEST, self.parse.parse_manifest)
        if m is None:
            return None
        record, ckpt = m
        file_id = self.w.ok(f.path, sid, MANIFEST, None, ckpt)
        if record.rollup is not None:
            record.rollup = record.rollup._replace(key=f"{record.id or sid}:rollup")
        record.id, record.folder = sid, folder.path  # filed under its folder's name, whatever the file says
        self.w.session(record, file_id, fallback)
        return record

    def _messages(self, sid: str, f: files.FileStat, kind: str, fallback: int) -> None:
        got = self._parsed(f, sid, kind, _messages_parser(_scope(sid, f.path, kind)))
        if got is None:
            return
        parsed, ckpt = got
        file_id = self.w.ok(f.path, sid, kind, parsed.agent, ckpt)
        self.w.calls(sid, file_id, parsed.agent, parsed.calls, fallback)

    def _parsed(
        self, f: files.FileStat, sid: str, kind: str, parse: Callable[[bytes], P]
    ) -> tuple[P, files.Checkpoint] | None:
        """The file parsed, if it is to be read (it changed); None if not, or if it could not be read or
        parsed (then recorded)."""

        got = self.w.read(f, sid, kind)
        if got is None:
            return None
        data, ckpt = got
        try:
            return parse(data), ckpt
        except self.parse.ParseError as exc:
            self.w.failed(f, sid, kind, str(exc))
            return None


def _parse_module() -> ModuleType:
    """parse.py, imported at the first read: a refresh that finds nothing changed (a warm `today`) never parses."""
    from . import parse

    return parse


def _messages_parser(scope: str) -> Callable[[bytes], Messages]:
    return functools.partial(_parse_messages, scope=scope)


def _parse_messages(data: bytes, scope: str) -> Messages:
    """The calls of a messages file, less a legacy task's copy (a pre-4.0 task resumed by 4.x: counted from its
    folder), looked for only where a user message may open with its warning (`Messages.warning`)."""
    parsed = _parse_module().parse_messages(data, scope)
    if not parsed.warning:
        return parsed
    from ..editor_tasks.parse import trim_legacy_copy

    return trim_legacy_copy(parsed, data)


def _digest(scan: layout.Scan) -> str | None:
    """Every file the scan saw with its checkpoint, as 16 bytes of blake2b (6 ms for 10,000 files; marshalled a
    thousand folders at a time, so 20,000 sessions never hold 5 MB of it at once). None when the scan had
    problems (a folder or file it could not list or stat) or a folder lacks its lead messages file (its calls
    may come from a `messages_path` elsewhere, which no scan stats)."""
    if scan.problems:
        return None
    hashed = blake2b(digest_size=16)
    folders = scan.folders
    for start in range(0, len(folders), DIGEST_CHUNK):
        paths: list[str] = []
        numbers: list[int] = []
        for folder in folders[start : start + DIGEST_CHUNK]:
            files = folder.messages
            if not files or files[0].path != folder.path + os.sep + folder.session_id + layout.MESSAGES_SUFFIX:
                return None  # (_lead_path)
            paths.append(folder.manifest.path)
            numbers.extend(folder.manifest.checkpoint)
            for f in files:
                paths.append(f.path)
                numbers.extend(f.checkpoint)
        hashed.update(marshal.dumps((paths, numbers), 2))  # (version 2: no references, the same bytes every run)
    return hashed.hexdigest()


DIGEST_CHUNK = 1000


def _newest(folder: layout.Folder) -> int:
    """The newest mtime among the folder's files; a folder without its lead file counts as new (its calls
    may come from a `messages_path` elsewhere, whose time the scan does not know)."""
    if not folder.messages or folder.messages[0].path != _lead_path(folder):
        return 2**63
    return max(f.checkpoint.mtime_ns for f in (folder.manifest, *folder.messages))


def _scope(sid: str, path: str, kind: str) -> str:
    """What keys a message without an id: the session for its lead file, session/file for the others."""
    name = os.path.basename(path)
    return sid if kind == EXTERNAL or name == sid + layout.MESSAGES_SUFFIX else f"{sid}/{name}"


def _lead_path(folder: layout.Folder) -> str:
    return os.path.join(folder.path, folder.session_id + layout.MESSAGES_SUFFIX)


def _lead_usable(folder: layout.Folder, known: Known | None) -> bool:
    """The co-located lead file is there and has parsed at least once."""
    lead = _lead_path(folder)
    return any(f.path == lead for f in folder.messages) and known is not None and known.good is not None


def _external_changed(path: str, known: Known) -> bool:
    try:
        current = files.stat_file(path)
    except OSError:
        return not known.gone
    return known.gone or should_read(current, known)
