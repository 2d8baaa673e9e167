"""The tray's status lines: how fresh the figures are, the budget line, and the problem line a health gets, from
real folders."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from trayburn import paths
from trayburn.engine import Engine
from trayburn.tray import view


# --- freshness -----------------------------------------------------------------------------------
def test_freshness_says_just_now_while_refreshes_work_and_the_age_when_they_stop():
    assert view.freshness(5, 30, False) == ("Updated just now", False)
    assert view.freshness(80, 30, False) == ("Updated just now", False)  # within three intervals
    assert view.freshness(185, 30, False) == ("Updated 3 min ago — refresh stopped", True)
    assert view.freshness(185, 30, True) == ("Updated 3 min ago — refresh failing", True)
    assert view.freshness(None, 30, True) == ("Not updated yet — refresh failing", True)
    assert view.freshness(400, 300, False) == ("Updated just now", False)  # 5-minute polls


def test_budget_text():
    assert view.budget_text(0.33, 0.40) == "$0.33 of $0.40 budget (82 %)"
    assert view.budget_text(0.33, None) is None


# --- the problem line, by kind -------------------------------------------------------------------
@pytest.fixture
def clean_env(tmp_path, monkeypatch):
    for var in ("CLINE_DIR", "CLINE_DATA_DIR", "CLINE_SESSION_DATA_DIR", "TRAYBURN_CONFIG", "TRAYBURN_STATE_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path


def test_health_kinds_from_real_folders(clean_env):
    tmp = clean_env
    engine = Engine(tmp / "settings.toml", tmp / "state")
    assert engine.health().kind == "not_installed"
    assert view.problem_line(engine.health()) is None  # the first-run entries say it
    sessions = tmp / "home" / ".cline" / "data" / "sessions"
    sessions.parent.mkdir(parents=True)
    assert engine.health().kind == "no_sessions_folder"
    sessions.write_text("a file")
    assert engine.health().kind == "sessions_not_a_folder"
    assert "is not a folder" in view.problem_line(engine.health())
    sessions.unlink()
    sessions.mkdir()
    assert engine.health().kind == "no_sessions"
    (tmp / "settings.toml").write_text(f'sessions_dir = "{tmp / "nowhere"}"\n')
    engine.reload_if_changed()
    assert engine.health().kind == "override_missing"
    assert view.problem_line(engine.health()).startswith("The setting sessions_dir in ")
    (tmp / "settings.toml").write_text("theme = = 1\n")
    engine.reload_if_changed()
    assert engine.health().kind == "settings_broken"
    assert view.problem_line(engine.health()).startswith("Settings file is broken at line 1")
    engine.close()


def test_the_engines_kind_wins_when_it_has_one(clean_env):
    engine = Engine(clean_env / "settings.toml", clean_env / "state")
    health = engine.health()
    engine.close()

    @dataclasses.dataclass
    class WithKind:
        kind: str
        levels: paths.Levels
        config_path: Path
        sessions: int = 0
        problems: tuple = ()
        problem_level: paths.Level | None = None

    said = WithKind("override_missing", health.levels, health.config_path, problem_level=health.levels.data)
    assert view.problem_line(said) == view.tilde(
        f"CLINE_DATA_DIR points to {health.levels.data.path}, which does not exist"
    )
