"""What identifies a call and a file in the ledger: names that are not UTF-8 are stored byte-exact, and calls
without a message id count once across renamed copies (schema 4, and a schema-3 ledger rekeyed)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

from helpers.corpus import (
    Ledger,
    a_minute_later,
    assistant,
    counted,
    make_session,
    ms,
    set_tz,  # noqa: F401
)
from helpers.ledgers import (
    T0,
    cline,  # noqa: F401  (a fixture)
    sessions,  # noqa: F401  (a fixture)
)

from trayburn import cli

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
