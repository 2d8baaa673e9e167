"""Backups that cannot be poisoned or rotated away, damage repaired by the command that meets it, and losses
said: the attack scenarios of a ledger whose calls table is zeroed (mtime kept), beside planted backups.

The scene: a control session whose figure must stay exact, three sessions deleted from disk after the day's
backup (only the ledger and that backup hold their $15), and one session deleted before any backup saw it (only
the ledger held its 2 calls: the known loss when the calls' pages are zeroed)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from pathlib import Path

import pytest
from helpers.corpus import assistant, isolated_env, make_session, ms, sessions_of, set_tz, user  # noqa: F401

from trayburn import cli
from trayburn.engine import Engine
from trayburn.ledger import Ledger, LedgerDamaged, backups
from trayburn.ledger.pages import read_pages

DAY = "2026-11-30"
CONTROL = ("control", 40, 0.03125)  # 40 calls, $1.25
GONE = [(f"gone{k}", 2, 2.5, f"2026-11-2{k + 1}") for k in range(3)]  # $5 each, only in the ledger and its backup
FRESH = ("fresh", 2, 2.5, "2026-11-27")  # $5, only in the ledger: lost when its pages are
LATER = ("later", 60, 0.001)  # $0.06, on disk


def _session(sessions: Path, sid: str, n: int, cost: float, day: str) -> None:
    t = ms(f"{day}T12:00:00.000Z")
    msgs = []
    for i in range(n):
        msgs += [user(f"{sid}-u{i}", t + 2 * i), assistant(f"{sid}-a{i}", t + 2 * i + 1, cost=cost)]
    make_session(sessions, sid, f"{day}T12:00:00.000Z", msgs)


def _sums(ledger: Path, where: str = "1") -> tuple[int, float]:
    db = sqlite3.connect(ledger)
    try:
        n, cost = db.execute(f"SELECT count(*), total(cost) FROM calls WHERE counted=1 AND {where}").fetchone()
        return n, round(cost, 9)
    finally:
        db.close()


@pytest.fixture
def scene(tmp_path, monkeypatch, set_tz):
    """The ledger as described above, its one backup (made by the first command's close), and the truth."""
    set_tz("UTC")
    cline = tmp_path / "cline"
    sessions = sessions_of(cline)
    sessions.mkdir(parents=True)
    env = isolated_env(tmp_path, CLINE_DIR=str(cline))
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    _session(sessions, *CONTROL, DAY)
    for spec in GONE:
        _session(sessions, *spec)
    engine = Engine()
    engine.refresh()
    engine.close()  # the day's backup: control and the three sessions
    (made,) = backups.backups(Path(env["TRAYBURN_STATE_DIR"]) / "ledger.db")
    for sid, *_ in GONE:
        shutil.rmtree(sessions / sid)
    _session(sessions, *LATER, DAY)
    _session(sessions, *FRESH)
    engine = Engine()
    engine.refresh()
    engine.close()
    shutil.rmtree(sessions / FRESH[0])
    engine = Engine()
    engine.refresh()
    engine.close()
    ledger = Path(env["TRAYBURN_STATE_DIR"]) / "ledger.db"
    truth = _sums(ledger)
    assert truth == (40 + 6 + 2 + 60, round(1.25 + 15 + 5 + 0.06, 9))
    return ledger, made, truth


def _zero_calls(ledger: Path, leaves_too: bool) -> None:
    """The calls table's root page (and every page of it, `leaves_too`) zeroed; size and mtime kept."""
    db = sqlite3.connect(ledger)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    kinds = "" if leaves_too else " AND pageno = (SELECT rootpage FROM sqlite_master WHERE name='calls')"
    pages = [r[0] for r in db.execute(f"SELECT pageno FROM dbstat WHERE name='calls'{kinds}")]
    size = db.execute("PRAGMA page_size").fetchone()[0]
    db.close()
    before = os.stat(ledger)
    with open(ledger, "r+b") as fh:
        for page in pages:
            fh.seek((page - 1) * size)
            fh.write(b"\0" * size)
    os.utime(ledger, ns=(before.st_atime_ns, before.st_mtime_ns))


def _today(capsys) -> tuple[int, dict, list[dict]]:
    code = cli.main(["today", "--date", DAY, "--json"])
    out, err = capsys.readouterr()
    return code, json.loads(out), [json.loads(line) for line in err.splitlines()]


def _plant(state: Path, kind: str, made: Path) -> Path:
    """A file named like the newest backup (by its name and by its mtime)."""
    path = state / "ledger.db.backup-29991231-235959"
    if kind == "empty":
        path.write_bytes(b"")
    elif kind == "foreign":
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)")
        db.execute("INSERT INTO notes(body) VALUES('not a ledger')")
        db.commit()
        db.close()
    elif kind == "other_columns":
        db = sqlite3.connect(path)
        for table in ("sessions", "files", "calls"):
            db.execute(f"CREATE TABLE {table}(a, b)")
        db.execute("PRAGMA user_version=5")
        db.commit()
        db.close()
    elif kind == "schema_99":
        shutil.copy(made, path)
        db = sqlite3.connect(path)
        db.execute("PRAGMA user_version=99")
        db.commit()
        db.close()
    os.utime(path, (time.time(), time.time()))
    return path


