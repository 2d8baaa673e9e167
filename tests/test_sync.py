"""Several machines, one bill: engines with their own sessions and state folders sharing one sync folder."""

from __future__ import annotations

import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from helpers.corpus import CORPUS, Ledger, age_all, as_sums, assert_sums, counted, expected, sessions_of, set_tz  # noqa: F401
from helpers.sync_machines import SESSION_IDS, boxes

from trayburn.sources import machine


def truth(tmp_path: Path, ids: list[str]) -> tuple:
    """The counted sums of these sessions read by one ledger from one folder."""
    folder = tmp_path / "truth" / "sessions"
    folder.parent.mkdir(parents=True, exist_ok=True)
    for sid in ids:
        shutil.copytree(sessions_of(CORPUS) / sid, folder / sid)
    ledger = Ledger(tmp_path / "truth" / "ledger.db")
    ledger.refresh(folder)
    try:
        return counted(ledger)
    finally:
        ledger.close()


def test_three_machines_count_the_union_once_each_in_its_own_process(tmp_path):
    a, b, c = boxes(tmp_path, "laptop", "desktop", "server")
    a.copy_sessions(SESSION_IDS[:8])
    b.copy_sessions(SESSION_IDS[6:13])  # sessions 6 and 7 copied between laptop and desktop
    c.copy_sessions(SESSION_IDS[12:])  # and 12 between desktop and server
    for box in (b, c):
        box.cli("today")  # each writes its own file at its first refresh
    engine = a.engine()
    engine.refresh()
    union = truth(tmp_path, SESSION_IDS)
    assert_sums(counted(engine.ledger), as_sums(expected()["totals"]))  # every session, each call once
    assert counted(engine.ledger) == union
    assert sorted(engine.ledger.origins()) == sorted([b.machine_id(), c.machine_id()])
    names = {m.name: m for m in engine.machines(all_time=True).machines}
    assert set(names) == {"laptop", "desktop", "server"} and names["laptop"].this
    for box in (b, c):  # the others see the same bill once they have read the laptop's file
        doc = box.cli("sessions", "--all")
        # another machine's copy counting nothing is not listed (a shared home listed every session twice)
        assert not [s for s in doc if "/" in s["id"] and not s["calls"]]
        assert {s["id"].rpartition("/")[2] for s in doc} == set(SESSION_IDS)
        assert sum(s["calls"] for s in doc) == union[0]
    led = Ledger(b.state / "ledger.db")
    try:
        assert counted(led) == union
    finally:
        led.close()
    written = sorted(str(p.relative_to(a.sync)) for p in a.sync.rglob("*") if p.is_file())
    assert written == sorted(f"trayburn/machines/{x.machine_id()}.json.gz" for x in (a, b, c))
    # `report --by machine`: one row per machine, named, adding up to the total (which is the union's)
    doc = a.cli("report", "--by", "machine", "--since", "2000-01-01", "--until", "2099-12-31")
    rows = {r.get("label", r["key"]): r for r in doc["rows"]}
    assert set(rows) == {"laptop", "desktop", "server"} and rows["laptop"]["key"] == "this"
    assert sum(r["calls"] for r in doc["rows"]) == doc["total"]["calls"] == union[0]
    assert sum(r["cost_usd"] for r in doc["rows"]) == pytest.approx(doc["total"]["cost_usd"], abs=1e-9)


def test_a_session_copied_to_two_machines_counts_once_and_splits_by_who_started_it(tmp_path):
    a, b = boxes(tmp_path, "a", "b")
    a.copy_sessions(SESSION_IDS[:3])
    b.copy_sessions(SESSION_IDS[:3])
    eb = b.engine()
    eb.refresh()
    ea = a.engine()
    ea.refresh()
    assert counted(ea.ledger) == truth(tmp_path, SESSION_IDS[:3])
    split = ea.machines(all_time=True)
    assert sum(m.calls for m in split.machines) == counted(ea.ledger)[0]


def test_a_no_change_refresh_reads_nothing_and_writes_nothing(tmp_path):
    a, b = boxes(tmp_path, "a", "b")
    a.copy_sessions(SESSION_IDS[:2])
    b.copy_sessions(SESSION_IDS[2:4])
    b.engine().refresh()
    age_all(tmp_path)  # not just written: no file is read again for being racy
    ea = a.engine()
    ea.refresh()
    mtime = a.file().stat().st_mtime_ns
    stats = ea.refresh()
    assert (stats.files_read, stats.bytes_read) == (0, 0)
    assert a.file().stat().st_mtime_ns == mtime


