"""The Source seam: a second source is a new class, not an edit of the refresh."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.corpus import (
    counted,
    write_json,
)
from helpers.ledgers import cline, empty, sessions  # noqa: F401 (fixtures)

# ---- the Source seam: a second source is a new class, not an edit of the refresh ------------------------


class ExportFile:
    """A minimal other-machine source: one JSON file {"sessions": [...], "calls": [...]}, read when its
    stat changes, its sessions stored as `<origin>/<id>`."""

    def __init__(self, path: Path, origin: str):
        self.path, self.origin, self.feed = path, origin, f"machine:{origin}"
        self.stat = None

    def scan(self, settled):
        from trayburn.sources.base import FileStat, Seen

        try:
            self.stat = FileStat(str(self.path), files_stat(str(self.path)))
        except OSError:
            self.stat = None
        return Seen(listed=True, sessions=1 if self.stat else 0, files=1 if self.stat else 0)

    def needs_work(self, known):
        from trayburn.sources.base import changed

        mine = [p for p, k in known.items() if k.feed == self.feed and not k.gone]
        return (self.stat is None) != (not mine) or (
            self.stat is not None and changed(self.stat, known.get(self.stat.path))
        )

    def ingest(self, writer):
        from trayburn.sources.base import Call, SessionRecord, qualified_id

        if self.stat is None:
            return
        writer.seen(self.stat.path)
        got = writer.read(self.stat, self.origin, "machine")
        if got is None:
            for s in self.known_sessions:
                writer.live(s)
            return
        doc = json.loads(got[0])
        file_id = writer.ok(self.stat.path, self.origin, "machine", None, got[1])
        self.known_sessions = []
        for s in doc["sessions"]:
            sid = qualified_id(self.origin, s["id"])
            self.known_sessions.append(sid)
            writer.live(sid)
            writer.session(SessionRecord(sid, None, s["started_ms"], None, "completed", model=s["model"]), file_id, 0)
            calls = [
                Call(
                    c["key"],
                    i,
                    c["ts_ms"],
                    c["model"],
                    c["input"],
                    c["output"],
                    0,
                    0,
                    c["cost"],
                    (),
                    provider="openrouter",
                )
                for i, c in enumerate(doc["calls"])
                if c["session"] == s["id"]
            ]
            writer.calls(sid, file_id, "lead", calls, 0)

    known_sessions: list[str] = []


def files_stat(path: str):
    from trayburn.files import stat_file

    return stat_file(path)


def test_a_second_source_counts_a_copied_session_once_and_leaves_the_other_feed_alone(tmp_path, sessions, ledger):
    ledger.refresh(sessions)
    before = counted(ledger)
    (sid, key, ts, started), *_ = ledger.query(
        "SELECT c.session_id, c.key, c.ts_ms, s.started_ms FROM calls c JOIN sessions s ON s.id=c.session_id"
        " WHERE c.counted=1 AND c.seq>=0 LIMIT 1"
    )
    export = tmp_path / "laptop.json"
    session = {"id": sid, "started_ms": started, "model": "gpt-4o"}
    own = {"session": "1796000000000_other", "key": "msg_laptop01", "ts_ms": ts, "model": "gpt-4o"}
    copied = {"session": sid, "key": key, "ts_ms": ts, "model": "gpt-4o", "input": 5, "output": 5, "cost": 9.0}
    other = {"id": "1796000000000_other", "started_ms": started, "model": "gpt-4o"}
    write_json(export, {"sessions": [session, other], "calls": [copied, own | {"input": 7, "output": 1, "cost": 0.5}]})
    source = ExportFile(export, "laptop")
    ledger.refresh(source)
    # the copied call counts once (this machine's row: same start, its id sorts first); the laptop's own call adds
    assert counted(ledger)[0] == before[0] + 1
    assert ledger.query("SELECT session_id, provider FROM calls WHERE key='msg_laptop01'") == [
        ("laptop/1796000000000_other", "openrouter")
    ]
    assert ledger.origins() == ["laptop"]
    ledger.refresh(sessions)  # the CLI's refresh leaves the laptop's sessions alone, and the reverse
    assert ledger.query("SELECT COUNT(*) FROM sessions WHERE removed=1") == [(0,)]
    assert ledger.refresh(source).files_read == 0  # unchanged: not read again
    export.unlink()
    ledger.refresh(source)  # the laptop's file went: its history stays, marked removed
    assert ledger.query("SELECT id FROM sessions WHERE removed=1 ORDER BY id") == [
        ("laptop/1796000000000_other",),
        (f"laptop/{sid}",),
    ]
    assert counted(ledger)[0] == before[0] + 1
    assert ledger.query("SELECT COUNT(*) FROM sessions WHERE removed=1 AND origin IS NULL") == [(0,)]
