"""A change time moved by a change of the inode's metadata alone (chmod, chown, another hard link: what backup tools,
`cp -al`, `rsync --link-dest` and a tidy-up do) costs a stat, not a read; a change time moved with nothing else
(a rewrite in place keeping size and mtime) is still read. Real files, the real kernel, a real SQLite ledger."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.corpus import Ledger, a_minute_later, age, age_all, counted, write_in_place, write_json
from helpers.kilodb import V1, Writer, session_sql, step_sql, unpack
from helpers.ledgers import LONG, cline, counted_fresh, same_size_other_cost, sessions  # noqa: F401 (fixtures)
from helpers.listings import listings  # noqa: F401 (fixture)
from helpers.taskfolders import TaskWriter, request, say

from trayburn.ledger import SCHEMA_VERSION
from trayburn.sources.cline_cli import layout
from trayburn.sources.editor_tasks.places import BY_NAME, Place
from trayburn.sources.editor_tasks.source import TaskSource
from trayburn.sources.kilo.places import Database
from trayburn.sources.kilo.source import KiloSource


def session_files(sessions: Path) -> list[Path]:
    return sorted(p for p in sessions.rglob("*.json") if p.is_file())


def moved(path: Path, change: Callable[[Path], None]) -> None:
    """`change` applied; the file's content (a folder's names), size, mtime and inode as they were, its change time
    not."""

    def content() -> object:
        return sorted(os.listdir(path)) if path.is_dir() else path.read_bytes()

    before, held = path.stat(), content()
    change(path)
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    assert after.st_ctime_ns != before.st_ctime_ns and content() == held


def toggle_group_write(path: Path) -> None:
    os.chmod(path, stat.S_IMODE(path.stat().st_mode) ^ stat.S_IWGRP)


def rewrite_keeping_times(path: Path) -> None:
    """Another figure of the same length written in place, then the old mtime put back (`touch -r`)."""
    st = path.stat()
    write_in_place(path, same_size_other_cost(path))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def link_elsewhere(tmp_path: Path) -> Callable[[Path], None]:
    """A second name for the file in another folder (`cp -al`, a backup tool's hard links)."""
    backup = tmp_path / "backup"
    backup.mkdir(exist_ok=True)
    return lambda path: os.link(path, backup / f"{path.parent.name}-{path.name}")


def chown_to_another(path: Path) -> None:
    os.chown(path, 4242, 4343)


@pytest.mark.parametrize("process", ["running", "new"])
@pytest.mark.parametrize("what", ["chmod", "hard link", "chown"])
def test_a_metadata_change_of_every_file_costs_no_read(tmp_path, sessions, what, process):
    if what == "chown" and (not hasattr(os, "geteuid") or os.geteuid() != 0):
        pytest.skip("chown to another user needs root")
    change = {"chmod": toggle_group_write, "hard link": link_elsewhere(tmp_path), "chown": chown_to_another}[what]
    path = tmp_path / "state" / "ledger.db"
    ledger = Ledger(path, wall_ns=a_minute_later)
    ledger.refresh(sessions)
    before = counted(ledger)
    every = session_files(sessions)
    for f in every:
        moved(f, change)
    if process == "new":
        ledger.close()
        ledger = Ledger(path, wall_ns=a_minute_later)
    try:
        stats = ledger.refresh(sessions)
        assert (stats.files_read, stats.bytes_read) == (0, 0)
        assert stats.files_adopted == len(every)  # each file's new change time stored, unread
        assert counted(ledger) == before == counted_fresh(tmp_path, sessions)
        again = ledger.refresh(sessions)
        assert (again.files_read, again.files_adopted) == (0, 0)  # stored: nothing left to look at
    finally:
        ledger.close()


def test_a_rewrite_in_place_after_a_chmod_is_still_read(tmp_path, sessions):
    """The metadata stored with the new change time is the file's new one: a later rewrite keeping size, mtime and
    mode moves the change time alone, which is read as it always was."""
    ledger = Ledger(tmp_path / "state" / "ledger.db", wall_ns=a_minute_later)
    try:
        ledger.refresh(sessions)
        lead = sessions / LONG / f"{LONG}.messages.json"
        moved(lead, toggle_group_write)
        assert ledger.refresh(sessions).files_adopted == 1
        cost = counted(ledger)[5]
        rewrite_keeping_times(lead)
        stats = ledger.refresh(sessions)
        assert (stats.files_read, stats.files_adopted) == (1, 0)
        assert counted(ledger)[5] != cost
        assert counted(ledger) == counted_fresh(tmp_path, sessions)
    finally:
        ledger.close()


def test_a_chmod_that_leaves_the_mode_as_it_was_is_read(tmp_path, sessions):
    """`chmod` to the mode a file already has moves its change time and nothing else: no metadata explains it, so
    it is read (what trayburn cannot tell from a rewrite keeping size and mtime)."""
    ledger = Ledger(tmp_path / "state" / "ledger.db", wall_ns=a_minute_later)
    try:
        ledger.refresh(sessions)
        lead = sessions / LONG / f"{LONG}.messages.json"
        moved(lead, lambda p: os.chmod(p, stat.S_IMODE(p.stat().st_mode)))
        stats = ledger.refresh(sessions)
        assert (stats.files_read, stats.files_adopted) == (1, 0)
    finally:
        ledger.close()


# ---- the upgrade from schema 6 ---------------------------------------------------------------------------------


def as_schema_6(path: Path) -> None:
    """The ledger made as trayburn with schema 6 made it: no `files.meta`."""
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE files DROP COLUMN meta")
    db.execute("PRAGMA user_version=6")
    db.commit()
    db.close()


def test_the_upgrade_from_schema_6_reads_nothing_and_a_chmod_after_it_neither(tmp_path, sessions):
    path = tmp_path / "state" / "ledger.db"
    old = Ledger(path, wall_ns=a_minute_later)
    old.refresh(sessions)
    before = counted(old)
    old.close()
    as_schema_6(path)
    ledger = Ledger(path, wall_ns=a_minute_later)
    try:
        assert ledger.query("PRAGMA user_version") == [(SCHEMA_VERSION,)] and SCHEMA_VERSION >= 7
        stats = ledger.refresh(sessions)
        assert (stats.files_read, stats.files_adopted) == (0, 0) and counted(ledger) == before
        unknown = ledger.query("SELECT count(*) FROM files WHERE gone=0 AND size IS NOT NULL AND meta IS NULL")
        assert unknown == [(0,)]  # each file's metadata taken by a stat at the upgrade
        for f in session_files(sessions):
            moved(f, toggle_group_write)
        stats = ledger.refresh(sessions)
        assert (stats.files_read, stats.files_adopted) == (0, len(session_files(sessions)))
        assert counted(ledger) == before
    finally:
        ledger.close()


def test_a_file_changed_while_no_trayburn_looked_is_read_after_the_upgrade(tmp_path, sessions):
    """Its change time is not the one stored, so its metadata then is not known: read as before (once), whether a
    chmod or a rewrite in place moved it."""
    path = tmp_path / "state" / "ledger.db"
    old = Ledger(path, wall_ns=a_minute_later)
    old.refresh(sessions)
    old.close()
    as_schema_6(path)
    lead = sessions / LONG / f"{LONG}.messages.json"
    rewrite_keeping_times(lead)
    os.chmod(lead, stat.S_IMODE(lead.stat().st_mode) ^ stat.S_IWGRP)
    ledger = Ledger(path, wall_ns=a_minute_later)
    try:
        stats = ledger.refresh(sessions)
        assert (stats.files_read, stats.files_adopted) == (1, 0)
        assert counted(ledger) == counted_fresh(tmp_path, sessions)
    finally:
        ledger.close()


# ---- the saved folder listings of a new process ------------------------------------------------------------------


def new_process_scan(sessions: Path, saved: Path) -> layout.Scan:
    return layout.scan(str(sessions), layout.ScanCache(saved=str(saved), wall_ns=a_minute_later))


def chmod_every_folder(sessions: Path) -> None:
    for folder in [sessions, *(p for p in sessions.iterdir() if p.is_dir())]:
        moved(folder, toggle_group_write)


def test_a_new_process_lists_no_folder_after_a_chmod_of_them_all(tmp_path, sessions, listings):
    saved = tmp_path / "listings.json"
    new_process_scan(sessions, saved)
    chmod_every_folder(sessions)
    listings.clear()
    again = new_process_scan(sessions, saved)
    assert listings == []  # neither the sessions folder nor any session folder
    full = layout.scan(str(sessions), layout.ScanCache())
    assert [(f.path, f.manifest, f.messages) for f in again.folders] == [
        (f.path, f.manifest, f.messages) for f in full.folders
    ]
    listings.clear()
    new_process_scan(sessions, saved)  # the new stamps were saved: the next process lists nothing either
    assert listings == []


def test_listings_saved_by_an_older_trayburn_take_the_metadata_at_the_next_run(tmp_path, sessions, listings):
    """Its stamps have no metadata: the first run of this one, finding them as saved, adds it (a stat, no listing);
    a chmod of every folder after that costs no listing either."""
    saved = tmp_path / "listings.json"
    new_process_scan(sessions, saved)
    doc = json.loads(saved.read_bytes())
    doc["names"][0] = doc["names"][0][:3]
    doc["folders"] = {name: entry[:5] for name, entry in doc["folders"].items()}
    saved.write_bytes(json.dumps(doc).encode())
    listings.clear()
    new_process_scan(sessions, saved)
    assert listings == []
    doc = json.loads(saved.read_bytes())
    assert len(doc["names"][0]) == 4 and {len(e) for e in doc["folders"].values()} == {6}
    chmod_every_folder(sessions)
    new_process_scan(sessions, saved)
    assert listings == []


def test_a_folder_whose_change_time_alone_moved_is_listed(tmp_path, sessions):
    """A file added and the folder's mtime put back (`touch -r`, `rsync -a`): nothing of its metadata explains the
    new change time, so it is listed and the file found."""
    saved = tmp_path / "listings.json"
    layout.scan(str(sessions), layout.ScanCache(saved=str(saved), wall_ns=a_minute_later))
    folder = sessions / LONG
    st = folder.stat()
    added = folder / "agent_x.messages.json"
    write_json(added, {"version": 1, "messages": []})
    os.utime(folder, ns=(st.st_atime_ns, st.st_mtime_ns))
    again = layout.scan(str(sessions), layout.ScanCache(saved=str(saved), wall_ns=a_minute_later))
    assert str(added) in {f.path for d in again.folders for f in d.messages}


# ---- the other sources ----------------------------------------------------------------------------------------------

T = 1_796_190_000_000  # 2026-12-02, after the Kilo recording


@pytest.mark.parametrize("what", ["chmod", "hard link", "chown"])
def test_a_kilo_database_whose_metadata_changed_is_not_opened(tmp_path, what):
    if what == "chown" and (not hasattr(os, "geteuid") or os.geteuid() != 0):
        pytest.skip("chown to another user needs root")
    db = unpack(V1, tmp_path / "rec") / "xdg_data" / "kilo" / "kilo.db"
    src = KiloSource([Database(db, "test")])
    ledger = Ledger(tmp_path / "state" / "ledger.db", wall_ns=a_minute_later)
    try:
        ledger.refresh(src)
        before = counted(ledger)
        src.last.clear()
        change = {"chmod": toggle_group_write, "hard link": link_elsewhere(tmp_path), "chown": chown_to_another}[what]
        moved(db, change)
        stats = ledger.refresh(src)
        assert (stats.files_read, stats.files_adopted) == (0, 1) and src.last == {}  # the database not opened
        assert counted(ledger) == before
        w = Writer(db)  # then Kilo writes: read as ever
        try:
            w.run(session_sql("ses_new", T, "New"), step_sql(1, "ses_new", T + 10, (1000, 50, 10, 200, 300), 0.0125))
        finally:
            w.close()
        assert ledger.refresh(src).files_read == 1 and counted(ledger)[0] == before[0] + 1
    finally:
        ledger.close()


def test_an_editor_task_whose_metadata_file_was_chmod_ed_keeps_its_models(tmp_path):
    """A task is read whole when any of its files changed: its task_metadata.json, only chmod-ed, is still read
    with it (its model history names the requests' models), so the task's figures are a fresh ledger's."""
    t0 = 1_764_600_000_000
    w = TaskWriter(tmp_path / "gs" / "globalStorage" / "saoudrizwan.claude-dev", "cline", atomic=False)
    ui = [say(t0, "task", "go"), request(t0 + 100, 10, 5, 0, 0, 0.01)]
    meta = {"model_usage": [{"ts": t0 + 50, "model_id": "deepseek-chat", "model_provider_id": "deepseek"}]}
    folder = w.write(str(t0), ui, meta)
    age_all(folder)
    source = TaskSource(BY_NAME["cline"], [Place("cline", w.root, "test")])
    ledger = Ledger(tmp_path / "state" / "ledger.db", wall_ns=a_minute_later)
    try:
        ledger.refresh(source)
        moved(folder / "task_metadata.json", toggle_group_write)
        w.write(str(t0), [*ui, request(t0 + 5000, 20, 6, 0, 0, 0.02)])  # and a new request in its messages file
        age(folder / "ui_messages.json")
        assert ledger.refresh(source).files_adopted == 1
        models = ledger.query("SELECT model, provider, cost FROM calls ORDER BY ts_ms")
        assert models == [("deepseek-chat", "deepseek", 0.01), ("deepseek-chat", "deepseek", 0.02)]
        fresh = Ledger(tmp_path / "fresh" / "ledger.db", wall_ns=a_minute_later)
        fresh.refresh(TaskSource(BY_NAME["cline"], [Place("cline", w.root, "test")]))
        assert counted(ledger) == counted(fresh)
        fresh.close()
    finally:
        ledger.close()
