"""The ledger at its edges, on real files, a real SQLite and (where the machine allows) a real small
tmpfs: a damaged ledger gives back what it still holds, a full disk or a deleted ledger loses no
history, names that are not UTF-8 are stored byte-exact, and the ledger's own files are private."""

from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from corpus import (
    CORPUS,
    Ledger,
    a_minute_later,
    age,
    as_sums,
    assert_sums,
    assistant,
    copy_corpus,
    counted,
    expected,
    isolated_env,
    make_session,
    ms,
    sessions_of,
    set_tz,  # noqa: F401
)

from trayburn import cli, files
from trayburn.engine import Engine
from trayburn.errors import Exit
from trayburn.ledger import LedgerError, backups, schema

REAL = sessions_of(CORPUS)
T0 = "2026-11-30T08:00:00.000Z"
GONE = "1796020000000_gone"  # a session whose folder is removed from disk after it was counted
GONE_SUMS = (2, 3000, 30, 0, 0, 0.75)


def total() -> tuple:
    return as_sums(expected()["totals"])


def with_gone(wanted: tuple) -> tuple:
    return tuple(a + b for a, b in zip(wanted, GONE_SUMS, strict=True))


def removed_session(ledger: Ledger, sessions: Path, refresh: Callable[[], object] | None = None) -> None:
    """A session counted by the ledger, then removed from disk (its calls must keep counting). `refresh`: how the
    ledger is refreshed (an Engine's `refresh` for the engine's ledger), else `ledger.refresh(sessions)`."""
    refresh = refresh or (lambda: ledger.refresh(sessions))
    folder = make_session(
        sessions,
        GONE,
        T0,
        [assistant("g1", ms(T0), 1000, 10, cost=0.25), assistant("g2", ms(T0) + 1, 2000, 20, cost=0.5)],
    )
    refresh()
    shutil.rmtree(folder)
    refresh()
    assert counted(ledger, "session_id=?", (GONE,)) == GONE_SUMS


@pytest.fixture
def sessions(tmp_path):
    return sessions_of(copy_corpus(tmp_path / "cline"))


# ---- a damaged ledger -------------------------------------------------------------------------------------


def damaged_ledger(path: Path, sessions: Path, keep_stat: bool = False) -> None:
    """A ledger of `sessions` and of a session since removed from disk (its calls are the calls table's last
    leaf page), then garbage over the cells of the table's first leaf page. `keep_stat`: the file's mtime
    put back as it was (damage no stat shows: a disk's, a program's that restores times)."""
    first = Ledger(path)
    first.refresh(sessions)
    removed_session(first, sessions)
    first.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the calls into the file, where their pages are found
    leaves = [
        r[0] for r in first.query("SELECT pageno FROM dbstat WHERE name='calls' AND pagetype='leaf' ORDER BY pageno")
    ]
    page_size = first.query("PRAGMA page_size")[0][0]
    first.close()
    for made in backups.backups(path):  # (the close made the day's backup: these tests are of the pages alone)
        made.unlink()
    assert len(leaves) >= 2, "the test needs the calls of the removed session apart from the damaged page"
    before = os.stat(path)
    with open(path, "r+b") as fh:
        fh.seek((leaves[0] - 1) * page_size + 8)
        fh.write(b"\xa5" * (page_size - 8))
    if keep_stat:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def recovered(notice: str | None) -> tuple[int, int]:
    assert notice and "recovered" in notice, notice
    got, of = (int(w) for w in notice.split("recovered ")[1].split(" calls")[0].split(" of "))
    return got, of


def test_a_corrupt_page_loses_only_that_page_and_removed_sessions_survive(tmp_path, sessions):
    path = tmp_path / "state" / "ledger.db"
    damaged_ledger(path, sessions)

    rebuilt = Ledger(path)
    assert rebuilt.notice is None  # an open never checks: the full check is doctor's and the tray's daily one
    assert rebuilt.check_integrity() is not None
    got, of = recovered(rebuilt.notice)
    assert 0 < got < of  # some rows lost with the damaged page, the rest copied
    assert [p.name for p in path.parent.iterdir() if ".broken-" in p.name]  # kept, never deleted
    assert counted(rebuilt, "session_id=?", (GONE,)) == GONE_SUMS  # history of a session gone from disk
    rebuilt.refresh(sessions)  # what the damaged page held comes back from Cline's files
    assert_sums(counted(rebuilt), with_gone(total()))
    rebuilt.close()
    again = Ledger(path)
    assert again.notice is None
    assert_sums(counted(again), with_gone(total()))
    again.close()


