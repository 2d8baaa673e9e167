"""A full disk (a real small tmpfs, where the machine lets a test mount one) changes no figure and loses no
history: the ledger keeps what it held, the commands and the tray say the disk is full, and a ledger that cannot
be written is still read."""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest
from helpers.corpus import (
    Ledger,
    assert_sums,
    assistant,
    copy_corpus,
    counted,
    isolated_env,
    make_session,
    ms,
    sessions_of,
    set_tz,  # noqa: F401
)
from helpers.ledgers import (
    GONE,
    GONE_SUMS,
    T0,
    cline,  # noqa: F401  (a fixture)
    removed_session,
    sessions,  # noqa: F401  (a fixture)
    total,
    with_gone,
)

from trayburn import cli
from trayburn.engine import Engine
from trayburn.errors import Exit
from trayburn.ledger import schema

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
