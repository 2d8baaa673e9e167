"""A new process on an up-to-date ledger (`trayburn today` in a terminal): the scan's digest, stored when the
ledger last had nothing left to do, stands for "nothing changed", so the files table is not read at all. Each
way the digest could lie is tested: a file changed since, a write to the files table by anyone, a read under
the racy-timestamp rule, calls read from a `messages_path` outside the scan."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from helpers.corpus import (
    Ledger,
    a_minute_later,
    age_all,
    as_sums,
    assert_sums,
    assistant,
    copy_corpus,
    counted,
    dumps,
    expected,
    make_session,
    messages_doc,
    ms,
    sessions_of,
    write_in_place,
    write_json,
)

T0 = "2026-11-30T08:00:00.000Z"


def files_reads(ledger: Ledger, sessions: Path) -> tuple[int, list[str]]:
    """A refresh: the files it read, and the statements it ran on the files table."""
    ran: list[str] = []
    ledger.db.set_trace_callback(ran.append)
    try:
        stats = ledger.refresh(sessions)
    finally:
        ledger.db.set_trace_callback(None)
    return stats.files_read, [s for s in ran if "FROM files" in s]


def settled_ledger(tmp_path: Path) -> tuple[Path, Path]:
    """The real recording, read once by a ledger that then had nothing left to do (closed, as a process ends)."""
    sessions = sessions_of(copy_corpus(tmp_path / "cline"))
    age_all(sessions)
    path = tmp_path / "state" / "ledger.db"
    first = Ledger(path)
    first.refresh(sessions)
    first.close()
    return path, sessions


def digests(path: Path) -> list[tuple]:
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT feed, digest FROM scans").fetchall()
    finally:
        db.close()


def test_a_new_process_on_an_up_to_date_ledger_reads_no_files_rows(tmp_path):
    path, sessions = settled_ledger(tmp_path)
    assert [feed for feed, _ in digests(path)] == ["cline_cli"]
    again = Ledger(path)
    read, on_files = files_reads(again, sessions)
    assert read == 0 and on_files == []
    assert_sums(counted(again), as_sums(expected()["totals"]))
    again.close()


def test_a_file_changed_since_is_read_by_the_next_process(tmp_path):
    path, sessions = settled_ledger(tmp_path)
    sid = "1796030000000_later"
    make_session(sessions, sid, T0, [assistant("msg_later001", ms(T0), 1000, 10, cost=0.5)])
    age_all(sessions / sid)
    again = Ledger(path)
    read, on_files = files_reads(again, sessions)
    assert read == 2 and on_files  # the digest differs: the usual refresh
    assert counted(again, "session_id=?", (sid,))[0] == 1
    again.close()
    assert digests(path)  # and a digest for the new state


def test_any_write_to_the_files_table_drops_the_digest(tmp_path):
    """Whoever writes (an older trayburn, a salvage, a future code path), the triggers drop that feed's digest."""
    path, sessions = settled_ledger(tmp_path)
    db = sqlite3.connect(path)
    changed = db.execute(
        "UPDATE files SET size = size + 1 WHERE id = (SELECT min(id) FROM files WHERE kind = 'messages')"
    )
    assert changed.rowcount == 1
    db.commit()
    db.close()
    assert digests(path) == []
    again = Ledger(path)
    read, on_files = files_reads(again, sessions)
    assert on_files and read >= 1  # the file it now takes for changed is read again
    assert_sums(counted(again), as_sums(expected()["totals"]))
    again.close()


def test_a_write_for_one_feed_keeps_the_other_feeds_digests(tmp_path):
    """One app's new task costs the other feeds nothing; a ledger with an older trayburn's triggers (every digest
    dropped at any write) gets the per-feed ones at its next open, and stays right if the older one adds its own
    back."""
    path, _ = settled_ledger(tmp_path)
    db = sqlite3.connect(path)
    db.execute("INSERT INTO scans(feed, digest) VALUES('tasks:roo', 'r')")
    db.execute(
        "INSERT INTO files(path, session_id, kind, feed) VALUES('/t/roo/ui.json', 'roo:t', 'messages', 'tasks:roo')"
    )
    db.commit()
    assert [feed for feed, _ in digests(path)] == ["cline_cli"]
    for name in ("scans_drop_insert", "scans_drop_update", "scans_drop_delete"):  # a ledger an older one made
        db.execute(f"DROP TRIGGER {name}")
    db.execute("CREATE TRIGGER files_insert AFTER INSERT ON files BEGIN DELETE FROM scans; END")
    db.commit()
    db.close()
    Ledger(path).close()  # opened for writing: the older trigger is replaced
    db = sqlite3.connect(path)
    triggers = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert triggers == {"scans_drop_insert", "scans_drop_update", "scans_drop_delete"}
    db.execute("INSERT INTO scans(feed, digest) VALUES('tasks:roo', 'r')")
    db.execute("UPDATE files SET size = 1 WHERE path = '/t/roo/ui.json'")
    db.commit()
    assert [feed for feed, _ in digests(path)] == ["cline_cli"]
    # the older trayburn adds its own back at its next open: then any write drops every digest again
    db.execute("CREATE TRIGGER files_update AFTER UPDATE ON files BEGIN DELETE FROM scans; END")
    db.execute("UPDATE files SET size = 2 WHERE path = '/t/roo/ui.json'")
    db.commit()
    db.close()
    assert digests(path) == []


def test_no_digest_while_a_read_was_racy(tmp_path):
    """A file read within the tick it was written is read again by the next process, digest or not."""
    sessions = tmp_path / "sessions"
    sid = "1796026000000_racyy"
    folder = make_session(sessions, sid, T0, [assistant("msg_racy0001", ms(T0), 100, 10)])
    path = tmp_path / "ledger.db"
    first = Ledger(path)  # the real clock: written just now
    first.refresh(sessions)
    first.close()
    assert digests(path) == []
    messages = folder / f"{sid}.messages.json"
    data = messages.read_bytes()
    write_in_place(messages, data.replace(b'"outputTokens": 10', b'"outputTokens": 99', 1))
    later = Ledger(path, wall_ns=a_minute_later)
    later.refresh(sessions)
    assert counted(later)[2] == 99
    later.close()
    assert digests(path)  # trusted now: the next process needs no look


def test_calls_from_a_messages_path_outside_the_scan_get_no_digest(tmp_path):
    sessions = tmp_path / "sessions"
    sid = "1796020000000_remot"
    elsewhere = tmp_path / "elsewhere" / f"{sid}.messages.json"
    write_json(elsewhere, messages_doc(sid, [assistant("msg_remote01", ms(T0), 100, 1)]))
    make_session(sessions, sid, T0, [], messages_path=str(elsewhere))
    (sessions / sid / f"{sid}.messages.json").write_bytes(b"{ broken")  # never parsed: the external is used
    age_all(tmp_path)
    path = tmp_path / "ledger.db"
    first = Ledger(path, wall_ns=a_minute_later)
    first.refresh(sessions)
    assert counted(first)[:2] == (1, 100)
    first.close()
    assert digests(path) == []
    write_in_place(
        elsewhere,
        dumps(
            messages_doc(sid, [assistant("msg_remote01", ms(T0), 100, 1), assistant("msg_remote02", ms(T0), 200, 2)])
        ),
    )
    again = Ledger(path, wall_ns=a_minute_later)
    again.refresh(sessions)
    assert counted(again)[:2] == (2, 300)
    again.close()