def test_damage_no_stat_shows_is_found_by_the_first_query_and_rebuilt_at_the_next_refresh(tmp_path, sessions):
    """An open never runs the integrity check: damage that changes no size, mtime or inode surfaces when a
    query reads the page, as a clear error, and the next refresh checks and rebuilds."""
    path = tmp_path / "state" / "ledger.db"
    damaged_ledger(path, sessions, keep_stat=True)
    ledger = Ledger(path)
    assert ledger.notice is None  # not checked at open
    with pytest.raises(LedgerError, match="is damaged .*rebuilds it"):
        counted(ledger)
    ledger.refresh(sessions)
    got, of = recovered(ledger.notice)
    assert 0 < got < of
    assert [p.name for p in path.parent.iterdir() if ".broken-" in p.name]
    assert counted(ledger, "session_id=?", (GONE,)) == GONE_SUMS
    assert_sums(counted(ledger), with_gone(total()))
    ledger.close()
    again = Ledger(path)
    assert again.notice is None and again.check_integrity() is None  # the rebuilt ledger is sound
    again.close()


def test_a_ledger_that_is_not_a_database_is_rebuilt_and_said_so(tmp_path, sessions):
    path = tmp_path / "state" / "ledger.db"
    path.parent.mkdir()
    path.write_bytes(b"not a database" * 400)
    led = Ledger(path)
    assert led.notice and "rebuilt" in led.notice and "recovered" not in led.notice
    led.refresh(sessions)
    assert_sums(counted(led), total())
    led.close()


