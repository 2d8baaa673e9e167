"""Where Cline's three folders are: each level resolved on its own, as the CLI does."""

from __future__ import annotations

from pathlib import Path

import pytest

from trayburn import paths

VARS = ("CLINE_DIR", "CLINE_DATA_DIR", "CLINE_SESSION_DATA_DIR")


def resolve(env, **settings):
    return paths.resolve_levels(settings.get("cline_dir"), settings.get("data_dir"), settings.get("sessions_dir"), env)


def summary(levels):
    return [(lv.name, lv.path, lv.origin) for lv in levels]


def test_defaults_follow_home():
    levels = resolve({"HOME": "/h"})
    assert summary(levels) == [
        ("cline_dir", Path("/h/.cline"), "default"),
        ("data_dir", Path("/h/.cline/data"), "default"),
        ("sessions_dir", Path("/h/.cline/data/sessions"), "default"),
    ]
    assert [lv.variable for lv in levels] == list(VARS)
    assert [lv.source() for lv in levels] == ["default"] * 3


def test_root_alone_moves_data_and_sessions():
    levels = resolve({"HOME": "/h", "CLINE_DIR": "/c"})
    assert summary(levels) == [
        ("cline_dir", Path("/c"), "environment"),
        ("data_dir", Path("/c/data"), "default"),
        ("sessions_dir", Path("/c/data/sessions"), "default"),
    ]
    assert levels.root.source() == "CLINE_DIR"


def test_data_alone_moves_sessions_not_root():
    levels = resolve({"HOME": "/h", "CLINE_DATA_DIR": "/d"})
    assert summary(levels) == [
        ("cline_dir", Path("/h/.cline"), "default"),
        ("data_dir", Path("/d"), "environment"),
        ("sessions_dir", Path("/d/sessions"), "default"),
    ]


def test_sessions_alone_moves_nothing_else():
    levels = resolve({"HOME": "/h", "CLINE_SESSION_DATA_DIR": "/s"})
    assert summary(levels) == [
        ("cline_dir", Path("/h/.cline"), "default"),
        ("data_dir", Path("/h/.cline/data"), "default"),
        ("sessions_dir", Path("/s"), "environment"),
    ]
    assert levels.sessions.source() == "CLINE_SESSION_DATA_DIR"


def test_all_three_each_on_its_own():
    levels = resolve({"HOME": "/h", "CLINE_DIR": "/c", "CLINE_DATA_DIR": "/d", "CLINE_SESSION_DATA_DIR": "/s"})
    assert [lv.path for lv in levels] == [Path("/c"), Path("/d"), Path("/s")]


@pytest.mark.parametrize("blank", ["", "   ", "\t\n"])
@pytest.mark.parametrize("var", VARS)
def test_blank_variable_counts_as_unset(var, blank):
    assert summary(resolve({"HOME": "/h", var: blank})) == summary(resolve({"HOME": "/h"}))


@pytest.mark.parametrize("var", VARS)
def test_tilde_expanded_in_variables(var):
    level = {lv.variable: lv for lv in resolve({"HOME": "/h", var: "~/x"})}[var]
    assert level.path == Path("/h/x")
    assert {lv.variable: lv for lv in resolve({"HOME": "/h", var: "~"})}[var].path == Path("/h")


def test_surrounding_blanks_trimmed():
    assert resolve({"HOME": "/h", "CLINE_DIR": "  /c  "}).root.path == Path("/c")


def test_settings_override_each_level_variable():
    env = {"HOME": "/h", "CLINE_DIR": "/c", "CLINE_DATA_DIR": "/d", "CLINE_SESSION_DATA_DIR": "/s"}
    levels = resolve(env, cline_dir="/C", data_dir="~/D", sessions_dir="/S")
    assert summary(levels) == [
        ("cline_dir", Path("/C"), "settings"),
        ("data_dir", Path("/h/D"), "settings"),
        ("sessions_dir", Path("/S"), "settings"),
    ]
    assert levels.data.source() == "settings (data_dir)"


def test_one_setting_overrides_only_its_level():
    env = {"HOME": "/h", "CLINE_DIR": "/c", "CLINE_SESSION_DATA_DIR": "/s"}
    levels = resolve(env, data_dir="/D")
    assert summary(levels) == [
        ("cline_dir", Path("/c"), "environment"),
        ("data_dir", Path("/D"), "settings"),
        ("sessions_dir", Path("/s"), "environment"),
    ]


def test_setting_on_root_moves_defaults_below_it():
    levels = resolve({"HOME": "/h"}, cline_dir="/C")
    assert [lv.path for lv in levels] == [Path("/C"), Path("/C/data"), Path("/C/data/sessions")]


@pytest.mark.parametrize("blank", ["", "  "])
def test_blank_setting_falls_back_to_the_variable(blank):
    levels = resolve({"HOME": "/h", "CLINE_DIR": "/c"}, cline_dir=blank)
    assert (levels.root.path, levels.root.origin) == (Path("/c"), "environment")


def test_home_fallbacks():
    assert paths.home({"HOME": "/h", "USERPROFILE": "/u"}) == Path("/h")
    assert paths.home({"HOME": " ", "USERPROFILE": "/u"}) == Path("/u")
    assert paths.home({"HOMEDRIVE": "C:", "HOMEPATH": "/Users/me"}) == Path("C:/Users/me")
    assert resolve({"USERPROFILE": "/u"}).root.path == Path("/u/.cline")


def test_exists_reflects_the_disk(tmp_path):
    (tmp_path / "c" / "data").mkdir(parents=True)
    levels = resolve({"HOME": str(tmp_path), "CLINE_DIR": str(tmp_path / "c")})
    assert [lv.exists for lv in levels] == [True, True, False]
    (tmp_path / "c" / "data" / "sessions").mkdir()
    assert levels.sessions.exists


def test_a_file_is_not_an_existing_folder(tmp_path):
    (tmp_path / "c").write_text("not a folder")
    assert not resolve({"HOME": "/h", "CLINE_DIR": str(tmp_path / "c")}).root.exists


def test_trayburn_config_and_state_locations(tmp_path):
    env = {"TRAYBURN_CONFIG": str(tmp_path / "a.toml"), "TRAYBURN_STATE_DIR": str(tmp_path / "st")}
    assert paths.config_file(None, env) == tmp_path / "a.toml"
    assert paths.config_file(tmp_path / "b.toml", env) == tmp_path / "b.toml"  # --config wins
    assert paths.state_dir(None, env) == tmp_path / "st"
    assert paths.state_dir(tmp_path / "x", env) == tmp_path / "x"
    blank = {"TRAYBURN_CONFIG": "  ", "TRAYBURN_STATE_DIR": ""}
    assert paths.config_file(None, blank).name == "settings.toml"
    assert paths.state_dir(None, blank) != Path("")


def test_trayburn_files_are_named_in_the_state_folder(tmp_path):
    state = paths.state_dir(None, {"TRAYBURN_STATE_DIR": str(tmp_path / "s")})
    assert [p.relative_to(state).as_posix() for p in (paths.ledger_file(state), paths.tray_lock(state))] == [
        "ledger.db",
        "tray.lock",
    ]
    assert paths.notified_file(state).parent == state


def test_the_demo_folder_follows_the_state_folder_variable(tmp_path):
    assert paths.demo_dir({"TRAYBURN_STATE_DIR": str(tmp_path / "s")}) == tmp_path / "s" / "demo"
    default = paths.demo_dir({})
    assert default.name == "demo" and not default.is_relative_to(tmp_path)
