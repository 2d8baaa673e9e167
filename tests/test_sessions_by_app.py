"""Cline 4's one sessions folder for every Cline app: the manifest's `source` is the app people know in `report
--by source`, the window's By source tab, the menu's by-app line and the export (Cline CLI, Cline for VS Code,
Cline for JetBrains, Cline Desktop; another value as written, cleaned). The data root's `sessions.index.json`
and `subagent-spawn-queue.json` (and an index beside the session folders) are ignored safely."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.corpus import age_all, iso, isolated_env, make_session
from helpers.menus import Spawned, a_minute_ago_ms, find, routed

from trayburn import cli
from trayburn.engine import Engine
from trayburn.figures import periods
from trayburn.tray import host
from trayburn.tray.app import TrayApp
from trayburn.window import period_rows

pystray = host.load_pystray("dummy")
CAPS = host.capabilities("dummy")
LONG = "x" * 100
APPS = [  # (the manifest's `source`, its cost, the app shown)
    ("cli", 0.9, "Cline CLI"),
    ("vscode", 0.8, "Cline for VS Code"),
    ("jetbrains", 0.7, "Cline for JetBrains"),
    ("desktop", 0.6, "Cline Desktop"),
    ("CLI ", 0.5, "Cline CLI"),  # a known one, whatever its case and spaces
    ("kanban", 0.4, "kanban"),  # one Cline writes that has no name here: as written
    ("  Neo\x1bvim\t\n plugin ", 0.3, "Neovim plugin"),  # controls removed, spaces collapsed
    (LONG, 0.2, "x" * 39 + "…"),
    (7, 0.1, "other"),  # not a string: no source
]


def sessions_of_every_app(cline: Path, t: int) -> Path:
    sessions = cline / "data" / "sessions"
    for i, (source, cost, _) in enumerate(APPS):
        call = routed(f"m{i}", t + i, "anthropic/claude-sonnet-4.5", "cline", cost=cost)
        make_session(sessions, f"{t}_app{i:02d}", iso(t), [call], provider="cline", source=source)
    return sessions


def index_files(cline: Path, valid: bool) -> None:
    """What Cline keeps beside the sessions: its index and the subagents' queue (whole, or caught mid-write)."""
    data = cline / "data"
    index = [{"sessionId": "1796000000000_zzzzz", "title": "elsewhere", "totalCost": 99.0}]
    queue = {"version": 1, "items": [{"parentSessionId": "1796000000000_zzzzz", "agentId": "a1"}]}
    for path, doc in ((data / "sessions.index.json", index), (data / "subagent-spawn-queue.json", queue),
                      (data / "sessions" / "sessions.index.json", index)):  # fmt: skip
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc) if valid else json.dumps(doc)[:17])


@pytest.fixture
def every_app(tmp_path, monkeypatch):
    t = a_minute_ago_ms()
    sessions = sessions_of_every_app(tmp_path / "cline", t)
    env = isolated_env(tmp_path, CLINE_DIR=str(tmp_path / "cline"))
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    age_all(sessions)
    return t, env


def run(capsys, *argv: str) -> str:
    assert cli.main(list(argv)) == 0
    return capsys.readouterr().out


def test_each_app_in_the_report_the_export_the_window_and_the_menu(every_app, capsys):
    _, env = every_app
    day = periods.now_date().isoformat()
    rows = json.loads(run(capsys, "report", "--since", day, "--until", day, "--by", "source", "--json"))["rows"]
    shown = [(r.get("label", r["key"]), r["cost_usd"]) for r in rows]
    assert shown == [(label, cost) for _, cost, label in APPS]
    assert [r["key"] for r in rows][:5] == ["cli", "vscode", "jetbrains", "desktop", "CLI "], "the key: as written"
    text = run(capsys, "report", "--since", day, "--until", day, "--by", "source")
    assert all(label in text for _, _, label in APPS) and "\x1b" not in text
    exported = json.loads(run(capsys, "export", "--since", day, "--until", day, "--format", "json"))
    assert [(r["app"], r["cost_usd"]) for r in exported] == [(label, cost) for _, cost, label in APPS]
    e = Engine(Path(env["TRAYBURN_CONFIG"]), Path(env["TRAYBURN_STATE_DIR"]), env=env)
    tab = period_rows.group_rows(e.overview(periods.day_of(periods.now_date()))["source"])
    assert [r.values[0] for r in tab] == [label for _, _, label in APPS]
    e.close()
    app = TrayApp(Engine(Path(env["TRAYBURN_CONFIG"]), Path(env["TRAYBURN_STATE_DIR"]), env=env), pystray, CAPS,
                  spawn=Spawned())  # fmt: skip
    app.tick()
    line = str(find(app.icon.menu, "Cline CLI $").text)
    assert line.startswith("Cline CLI $0.90 · Cline for VS Code $0.80 · Cline for JetBrains $0.70 · Cline Desktop")
    app.engine.close()


@pytest.mark.parametrize("valid", [True, False], ids=["whole", "mid-write"])
def test_the_index_files_are_ignored_safely(tmp_path, capsys, monkeypatch, valid):
    t = a_minute_ago_ms()
    cline = tmp_path / "cline"
    sessions_of_every_app(cline, t)
    index_files(cline, valid)
    age_all(cline)
    for k, v in isolated_env(tmp_path, CLINE_DIR=str(cline)).items():
        monkeypatch.setenv(k, v)
    out = json.loads(run(capsys, "today", "--json"))
    assert (out["calls"], out["sessions"]) == (len(APPS), len(APPS))
    assert out["cost_usd"] == pytest.approx(sum(cost for _, cost, _ in APPS), abs=1e-12)
    listed = json.loads(run(capsys, "sessions", "--all", "--json"))
    assert sorted(s["id"] for s in listed) == sorted(f"{t}_app{i:02d}" for i in range(len(APPS)))
    doctor = json.loads(run(capsys, "doctor", "--json"))  # exit 0: nothing wrong
    assert (doctor["kind"], doctor["problems"], doctor["being_written"]) == ("ok", [], [])
    assert doctor["sessions"] == len(APPS)