# ---- a full disk (a real small tmpfs) ---------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path):
    """A 3 MB tmpfs of our own (root: mount; else a user and mount namespace is not usable from here)."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root here (the CI runs the suite as root)")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m,mode=0700", "tmpfs", str(mnt)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs on this machine: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def fill(folder: Path) -> Path:
    """Write a file until the disk says it is full."""
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as fh:  # unbuffered: nothing left to flush (and fail) at close
        for chunk in (65536, 4096, 1):  # down to the last byte
            try:
                while True:
                    fh.write(b"\0" * chunk)
            except OSError as exc:
                assert exc.errno == 28  # ENOSPC
    return filler


def today(capsys, state: Path) -> tuple[int, dict | None, str]:
    code = cli.main(["today", "--date", "2026-11-30", "--state-dir", str(state), "--json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out else None), err


def test_a_full_disk_changes_nothing_and_loses_nothing(small_disk, tmp_path, monkeypatch, capsys, set_tz):
    set_tz("UTC")
    sessions = sessions_of(copy_corpus(tmp_path / "cline"))
    for k, v in isolated_env(tmp_path, CLINE_SESSION_DATA_DIR=str(sessions)).items():
        monkeypatch.setenv(k, v)
    state = small_disk / "state"
    led = Ledger(state / "ledger.db")
    led.refresh(sessions)
    removed_session(led, sessions)
    led.close()  # a clean exit: the WAL is checkpointed into the file
    ledger_bytes = (state / "ledger.db").read_bytes()
    make_session(sessions, "1796020000001_new", T0, [assistant("n1", ms(T0), 500, 5, cost=0.1)])  # to be written

    filler = fill(small_disk)
    code, figures, err = today(capsys, state)
    assert code in (Exit.IO_ERROR, Exit.CANT_WRITE), err
    assert "disk is full" in err or "disk full" in err, err
    assert "cannot rollback" not in err
    assert (state / "ledger.db").read_bytes() == ledger_bytes  # not one byte changed
    assert not [p for p in state.iterdir() if ".broken-" in p.name]  # never moved aside
    assert figures is not None  # served read-only, stale: what the ledger held
    assert figures["calls"] == total()[0] + GONE_SUMS[0]

    code = cli.main(["doctor", "--state-dir", str(state), "--json"])
    health = json.loads(capsys.readouterr().out)
    assert (code, health["kind"], health["ok"]) == (Exit.PROBLEMS, "ledger_disk_full", False)
    assert "disk is full" in health["ledger"]["fault"] and "OK" not in health["verdict"]

    filler.unlink()  # space again: the next run catches up, the removed session's calls still count
    code, figures, err = today(capsys, state)
    assert code == 0, err
    assert figures is not None and figures["calls"] == total()[0] + GONE_SUMS[0] + 1
    led = Ledger(state / "ledger.db")
    assert counted(led, "session_id=?", (GONE,)) == GONE_SUMS
    led.close()


def test_only_an_io_error_on_a_nearly_full_disk_is_called_a_full_disk(small_disk):
    """SQLite says only "disk I/O error" when a full disk stops it: the free space decides. Not for an OS error
    that names its cause, nor on a file system with no size at all (/proc, some FUSE mounts: 0 blocks, 0 free),
    where "free some space" was the advice given for a folder that cannot hold files."""
    filler = fill(small_disk)
    ledger = small_disk / "ledger.db"
    io = sqlite3.OperationalError("disk I/O error")
    assert isinstance(schema.unavailable(ledger, io), schema.LedgerFull)  # the case the rule is for
    gone = FileNotFoundError(errno.ENOENT, "No such file or directory")
    assert type(schema.unavailable(ledger, gone)) is schema.LedgerUnavailable
    filler.unlink()
    if os.path.isdir("/proc") and os.statvfs("/proc").f_blocks == 0:
        assert type(schema.unavailable(Path("/proc/ledger.db"), io)) is schema.LedgerUnavailable


def test_an_export_from_a_ledger_on_a_full_disk_says_it_is_stale(small_disk, tmp_path, monkeypatch, capsys):
    sessions = sessions_of(copy_corpus(tmp_path / "cline"))
    for k, v in isolated_env(tmp_path, CLINE_SESSION_DATA_DIR=str(sessions)).items():
        monkeypatch.setenv(k, v)
    state = small_disk / "state"
    assert cli.main(["today", "--date", "2026-11-30", "--state-dir", str(state)]) == 0
    make_session(sessions, "1796020000001_new", T0, [assistant("n1", ms(T0), 500, 5, cost=0.1)])  # not stored
    fill(small_disk)
    capsys.readouterr()
    span = ["--since", "2026-11-30", "--until", "2026-11-30", "--state-dir", str(state)]
    assert cli.main(["report", *span]) == Exit.IO_ERROR  # as every command that shows the ledger's figures
    assert "disk is full" in capsys.readouterr().err
    code = cli.main(["export", *span, "-o", str(tmp_path / "calls.csv")])
    err = capsys.readouterr().err
    assert code == Exit.IO_ERROR and "disk is full" in err, err
    code = cli.main(["prices", "--state-dir", str(state)])  # every model seen: from the same stale ledger
    err = capsys.readouterr().err
    assert code == Exit.IO_ERROR and "disk is full" in err, err


def test_a_disk_filling_under_a_running_tray_is_a_fault_that_passes(small_disk, tmp_path, sessions):
    state = small_disk / "state"
    env = {"CLINE_SESSION_DATA_DIR": str(sessions)}
    tray = Engine(tmp_path / "settings.toml", state, env=env)
    removed_session(tray.ledger, sessions, tray.refresh)
    tray.refresh()
    pad = "x" * 200_000  # a big prompt: the write that no longer fits
    make_session(sessions, "1796020000001_new", T0, [assistant("n1", ms(T0), 500, 5, cost=0.1)], prompt=pad)
    filler = fill(small_disk)
    tray.refresh()  # does not raise: the fault is kept, the figures served as they were
    assert tray.fault is not None and tray.fault.kind == "ledger_disk_full", tray.fault
    assert "cannot rollback" not in str(tray.fault)
    assert tray.health().kind == "ledger_disk_full" and not tray.health().ok
    assert_sums(counted(tray.ledger), with_gone(total()))
    filler.unlink()
    tray.refresh()
    assert tray.fault is None and tray.health().kind == "ok"
    assert counted(tray.ledger)[0] == with_gone(total())[0] + 1
    assert not [p for p in state.iterdir() if ".broken-" in p.name]
    tray.close()


def test_the_tray_says_the_disk_is_full_and_marks_its_figures_failing(small_disk, tmp_path, sessions):
    """The menu, not only doctor: a full disk is named at the top, and "Updated" says refreshes fail."""
    from trayburn.tray import host
    from trayburn.tray.app import TrayApp

    state = small_disk / "state"
    engine = Engine(tmp_path / "settings.toml", state, env={"CLINE_SESSION_DATA_DIR": str(sessions)})
    app = TrayApp(engine, host.load_pystray("dummy"), host.capabilities("dummy"), spawn=lambda *a, **k: None)
    app.tick()
    assert app.view.problem is None and not app.view.updated.endswith("refresh failing")
    pad = "x" * 200_000
    make_session(sessions, "1796020000001_new", T0, [assistant("n1", ms(T0), 500, 5, cost=0.1)], prompt=pad)
    filler = fill(small_disk)
    app.tick()
    assert app.view.problem.startswith("The disk is full"), app.view.problem
    assert app.view.updated.endswith("refresh failing")
    filler.unlink()
    app.tick()
    assert app.view.problem is None and not app.view.updated.endswith("refresh failing")
    engine.close()


def test_a_ledger_that_cannot_be_written_is_read_and_doctor_says_so(small_disk, tmp_path, sessions):
    state = small_disk / "state"
    engine = Engine(tmp_path / "settings.toml", state, env={"CLINE_SESSION_DATA_DIR": str(sessions)})
    engine.refresh()
    engine.close()
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    try:
        engine = Engine(tmp_path / "settings.toml", state, env={"CLINE_SESSION_DATA_DIR": str(sessions)})
        engine.refresh()
        assert engine.fault is not None and engine.ledger.read_only
        assert_sums(counted(engine.ledger), total())  # still served
        health = engine.health()
        assert health.kind == "ledger_read_only" and not health.ok
        assert health.ledger_fault and str(state / "ledger.db") in health.ledger_fault
        assert not [p for p in state.iterdir() if ".broken-" in p.name]
        subprocess.run(["mount", "-o", "remount,rw", str(small_disk)], check=True)
        engine.refresh()  # writable again: noticed at the next refresh
        assert engine.fault is None and engine.health().kind == "ok"
        engine.close()
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(small_disk)], check=False)


# ---- a ledger deleted or replaced under a running tray --------------------------------------------------


def test_a_ledger_deleted_under_a_running_tray_keeps_its_history(tmp_path, sessions):
    state = tmp_path / "state"
    env = {"CLINE_SESSION_DATA_DIR": str(sessions)}
    tray = Engine(tmp_path / "settings.toml", state, env=env)
    tray.refresh()
    removed_session(tray.ledger, sessions, tray.refresh)
    for name in ("ledger.db", "ledger.db-wal", "ledger.db-shm"):
        (state / name).unlink(missing_ok=True)

    window = Engine(tmp_path / "settings.toml", state, env=env)  # opens a new, empty ledger at the same path
    window.refresh()
    assert_sums(counted(window.ledger), total())  # only what is on disk: the removed session is not there

    tray.refresh()  # the tray notices, and copies its history into the file now at its place
    assert tray.ledger.notice and "replaced" in tray.ledger.notice
    assert_sums(counted(tray.ledger), with_gone(total()))
    assert_sums(counted(window.ledger), with_gone(total()))  # the window reads the same figures now
    tray.close()
    window.close()
    restarted = Engine(tmp_path / "settings.toml", state, env=env)
    assert_sums(counted(restarted.ledger), with_gone(total()))
    restarted.close()


@pytest.mark.parametrize("names", [("ledger.db", "ledger.db-wal", "ledger.db-shm"), ("ledger.db",)])
def test_a_ledger_deleted_with_nothing_in_its_place_is_recreated_from_the_open_one(tmp_path, sessions, names):
    path = tmp_path / "state" / "ledger.db"
    led = Ledger(path)
    led.refresh(sessions)
    removed_session(led, sessions)
    for name in names:  # or only ledger.db, its WAL and SHM left beside it
        (path.parent / name).unlink(missing_ok=True)
    led.refresh(sessions)
    assert led.notice and "deleted" in led.notice
    assert path.exists()
    led.close()
    again = Ledger(path)
    assert_sums(counted(again), with_gone(total()))
    again.close()


# ---- names that are not UTF-8 ----------------------------------------------------------------------------


def test_names_that_are_not_utf8_are_stored_byte_exact_beside_a_control(tmp_path, capsys, monkeypatch, set_tz):
    set_tz("UTC")
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    make_session(sessions, "1796020000002_ctrl", T0, [assistant("c1", ms(T0), 100, 1, cost=0.01)])
    odd = os.fsdecode(b"1796020000003_odd\xff")
    folder = make_session(
        sessions, odd, T0, [assistant("o1", ms(T0), 200, 2, cost=0.02)],
        agents={os.fsdecode(b"agent_\xfe.messages.json"): ("subagent", [assistant("o2", ms(T0), 300, 3, cost=0.03)])},
    )  # fmt: skip
    path = tmp_path / "state" / "ledger.db"
    led = Ledger(path, wall_ns=a_minute_later)  # files written just now are not racy
    stats = led.refresh(sessions)
    assert stats.errors == {}
    assert counted(led)[:3] == (3, 600, 6)
    stored = led.query("SELECT path FROM files WHERE typeof(path)='blob'")
    assert sorted(os.fsencode(p[0]) if isinstance(p[0], str) else p[0] for p in stored) == sorted(
        os.fsencode(str(folder / n))
        for n in (f"{odd}.json", f"{odd}.messages.json", os.fsdecode(b"agent_\xfe.messages.json"))
    )
    sid = led.query("SELECT id FROM sessions WHERE id LIKE '%odd%'")[0][0]
    assert sid == "1796020000003_odd\\udcff"  # the parser's escape: printable, and typed back as is
    assert led.refresh(sessions).files_read == 0  # the paths read back equal the paths scanned
    led.close()

    monkeypatch.setenv("TRAYBURN_CONFIG", str(tmp_path / "settings.toml"))
    monkeypatch.setenv("CLINE_SESSION_DATA_DIR", str(sessions))
    state = ["--state-dir", str(path.parent)]
    assert cli.main(["session", sid, *state]) == 0
    assert cli.main(["session", odd, *state]) == 0, capsys.readouterr().err  # the folder's name, as typed
    capsys.readouterr()
    assert cli.main(["session", "--json", odd, *state]) == 0
    assert json.loads(capsys.readouterr().out)["id"] == sid
    assert cli.main(["doctor", *state]) == 0
    assert cli.main(["sessions", "--all", "--json", *state]) == 0
    out = capsys.readouterr().out
    assert "odd\\udcff" in out and "\udcff" not in out

    shutil.rmtree(folder)  # removed from disk: its calls keep counting
    led = Ledger(path)
    led.refresh(sessions)
    assert counted(led)[:3] == (3, 600, 6)
    assert led.session_counts() == (1, 1)
    led.close()


# ---- the ledger's own files -------------------------------------------------------------------------------


def test_the_ledger_and_its_wal_are_private_under_umask_000(tmp_path, sessions):
    old = os.umask(0)
    try:
        led = Ledger(tmp_path / "state" / "ledger.db")
        led.refresh(sessions)
        modes = {p.name: p.stat().st_mode & 0o777 for p in (tmp_path / "state").iterdir()}
        led.close()
    finally:
        os.umask(old)
    assert (tmp_path / "state").stat().st_mode & 0o777 == 0o700
    assert modes.keys() >= {"ledger.db", "ledger.db-wal", "ledger.db-shm"}
    assert {modes[n] for n in ("ledger.db", "ledger.db-wal", "ledger.db-shm")} == {0o600}


@pytest.mark.parametrize("name", ["ledger.db", "ledger.db-wal"])
def test_a_planted_link_is_refused_and_its_target_untouched(tmp_path, name):
    state = tmp_path / "state"
    state.mkdir()
    target = tmp_path / "victim"
    target.write_bytes(b"precious")
    (state / name).symlink_to(target)
    with pytest.raises(LedgerError, match="symbolic link"):
        Ledger(state / "ledger.db")
    assert target.read_bytes() == b"precious"
    assert isinstance(files.Refused("link", target, "x"), OSError)


def test_a_failed_check_moves_aside_but_a_newer_schema_never(tmp_path):
    path = tmp_path / "state" / "ledger.db"
    Ledger(path).close()
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version=99")
    db.commit()
    db.close()
    with pytest.raises(LedgerError, match="newer"):
        Ledger(path)
    assert not [p for p in path.parent.iterdir() if ".broken-" in p.name]
    age(path)


# ---- messages without an id, in renamed copies (schema 4) -------------------------------------------------


def idless(n: int, base: int) -> list[dict]:
    msgs = [assistant(None, ms(T0) + base + i, 100 * (i + 1), i + 1, cost=0.01 * (i + 1)) for i in range(n)]
    for m in msgs:
        del m["id"]
    return msgs


def idless_sessions(sessions: Path) -> None:
    """A control, a session of id-less messages and a renamed copy of it (started later)."""
    make_session(sessions, "1796020000009_ctrl", T0, [assistant("c1", ms(T0), 7, 1, cost=0.07)])
    make_session(sessions, "1796020000010_orig", T0, idless(2, 0))
    make_session(sessions, "1796020000011_copy", "2026-11-30T09:00:00.000Z", idless(2, 0))


ONCE = (3, 7 + 100 + 200, 1 + 1 + 2)  # the control and the original's two calls, the copy's not again


def test_idless_calls_in_two_renamed_copies_count_once(tmp_path):
    sessions = tmp_path / "sessions"
    idless_sessions(sessions)
    led = Ledger(tmp_path / "state" / "ledger.db")
    led.refresh(sessions)
    assert counted(led)[:3] == ONCE
    assert {r[0] for r in led.query("SELECT session_id FROM calls WHERE counted=1")} == {
        "1796020000009_ctrl",
        "1796020000010_orig",
    }
    led.close()


def test_schema_3_ledger_rekeys_idless_calls_and_keeps_those_of_removed_files(tmp_path):
    sessions = tmp_path / "sessions"
    idless_sessions(sessions)
    removed = make_session(sessions, "1796020000012_gone", T0, idless(3, 5000))
    path = tmp_path / "state" / "ledger.db"
    led = Ledger(path, wall_ns=a_minute_later)
    led.refresh(sessions)
    shutil.rmtree(removed)
    led.refresh(sessions)
    led.close()
    db = sqlite3.connect(path)  # as schema 3 wrote it: "<session>:<index>" keys, each copy counted
    db.execute("UPDATE calls SET key = session_id || ':' || seq, counted = 1 WHERE key GLOB 'noid:*'")
    db.execute("PRAGMA user_version=3")
    db.commit()
    assert db.execute("SELECT COUNT(*) FROM calls WHERE counted=1").fetchone()[0] == 3 + 2 + 3
    db.close()

    led = Ledger(path, wall_ns=a_minute_later)
    assert led.notice is None  # migrated
    assert counted(led, "session_id=?", ("1796020000012_gone",))[:3] == (3, 100 + 200 + 300, 6)
    stats = led.refresh(sessions)
    assert stats.files_read == 2  # the two copies' message files, read again (the control is as it was)
    assert counted(led)[:3] == (ONCE[0] + 3, ONCE[1] + 600, ONCE[2] + 6)  # the copy once; the removed kept
    assert led.query("SELECT COUNT(*) FROM calls WHERE key GLOB 'v3:*'") == [(3,)]  # only the removed file's
    assert led.refresh(sessions).files_read == 0
    led.close()
