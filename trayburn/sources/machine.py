"""Another machine's file in `sync_dir/trayburn/machines/<id>.json.gz` as a source (trayburn/sync).

Read by checkpoint like a session file (unchanged: not read); its sessions are stored as `<id>/<session>`
and its calls under their own keys, so a call this machine (or a third) also holds counts once. A file
that fails to read or parse keeps its previous import and is retried; a file that disappears keeps its
history, its sessions marked removed; a folder that cannot be seen at all (sync_dir unmounted) changes
nothing. A symbolic link or anything but a regular file is never read.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Container, Mapping
from pathlib import Path

from ..files import checkpoint
from ..sync import fileformat as ff
from .base import Call, Checkpoint, FileStat, Known, Seen, SessionRecord, Writer, changed, qualified_id

KIND = "machine"


class MachineSource:
    def __init__(self, folder: Path, origin: str, held: Callable[[str], list[str]]):
        """`held(feed)`: the sessions the ledger holds of this feed (kept live when the file is not read)."""
        self.folder, self.machine_id, self.feed = folder, origin, f"machine:{origin}"
        self.origin: str | None = origin  # (typed as the Source seam has it)
        self.path = str(folder / f"{origin}{ff.EXT}")
        self.held = held
        self.stat: FileStat | None = None
        # what the last import wrote of each session (a hash of its rows), with the checkpoint it was read
        # at: used only while the ledger's good checkpoint of the file is that one (so it was committed)
        self._imported: tuple[Checkpoint | None, dict[str, int]] = (None, {})

    def scan(self, settled: Callable[[], Container[str]]) -> Seen:
        self.stat = None
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            return Seen(listed=self.folder.is_dir())  # the folder unseen (unmounted): change nothing
        except OSError as exc:
            return Seen(listed=False, problems={self.path: exc.strerror or str(exc)})
        if not stat.S_ISREG(st.st_mode):
            what = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a regular file"
            return Seen(listed=False, problems={self.path: f"is {what}; trayburn reads only regular machine files"})
        if st.st_size > ff.MAX_FILE_BYTES:  # real files are kilobytes to a few megabytes: not read at all
            why = f"is {st.st_size:,} bytes, over the {ff.MAX_FILE_BYTES:,} a machine file can be; not read"
            return Seen(listed=False, problems={self.path: why})
        self.stat = FileStat(self.path, checkpoint(st))
        return Seen(listed=True, sessions=1, files=1)

    def needs_work(self, known: Mapping[str, Known]) -> bool:
        if self.stat is None:
            return any(k.feed == self.feed and not k.gone for k in known.values())  # it went: mark it
        return changed(self.stat, known.get(self.path))

    def ingest(self, writer: Writer) -> None:
        if self.stat is None:
            return  # the ledger marks the file gone and its sessions removed; their calls keep counting
        writer.seen(self.path)
        got = writer.read(self.stat, self.machine_id, KIND)
        doc = None
        if got is not None:
            try:
                doc = ff.decode(got[0])
                if doc.header.machine_id != self.machine_id:
                    raise ff.FormatError(f"its header names machine {doc.header.machine_id}, not {self.machine_id}")
            except ff.FormatError as exc:
                writer.failed(self.stat, self.machine_id, KIND, str(exc))
                doc = None
        if doc is None or got is None:
            for sid in self.held(self.feed):  # the previous import stands
                writer.live(sid)
            return
        known = writer.known.get(self.path)
        was, imported = self._imported
        if known is None or known.good is None or known.good != was:
            imported = {}  # not ours to trust: that import was not committed, or another process imported since
        file_id = writer.ok(self.path, self.machine_id, KIND, doc.header.name or None, got[1])
        self._imported = (got[1], _merge(writer, self.machine_id, doc, file_id, imported))


def _merge(writer: Writer, origin: str, doc: ff.MachineDoc, file_id: int, imported: dict[str, int]) -> dict[str, int]:
    """Sessions and calls into the ledger; a session whose rows hash as at the last (committed) import of
    this file is only kept live. Returns the hashes written."""
    fallback = doc.header.written_ms
    rows: dict[int, list[tuple]] = {}
    for c in doc.calls:
        rows.setdefault(c[9], []).append(c)
    hashes: dict[str, int] = {}
    for index, s in enumerate(doc.sessions):
        sid = qualified_id(origin, s[0])
        mine = rows.get(index, [])
        hashes[sid] = digest = hash((s, *mine))
        writer.live(sid)
        if imported.get(sid) == digest:
            continue
        record = SessionRecord(
            sid, None, s[1], s[2], s[3] or "completed", title=s[8], cwd=s[9], workspace_root=s[10] or s[4],
            model=s[6], provider=s[7], source=s[5],
        )  # fmt: skip
        writer.session(record, file_id, fallback)
        groups: dict[str, list[Call]] = {}
        for c in mine:
            group = groups.setdefault(c[10] or "lead", [])
            group.append(Call(c[0], len(group), c[1], c[2], c[4], c[5], c[6], c[7], c[8], (), provider=c[3]))
        for agent, calls in groups.items():
            writer.calls(sid, file_id, agent, calls, fallback)
    return hashes