@pytest.mark.parametrize("planted", ["empty", "foreign", "other_columns", "schema_99"])
def test_a_planted_backup_costs_only_itself_and_the_loss_is_counted_and_dated(scene, capsys, planted):
    """Every page of the calls table zeroed (mtime kept), a bad file named and dated as the newest backup: the
    command that meets the damage rebuilds and answers (exit 0, the control's figure exact); the page rows and
    the good backup's rows both come back (the deleted sessions' $15); the one session only the ledger held is
    the loss, said as "recovered N of M" with its day, and each call is held once."""
    ledger, made, truth = scene
    bad = _plant(ledger.parent, planted, made)
    (Path(str(made) + "-journal")).write_bytes(b"\xde\xad" * 300)  # a stray journal beside the good one
    _zero_calls(ledger, leaves_too=True)

    code, out, said = _today(capsys)
    assert code == 0, said
    assert (out["calls"], round(out["cost_usd"], 9)) == (40 + 60, 1.31)  # the control day, exact
    assert _sums(ledger) == (truth[0] - 2, round(truth[1] - 5, 9))  # all but the session no backup held
    for sid, *_ in GONE:
        assert _sums(ledger, f"session_id='{sid}'") == (2, 5.0)
    db = sqlite3.connect(ledger)
    rows, distinct = db.execute("SELECT count(*), count(DISTINCT key) FROM calls").fetchone()
    db.close()
    assert rows == distinct == truth[0] - 2  # each call once
    notices = [s["notice"] for s in said if "notice" in s]
    assert any(made.name in n and bad.name in n for n in notices), notices  # the backup used, the one refused
    lost = next(s for s in said if "lost_calls" in s)
    assert lost["lost_calls"] == 2 and lost["lost_by_day"] == {FRESH[3]: 2}
    assert f"recovered {truth[0] - 2} of the {truth[0]} calls" in lost["notice"]
    assert bad.exists() and made.exists()  # nothing deleted