def test_a_truncated_file_keeps_the_previous_import_and_is_retried(tmp_path):
    a, b = boxes(tmp_path, "a", "b")
    b.copy_sessions(SESSION_IDS[:4])
    eb = b.engine()
    eb.refresh()
    ea = a.engine()
    ea.refresh()
    before = counted(ea.ledger)
    assert before[0] > 0
    whole = b.file().read_bytes()
    b.file().write_bytes(whole[: len(whole) // 2])  # a sync tool half-way through
    ea.refresh()
    assert counted(ea.ledger) == before
    assert [p.reason for p in ea.ledger.problems() if "truncated" in p.reason]
    assert not any(s["removed"] for s in (x.to_json() for x in ea.sessions(None, None)))
    b.file().write_bytes(whole)  # the rest arrives
    stats = ea.refresh()
    assert stats.files_read == 1 and counted(ea.ledger) == before and not ea.ledger.problems()


def test_a_deleted_file_keeps_its_history_marked(tmp_path):
    a, b = boxes(tmp_path, "a", "b")
    b.copy_sessions(SESSION_IDS[:4])
    b.engine().refresh()
    ea = a.engine()
    ea.refresh()
    before = counted(ea.ledger)
    b.file().unlink()
    ea.refresh()
    assert counted(ea.ledger) == before
    gone = [m for m in ea.machines(all_time=True).machines if not m.this]
    assert [(m.name, m.file_gone, m.calls) for m in gone] == [("b", True, before[0])]
    assert all(s.removed for s in ea.sessions(None, None) if "/" in s.id)
    health = ea.sync_health()
    assert [m.gone for m in health.machines if not m.this] == [True]


def test_an_unmounted_sync_dir_changes_nothing_and_creates_nothing(tmp_path):
    a, b = boxes(tmp_path, "a", "b")
    a.copy_sessions(SESSION_IDS[:2])
    b.copy_sessions(SESSION_IDS[2:4])
    b.engine().refresh()
    ea = a.engine()
    ea.refresh()
    before = counted(ea.ledger)
    moved = tmp_path / "unmounted"
    a.sync.rename(moved)
    ea.refresh()
    assert counted(ea.ledger) == before
    assert not any(s.removed for s in ea.sessions(None, None))
    assert not a.sync.exists()  # an unmounted network home is never created
    assert ea.last_share is not None and ea.last_share.problem_kind == "missing"
    assert "not a folder" in (ea.sync_health().problem or "")


def test_sharing_off_writes_nothing_and_keeps_what_was_merged(tmp_path):
    a, b = boxes(tmp_path, "a", "b")
    b.copy_sessions(SESSION_IDS[:2])
    b.engine().refresh()
    ea = a.engine()
    ea.refresh()
    before, written = counted(ea.ledger), a.file().read_bytes()
    a.configure(sync_dir=None)
    a.copy_sessions(SESSION_IDS[5:7])  # new calls on this machine
    ea.refresh()
    assert counted(ea.ledger)[0] > before[0]
    assert a.file().read_bytes() == written  # not shared any more
    assert [m.gone for m in ea.sync_health().machines] == []


def test_no_titles_or_paths_leave_the_machine_unless_asked(tmp_path):
    (a,) = boxes(tmp_path, "a")
    a.copy_sessions(SESSION_IDS[:3])
    a.engine().refresh()
    doc = machine.decode(a.file().read_bytes())
    raw = machine._gunzip(a.file().read_bytes())
    assert all(s[8] is None and s[9] is None and s[10] is None for s in doc.sessions)
    assert b"/work" not in raw and b"<user_input" not in raw and b"/home" not in raw
    assert {s[4] for s in doc.sessions} - {None}  # project basenames do leave
    a.configure(sync_titles=True)
    a.engine().refresh()  # a changed sync_titles rewrites at once
    doc = machine.decode(a.file().read_bytes())
    assert doc.header.titles and any(s[8] for s in doc.sessions)


def test_time_is_absolute_so_another_zone_falls_on_the_readers_day(tmp_path, set_tz):
    a, b = boxes(tmp_path, "a", "b")
    b.copy_sessions(SESSION_IDS)
    set_tz("Pacific/Kiritimati")  # the writer at UTC+14
    eb = b.engine()
    eb.refresh()
    theirs = sorted(r[0] for r in eb.ledger.query("SELECT ts_ms FROM calls WHERE counted=1"))
    set_tz("America/Los_Angeles")  # the reader at UTC-8
    ea = a.engine()
    ea.refresh()
    ours = sorted(r[0] for r in ea.ledger.query("SELECT ts_ms FROM calls WHERE counted=1"))
    assert ours == theirs
    local_days = {datetime.fromtimestamp(t / 1000).date() for t in ours}
    assert sum(ea.day(d).calls for d in local_days) == len(ours)
    assert sum(ea.machines(d, d).machines[-1].calls for d in local_days) == len(ours)


def test_today_and_doctor_show_the_machines(tmp_path):
    a, b = boxes(tmp_path, "laptop", "desktop")
    a.copy_sessions(SESSION_IDS[:2])
    b.copy_sessions(SESSION_IDS[2:4])
    b.cli("today")
    today = a.cli("today")
    assert [(m["name"], m["this"]) for m in today["machines"]] == [("laptop", True), ("desktop", False)]
    doctor = a.cli("doctor")["sync"]
    assert doctor["machine_name"] == "laptop" and doctor["machine_id"] == a.machine_id()
    files = {m["name"]: m for m in doctor["machines"]}
    assert files["desktop"]["version"] == 1 and files["desktop"]["age_s"] >= 0 and not files["desktop"]["problem"]
    assert files["laptop"]["this"]
    text = subprocess.run(
        [sys.executable, "-m", "trayburn", "doctor", "--config", str(a.config), "--state-dir", str(a.state)],
        capture_output=True, text=True, timeout=60, env={"HOME": str(a.root), "PATH": ""},
    ).stdout  # fmt: skip
    assert "Sharing:" in text and "desktop" in text and "format 1" in text


def test_the_menu_line_names_the_machines_and_this_ones_share():
    from trayburn.figures.history import MachineCost, MachinesReport

    m = MachinesReport(
        [
            MachineCost(None, "here", True, 1.10, 0, 5, 0),
            MachineCost("b" * 16, "desk", False, 2.60, 0, 9, 0),
            MachineCost("c" * 16, "box", False, 0.50, 0, 1, 0),
        ]
    )
    assert m.menu_line() == "Today $4.20 on 3 machines (this one $1.10)"
    assert MachinesReport([MachineCost(None, "here", True, 1.0, 0, 1, 0)]).menu_line() is None
    idle_here = MachinesReport([MachineCost(None, "here", True, 0.0, 0, 0, 0), m.machines[1]])
    assert idle_here.menu_line() == "Today $2.60 on desk, none on this one"
    idle_here.machines.append(m.machines[2])
    assert idle_here.menu_line() == "Today $3.10 on 2 other machines, none on this one"


def test_a_changed_file_brings_what_changed_and_keeps_the_rest(tmp_path):
    import time

    from trayburn.sync.share import Sharing

    a, b = boxes(tmp_path, "a", "b")
    b.copy_sessions(SESSION_IDS[:5])
    eb = b.engine()
    eb.refresh()
    ea = a.engine()
    ea.refresh()
    assert counted(ea.ledger) == truth(tmp_path / "first", SESSION_IDS[:5])
    b.copy_sessions(SESSION_IDS[5:9])
    eb.sharing = Sharing(b.state, eb.ledger, clock=lambda: time.time() + 61)  # a minute on
    eb.refresh()
    stats = ea.refresh()
    assert stats.files_read == 1
    assert counted(ea.ledger) == truth(tmp_path / "second", SESSION_IDS[:9])
    assert not any(s.removed for s in ea.sessions(None, None))


def test_the_id_is_made_once_and_every_file_is_private(tmp_path):
    (a,) = boxes(tmp_path, "a")
    a.copy_sessions(SESSION_IDS[:2])
    a.engine().refresh()
    first = a.machine_id()
    a.configure(machine_name="renamed")
    a.engine().refresh()  # a new name is shared at once, under the same id
    assert a.machine_id() == first
    assert machine.decode(a.file().read_bytes()).header.name == "renamed"
    for path, mode in ((a.file(), 0o600), (a.file().parent, 0o700), (a.state / "machine.json", 0o600)):
        assert path.stat().st_mode & 0o777 == mode, path
    assert (a.state / "sync.json").stat().st_mode & 0o777 == 0o600
