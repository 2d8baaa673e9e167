"""Kilo Code 7 through the whole app: the real recording (a kilo.db whose last session lives only in its -wal)
exact in every command and in three time zones against its EXPECTED.json; where the database is looked for;
what `doctor` says of it."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path, PurePosixPath, PureWindowsPath

import pytest
from helpers.corpus import set_tz  # noqa: F401 (fixture)
from helpers.kilodb import V1, as_trayburn, expected, unpack

from trayburn import cli
from trayburn.engine import Engine
from trayburn.sources.kilo import places

ZONES = ["UTC", "Europe/Berlin", "America/Los_Angeles"]
FIELDS = ("input", "output", "cache_read", "cache_write")


@pytest.fixture
def kilo_home(tmp_path, monkeypatch) -> Path:
    """The recording as Kilo left it, at the default place ($XDG_DATA_HOME/kilo)."""
    data = unpack(V1, tmp_path / "rec") / "xdg_data"
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    monkeypatch.delenv("KILO_DB", raising=False)
    return data / "kilo"


def run(capsys, *argv: str):
    assert cli.main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def figures(row: dict) -> tuple:
    """A row's figures; an unpriced one's cost (None: no price known, never $0) as EXPECTED's 0."""
    return (row["calls"], *(row["tokens"][k] for k in FIELDS), round(row["cost_usd"] or 0.0, 9))


def tops(exp: dict) -> dict[str, tuple]:
    """EXPECTED's sessions as trayburn files them: a subagent's session inside its top session."""
    out: dict[str, list] = {}
    for sid, s in exp["sessions"].items():
        top = s["parent_id"] or sid
        t = as_trayburn(s["messages"])
        out.setdefault(f"kilo:{top}", [0] * 6)
        out[f"kilo:{top}"] = [a + b for a, b in zip(out[f"kilo:{top}"], t, strict=True)]
    return {k: (*v[:5], round(v[5], 9)) for k, v in out.items()}


@pytest.mark.parametrize("zone", ZONES)
def test_the_recording_in_every_command(kilo_home, capsys, set_tz, zone):
    """today, report --by day/source, sessions and export: each figure EXPECTED's (computed by the recording's
    script from the database), per local day of the zone; the unpriced model's calls unpriced, never $0."""
    set_tz(zone)
    exp = expected()
    days = exp["days"][zone]
    for day, want in days.items():
        got = run(capsys, "today", "--date", day)
        assert figures(got) == as_trayburn(want), day
        assert got["unpriced_calls"] == (2 if day >= "2026-12-01" else 0)
    first, last = min(days), max(days)
    report = run(capsys, "report", "--since", first, "--until", last, "--by", "day")
    assert {r["key"]: figures(r) for r in report["rows"] if r["calls"]} == {d: as_trayburn(w) for d, w in days.items()}
    assert figures(report["total"]) == as_trayburn(exp["total"])
    by_source = run(capsys, "report", "--since", first, "--until", last, "--by", "source")
    assert [(r["key"], figures(r)) for r in by_source["rows"]] == [("kilo-code", as_trayburn(exp["total"]))]
    sessions = run(capsys, "sessions", "--since", first, "--until", last)
    assert {s["id"]: figures(s) for s in sessions} == tops(exp)
    free = next(s for s in sessions if s["title"] == "Unpriced run")
    assert (free["cost_usd"], free["unpriced_calls"]) == (None, 2)  # Kilo's cost 0: no price known, not $0
    sub = next(s for s in sessions if s["title"] == "Subagent run")
    assert sub["cost_usd"] == pytest.approx(0.036)  # its own 0.014895 and its subagent's 0.021105, each once
    exported = run(capsys, "export", "--since", first, "--until", last)
    assert len(exported) == exp["total"]["calls"]
    assert round(sum(r["cost_usd"] or 0 for r in exported), 9) == round(exp["total"]["cost"], 9)
    assert {r["source"] for r in exported} == {"kilo-code"}
    assert {r["agent"] for r in exported} == {"lead", "general"}  # the subagent's calls say whose they are
    engine = Engine()
    labels = dict(engine.spend_by_source(since=date.fromisoformat(first), until=date.fromisoformat(last)))
    assert list(labels) == ["Kilo Code"]  # the menu's by-app line
    engine.close()


def test_the_live_snapshot_counts_what_was_finished(tmp_path, capsys, monkeypatch, set_tz):
    """A copy taken while Kilo streamed: the in-flight message (zero usage, no step-finish) is no call yet."""
    set_tz("UTC")
    root = unpack(V1, tmp_path / "rec")
    monkeypatch.setenv("KILO_DB", str(root / "live-snapshot" / "kilo" / "kilo.db"))
    exp = expected(name="EXPECTED.live-snapshot.json")
    got = run(capsys, "report", "--since", "2026-11-27", "--until", "2026-12-02", "--by", "source")
    assert figures(got["total"]) == as_trayburn(exp["total"])
    live = [s for s in run(capsys, "sessions", "--since", "2026-12-02", "--until", "2026-12-02")]
    assert any(s["title"] == "Live snapshot" and s["status"] == "running" for s in live)