def test_doctor_says_the_rebuild_until_it_was_shown_once(scene, capsys):
    ledger, made, truth = scene
    _zero_calls(ledger, leaves_too=True)
    assert _today(capsys)[0] == 0
    code = cli.main(["doctor", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and doc["kind"] == "ledger_rebuilt" and doc["rebuilt"]["lost"] == 2
    assert doc["backups"]["count"] >= 1 and doc["backups"]["newest"]["path"].startswith(str(ledger))
    code = cli.main(["doctor", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["kind"] == "ok" and doc["rebuilt"]["lost"] == 2  # history now, still there


@pytest.mark.skipif(not hasattr(os, "chown") or os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_backup_of_another_user_is_never_merged(scene, capsys):
    ledger, made, truth = scene
    forged = ledger.parent / "ledger.db.backup-29991231-235959"
    shutil.copy(made, forged)
    db = sqlite3.connect(forged)
    db.execute("UPDATE calls SET cost = 999 WHERE session_id='gone0'")
    db.commit()
    db.close()
    os.chown(forged, 4242, 4242)
    os.utime(forged, (time.time(), time.time()))
    _zero_calls(ledger, leaves_too=True)
    assert _today(capsys)[0] == 0
    assert _sums(ledger, "session_id='gone0'") == (2, 5.0)  # the good backup's, not the forged one


@pytest.mark.parametrize("command", ["today", "report", "sessions", "export"])
def test_a_zeroed_root_page_is_repaired_by_the_command_that_meets_it(scene, capsys, command):
    """The calls table's root page zeroed, mtime kept (no stat shows it): each command answers in the same run,
    exit 0, every call back (the root's leaves are read page by page), nothing counted twice."""
    ledger, made, truth = scene
    _zero_calls(ledger, leaves_too=False)
    argv = {
        "today": ["today", "--date", DAY],
        "report": ["report", "--since", "2026-11-01", "--until", DAY],
        "sessions": ["sessions", "--all"],
        "export": ["export", "--since", "2026-11-01", "--until", DAY, "--format", "json"],
    }[command]
    code = cli.main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    doc = json.loads(out)
    if command == "today":
        assert doc["calls"] == 100
    elif command == "export":
        assert len(doc) == truth[0] and round(sum(r["cost_usd"] for r in doc), 9) == truth[1]
    elif command == "sessions":
        assert sum(s["calls"] for s in doc) == truth[0]
    assert _sums(ledger) == truth
    assert cli.main(["today", "--date", DAY]) == 0  # and the next command too


def test_a_query_that_meets_damage_raises_ledger_damaged_and_repair_answers(scene):
    ledger, made, truth = scene
    _zero_calls(ledger, leaves_too=False)
    led = Ledger(ledger)
    with pytest.raises(LedgerDamaged):
        led.query("SELECT count(*), total(cost) FROM calls WHERE counted=1")
    led.repair()
    assert led.notice and "recovered" in led.notice
    n, cost = led.query("SELECT count(*), total(cost) FROM calls WHERE counted=1")[0]
    led.close()
    assert (n, round(cost, 9)) == truth  # every page row kept (the backup adds nothing: it was all there)


# ---- rotation by the backups' own time ----------------------------------------------------------------


def _ledger_db(tmp_path: Path) -> tuple[Path, sqlite3.Connection]:
    state = tmp_path / "state"
    state.mkdir(exist_ok=True)
    here = state / "ledger.db"
    led = Ledger(here)
    led.db.execute("BEGIN")
    led.db.execute("INSERT INTO sessions(id) VALUES('s')")
    led.db.execute("INSERT INTO files(path, session_id, kind) VALUES('/f', 's', 'messages')")
    led.db.execute(
        "INSERT INTO calls(key, session_id, file_id, ts_ms, input, output, cache_read, cache_write, counted)"
        " VALUES('k', 's', 1, 1, 1, 1, 0, 0, 1)"
    )
    led.db.execute("COMMIT")
    return here, led.db


def test_future_named_files_never_freeze_the_rotation_nor_push_backups_out(tmp_path):
    """Seven files named in the future (planted, or a clock that once ran ahead: copies of a real backup) and one
    named a minute ahead: each day's backup stays, a backup is due once a day (not at every command), and only
    trayburn's own backups beyond seven are ever removed; a planted file is never removed."""
    here, db = _ledger_db(tmp_path)
    day = 86400.0
    start = time.time() - 20 * day
    first = backups.make_backup(db, here, now=start)
    assert first is not None
    planted = []
    for i in range(7):
        p = here.parent / f"ledger.db.backup-2999010{i}-000000"
        if i % 2:
            shutil.copy(first, p)  # a real backup's bytes (trayburn's mark included), named in the future
        else:
            p.write_bytes(b"")
        planted.append(p)
    ahead = here.parent / time.strftime("ledger.db.backup-%Y%m%d-%H%M%S", time.localtime(time.time() + 60))
    ahead.write_bytes(b"")
    planted.append(ahead)
    made = [first]
    for i in range(1, 6):
        now = start + i * day
        assert backups.backup_due(here, now)
        got = backups.daily_backup(db, here, now)
        assert got is not None and got.exists()
        made.append(got)
        assert not backups.backup_due(here, now + 60)  # the day's is made: none at the next command
    assert all(p.exists() for p in made)  # none pushed out
    assert all(p.exists() for p in planted[::2] + [ahead])  # not trayburn's: never removed
    for i in range(6, 12):
        made.append(backups.make_backup(db, here, now=start + i * day))
    ours = [b for b in backups.backups(here) if b.stat().st_size > 0]
    assert set(made[-backups.BACKUPS_KEPT :]) <= set(ours)  # the seven newest of trayburn's kept
    assert len(ours) == backups.BACKUPS_KEPT
    db.close()


def test_a_backup_written_by_a_clock_ahead_is_not_the_days_backup_and_goes_first(tmp_path):
    here, db = _ledger_db(tmp_path)
    ahead = backups.make_backup(db, here, now=time.time() + 30 * 86400)  # a clock a month ahead
    assert ahead is not None
    assert backups.backup_due(here)  # its time is in the future: of no known age
    now = time.time() - 10 * 86400
    kept = [backups.make_backup(db, here, now=now + i * 86400) for i in range(backups.BACKUPS_KEPT)]
    assert not ahead.exists() and all(p is not None and p.exists() for p in kept)
    db.close()


def test_read_pages_counts_the_calls_of_zeroed_leaves_from_the_key_index(scene):
    ledger, made, truth = scene
    db = sqlite3.connect(ledger)
    rows = db.execute("SELECT count(*) FROM calls").fetchone()[0]
    db.close()
    _zero_calls(ledger, leaves_too=True)
    found = read_pages(ledger)
    assert not [v for _, _, v in found.rows() if len(v) >= 15 and isinstance(v[3], int)]
    keys = {e[2] for e in found.index_rows() if tuple(map(type, e)) == (str, int, int)}
    assert len(keys) == rows