# ---- where ----------------------------------------------------------------------------------------


def test_places_on_each_os_and_the_overrides(tmp_path):
    lin = places.data_dirs({}, PurePosixPath("/home/me"), "linux")
    assert lin == [("default (~/.local/share/kilo)", PurePosixPath("/home/me/.local/share/kilo"))]
    xdg = places.data_dirs({"XDG_DATA_HOME": "/d"}, PurePosixPath("/home/me"), "linux")
    assert xdg[0][1] == PurePosixPath("/d/kilo")
    mac = [p for _, p in places.data_dirs({}, PurePosixPath("/Users/me"), "darwin")]
    assert mac == [
        PurePosixPath("/Users/me/.local/share/kilo"),
        PurePosixPath("/Users/me/Library/Application Support/kilo"),
    ]
    win = places.data_dirs({}, PureWindowsPath(r"C:\Users\me"), "win32")
    assert win[0][1] == PureWindowsPath(r"C:\Users\me\.local\share\kilo")  # (Kilo resolves XDG folders itself)
    home = tmp_path / "home"
    data = home / ".local" / "share" / "kilo"
    data.mkdir(parents=True)
    for name in ("kilo.db", "kilo-beta.db", "opencode-dev.db", "kilo.db-wal", "notes.db"):
        (data / name).write_bytes(b"")
    found = places.databases([], {}, home, "linux")
    assert [(d.path.name, d.origin) for d in found] == [
        ("kilo.db", "default (~/.local/share/kilo)"),
        ("kilo-beta.db", "default (~/.local/share/kilo), preview channel"),
        ("opencode-dev.db", "default (~/.local/share/kilo), preview channel"),
    ]
    assert places.databases([], {"KILO_DB": "/x/k.db"}, home, "linux") == [places.Database(Path("/x/k.db"), "KILO_DB")]
    assert places.databases([], {"KILO_DB": "mine.db"}, home, "linux")[0].path == data / "mine.db"
    given = places.databases(["~/other.db", str(data)], {"KILO_DB": "/x/k.db"}, home, "linux")
    assert [(d.path, d.origin) for d in given][:2] == [
        (home / "other.db", "settings (kilo_code_db)"),
        (data / "kilo.db", "settings (kilo_code_db)"),
    ]


def test_the_setting_names_the_database(tmp_path, capsys, monkeypatch):
    root = unpack(V1, tmp_path / "rec")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "nothing"))
    assert cli.main(["config", "set", "kilo_code_db", str(root / "xdg_data" / "kilo" / "kilo.db")]) == 0
    capsys.readouterr()
    got = run(capsys, "report", "--since", "2026-11-27", "--until", "2026-12-02", "--by", "source")
    assert figures(got["total"]) == as_trayburn(expected()["total"])
    assert cli.main(["config", "set", "kilo_code", "false"]) == 0  # Kilo Code off: not read, what it held stays
    capsys.readouterr()
    engine = Engine()
    assert engine.kilo_sources() == [] and engine.kilo_json()["enabled"] is False
    engine.close()


# ---- doctor ---------------------------------------------------------------------------------------


def test_doctor_lists_the_database_its_origin_and_what_it_holds(kilo_home, capsys):
    assert cli.main(["doctor", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (db,) = out["kilo"]["databases"]
    assert db["path"] == str(kilo_home / "kilo.db") and db["origin"] == "default ($XDG_DATA_HOME/kilo)"
    assert (db["sessions"], db["messages"], db["problem"]) == (7, 23, None)  # the -wal's rows included
    assert out["kind"] == "ok" and "6 of Kilo Code 7" in out["verdict"]  # (its subagent is inside its parent)
    assert cli.main(["doctor"]) == 0
    text = capsys.readouterr().out
    assert f"{kilo_home / 'kilo.db'}  [default ($XDG_DATA_HOME/kilo)]  7 sessions, 23 messages" in text
    engine = Engine()
    assert str(kilo_home) in engine.watch_folders()  # a tray's waker watches the folder of kilo.db and its -wal
    engine.close()


def test_doctor_says_why_nothing_is_read(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("KILO_DB", str(tmp_path / "absent.db"))
    assert cli.main(["doctor"]) == 1  # nothing at all here: the Cline CLI is not installed either
    assert f"{tmp_path / 'absent.db'}  [KILO_DB]  (none: no Kilo Code 7 here)" in capsys.readouterr().out
    (tmp_path / "absent.db").write_bytes(b"not a database at all" * 100)
    assert cli.main(["doctor"]) == 1
    text = capsys.readouterr().out
    assert "not read: not a readable SQLite database" in text and "absent.db" in text
