"""The settings file: tolerant load, validation, atomic save, and `trayburn config`."""

from __future__ import annotations

import json
import os
import tomllib

import pytest
from helpers.corpus import copy_corpus, expected, set_tz  # noqa: F401

from trayburn import cli, setting_kinds, settings
from trayburn.errors import Exit

GOOD = """\
cline_dir = "~/cl"
refresh_seconds = 60
daily_budget = 5
theme = "dark"

[aliases]
"my-proxy" = "gpt-4o"

[prices."acme-1"]
input = 1.5
output = 6
"""


@pytest.fixture
def conf(tmp_path, monkeypatch):
    path = tmp_path / "settings.toml"
    monkeypatch.setenv("TRAYBURN_CONFIG", str(path))
    return path


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ---- load ---------------------------------------------------------------------------------------


def test_missing_file_means_defaults(tmp_path):
    loaded = settings.load(tmp_path / "none.toml")
    assert (loaded.exists, loaded.error, loaded.warnings) == (False, None, [])
    assert loaded.settings == settings.Settings()


def test_good_file(conf):
    conf.write_text(GOOD)
    loaded = settings.load(conf)
    s = loaded.settings
    assert (loaded.error, loaded.warnings) == (None, [])
    assert (s.cline_dir, s.refresh_seconds, s.daily_budget, s.theme) == ("~/cl", 60, 5.0, "dark")
    assert s.aliases == {"my-proxy": "gpt-4o"}
    assert s.prices == {"acme-1": {"input": 1.5, "output": 6.0}}


def test_broken_toml_reported_with_its_line(conf):
    conf.write_text('theme = "dark"\nrefresh_seconds = 60\nthis is not toml\n')
    loaded = settings.load(conf)
    assert loaded.exists and loaded.settings == settings.Settings()
    assert "line 3" in loaded.error and str(conf) in loaded.error
    assert (loaded.problem.kind, loaded.problem.line) == ("not_toml", 3)


def test_the_keys_for_history_currency_and_sync(conf):
    conf.write_text('monthly_budget = 80\ncurrency = "eur"\nusd_rate = 0.92\nsync_dir = "~/Sync"\nsync_titles = true\n')
    loaded = settings.load(conf)
    s = loaded.settings
    assert loaded.warnings == []
    assert (s.monthly_budget, s.currency, s.usd_rate, s.sync_dir, s.sync_titles) == (80.0, "EUR", 0.92, "~/Sync", True)
    conf.write_text('currency = "euro"\nusd_rate = 0\nsync_titles = "yes"\n')
    assert len(settings.load(conf).warnings) == 3


def test_not_utf8_is_reported(conf):
    conf.write_bytes(b'theme = "\xff\xfe"\n')
    assert "UTF-8" in settings.load(conf).error


def test_a_folder_where_the_file_should_be(conf):
    conf.mkdir()
    loaded = settings.load(conf)
    assert loaded.problem.kind == "not_a_file"
    assert loaded.error == f"{conf} is a folder, not a regular file"


@pytest.mark.parametrize(
    "line, key",
    [
        ("refresh_seconds = 2", "refresh_seconds"),
        ("refresh_seconds = true", "refresh_seconds"),
        ("refresh_seconds = 30.5", "refresh_seconds"),
        ('theme = "purple"', "theme"),
        ("daily_budget = -1", "daily_budget"),
        ("daily_budget = nan", "daily_budget"),
        ('max_file_mb = "big"', "max_file_mb"),
        ("max_file_mb = 0", "max_file_mb"),
        ("cline_dir = 3", "cline_dir"),
        ('aliases = "x"', "aliases"),
        ("aliases = { a = 1 }", "aliases"),
        ("prices = { m = { input = -1 } }", "prices"),
        ("prices = { m = { input = nan } }", "prices"),
        ("prices = { m = { input = inf } }", "prices"),
        ("prices = { m = { inptu = 1 } }", "prices"),
        ("prices = { m = 3 }", "prices"),
    ],
)
def test_bad_value_falls_back_with_a_warning(conf, line, key):
    conf.write_text(line + "\ntheme_ok = 1\n")
    loaded = settings.load(conf)
    assert loaded.error is None
    assert getattr(loaded.settings, key) == getattr(settings.Settings(), key)
    assert any(f"'{key}'" in w and "default" in w for w in loaded.warnings)


def test_unknown_keys_warned(conf):
    conf.write_text('colour = "red"\n')
    loaded = settings.load(conf)
    assert loaded.settings.extra == {"colour": "red"}
    assert any("colour" in w for w in loaded.warnings)


def test_zero_budget_turns_it_off(conf):
    conf.write_text("daily_budget = 0\n")
    assert settings.load(conf).settings.daily_budget is None


# ---- update and save ------------------------------------------------------------------------------


def test_set_and_unset_scalars(conf):
    settings.update(conf, "refresh_seconds", "60")
    settings.update(conf, "daily_budget", "$2.50")
    settings.update(conf, "cline_dir", "~/x")
    s = settings.load(conf).settings
    assert (s.refresh_seconds, s.daily_budget, s.cline_dir) == (60, 2.5, "~/x")
    settings.update(conf, "refresh_seconds", None)
    settings.update(conf, "cline_dir", None)
    s = settings.load(conf).settings
    assert (s.refresh_seconds, s.cline_dir) == (settings.Settings().refresh_seconds, None)
    assert "refresh_seconds" not in tomllib.loads(conf.read_text())


def test_set_and_unset_tables(conf):
    settings.update(conf, "aliases.z-ai/glm-5.2", "glm-5.2")
    settings.update(conf, "prices.gpt-4.1.input", "2")
    settings.update(conf, "prices.gpt-4.1.output", "8")
    s = settings.load(conf).settings
    assert s.aliases == {"z-ai/glm-5.2": "glm-5.2"}
    assert s.prices == {"gpt-4.1": {"input": 2.0, "output": 8.0}}
    settings.update(conf, "prices.gpt-4.1.input", None)
    settings.update(conf, "prices.gpt-4.1.output", None)
    settings.update(conf, "aliases.z-ai/glm-5.2", None)
    s = settings.load(conf).settings
    assert (s.prices, s.aliases) == ({}, {})


@pytest.mark.parametrize(
    "key, value",
    [
        ("refresh_seconds", "2"),
        ("refresh_seconds", "soon"),
        ("theme", "purple"),
        ("daily_budget", "-3"),
        ("colour", "red"),
        ("prices.m.inptu", "1"),
        ("prices.m.input", "-1"),
        ("prices.m.input", "nan"),
        ("prices.m.output", "inf"),
        ("prices.m.input", "cheap"),
        ("theme.x", "dark"),
        ("aliases", "x"),
    ],
)
def test_bad_updates_refused_and_file_untouched(conf, key, value):
    conf.write_text(GOOD)
    with pytest.raises(settings.SettingsError):
        settings.update(conf, key, value)
    assert conf.read_text() == GOOD
    assert settings.load(conf).warnings == []


def test_broken_file_never_overwritten(conf):
    broken = 'theme = "dark"\n[prices\n'
    conf.write_text(broken)
    with pytest.raises(settings.SettingsError, match="line 2"):
        settings.update(conf, "theme", "light")
    assert conf.read_text() == broken


def test_unknown_keys_kept_on_save(conf):
    conf.write_text('colour = "red"\n[window]\nwidth = 800\n')
    settings.update(conf, "theme", "light")
    data = tomllib.loads(conf.read_text())
    assert data == {"theme": "light", "colour": "red", "window": {"width": 800}}


def test_bad_values_kept_on_save_until_replaced(conf):
    conf.write_text("refresh_seconds = 2\nprices = { m = { input = -1 } }\n")
    settings.update(conf, "theme", "dark")
    data = tomllib.loads(conf.read_text())
    assert data == {"theme": "dark", "refresh_seconds": 2, "prices": {"m": {"input": -1}}}
    settings.update(conf, "refresh_seconds", "15")
    assert tomllib.loads(conf.read_text())["refresh_seconds"] == 15
    assert settings.load(conf).settings.refresh_seconds == 15


def test_no_dotted_edit_inside_an_invalid_table(conf):
    text = "prices = { m = { input = -1 }, n = { input = 2, output = 3 } }\n"
    conf.write_text(text)
    with pytest.raises(settings.SettingsError, match="fix it by hand"):
        settings.update(conf, "prices.o.input", "1")
    assert conf.read_text() == text


def test_save_is_atomic(conf, monkeypatch):
    conf.write_text(GOOD)
    inode = conf.stat().st_ino
    settings.update(conf, "theme", "light")
    assert conf.stat().st_ino != inode  # replaced, not rewritten in place
    assert sorted(p.name for p in conf.parent.iterdir()) == ["settings.toml"]  # no temp file left

    def fail(*args):
        raise OSError("disk full")

    before = conf.read_text()
    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        settings.update(conf, "theme", "dark")
    assert conf.read_text() == before
    assert sorted(p.name for p in conf.parent.iterdir()) == ["settings.toml"]


def test_save_creates_the_folder(tmp_path):
    path = tmp_path / "a" / "b" / "settings.toml"
    settings.update(path, "theme", "dark")
    assert settings.load(path).settings.theme == "dark"


# ---- trayburn config --------------------------------------------------------------------------------


def test_config_path(conf, capsys):
    code, out, err = run(capsys, "config", "path")
    assert (code, out.strip(), err) == (0, str(conf), "")
    code, out, _ = run(capsys, "config", "path", "--json")
    assert json.loads(out) == {"path": str(conf)}


def test_config_path_option_wins(conf, tmp_path, capsys):
    other = tmp_path / "other.toml"
    for argv in (["config", "path", "--config", str(other)], ["--config", str(other), "config", "path"]):
        assert run(capsys, *argv)[1].strip() == str(other)


def test_config_set_show_unset(conf, capsys):
    assert run(capsys, "config", "set", "theme", "dark")[0] == 0
    assert run(capsys, "config", "set", "prices.acme-1.input", "1.5")[0] == 0
    code, out, _ = run(capsys, "config", "show", "--json")
    shown = json.loads(out)
    assert code == 0 and shown["path"] == str(conf)
    assert shown["settings"]["theme"] == "dark"
    assert shown["settings"]["prices"] == {"acme-1": {"input": 1.5}}
    assert set(shown["settings"]) == set(settings.KEYS)
    code, out, _ = run(capsys, "config", "show")
    assert 'theme = "dark"' in out
    assert run(capsys, "config", "unset", "theme")[0] == 0
    assert json.loads(run(capsys, "config", "show", "--json")[1])["settings"]["theme"] == "auto"


def test_config_show_lists_warnings(conf, capsys):
    conf.write_text('theme = "purple"\n')
    code, out, _ = run(capsys, "config", "show", "--json")
    assert code == 0 and any("theme" in w for w in json.loads(out)["warnings"])


@pytest.mark.parametrize(
    "argv",
    [
        ["config", "set", "theme", "purple"],
        ["config", "set", "colour", "red"],
        ["config", "set", "theme"],
        ["config", "unset"],
    ],
)
def test_config_errors_are_one_line(conf, capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code != 0 and out == ""
    assert err.startswith("trayburn: ") and err.count("\n") == 1


def test_config_set_on_broken_file_refused(conf, capsys):
    broken = "theme = \n"
    conf.write_text(broken)
    code, out, err = run(capsys, "config", "set", "theme", "dark")
    assert code == 78 and err.count("\n") == 1 and "line 1" in err  # errors.Exit.SETTINGS
    assert conf.read_text() == broken
    code, _, err = run(capsys, "config", "show")
    assert code == 78 and "line 1" in err


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
@pytest.mark.parametrize("umask", [0o022, 0o000, 0o077])
def test_saved_settings_are_private_whatever_the_umask(conf, umask):
    old = os.umask(umask)
    try:
        settings.update(conf, "theme", "dark")  # a new file
        assert conf.stat().st_mode & 0o777 == 0o600
        conf.chmod(0o644)  # as an older trayburn left it
        settings.update(conf, "theme", "light")  # the line edit
        assert conf.stat().st_mode & 0o777 == 0o600
        settings.update(conf, "aliases.x", "gpt-4o")  # the whole rewrite
        assert conf.stat().st_mode & 0o777 == 0o600
    finally:
        os.umask(old)
    assert settings.load(conf).settings.theme == "light"


def test_a_change_from_the_menu_keeps_a_persons_comments_and_layout(tmp_path):
    path = tmp_path / "settings.toml"
    path.write_text(
        "# my trayburn settings\n"
        "refresh_seconds = 60  # a minute is plenty\n"
        "\n"
        '# theme = "dark"   (tried it, too dark)\n'
        "\n"
        "[aliases]\n"
        '"proxy/glm" = "glm-5.2"\n'
    )
    settings.update(path, "refresh_seconds", "15")
    settings.update(path, "daily_budget", "20")
    text = path.read_text()
    assert "# my trayburn settings\n" in text and '# theme = "dark"   (tried it, too dark)' in text
    assert "refresh_seconds = 15\n" in text and "a minute is plenty" not in text  # the line is replaced
    assert text.index("daily_budget = 20.0") < text.index("[aliases]")  # a new key goes above the tables
    loaded = settings.load(path)
    assert (loaded.error, loaded.warnings) == (None, [])
    assert loaded.settings.refresh_seconds == 15 and loaded.settings.daily_budget == 20.0
    assert loaded.settings.aliases == {"proxy/glm": "glm-5.2"}
    settings.update(path, "refresh_seconds", None)  # back to the default: the line goes
    assert "refresh_seconds" not in path.read_text() and "# my trayburn settings" in path.read_text()


# ---- read like a session file: regular files only, never blocking, never unbounded -----------------


def _load_within(path, seconds: float = 10.0):
    """settings.load in a thread that must finish in time (a FIFO opened blocking would hang for ever)."""
    import threading

    box: list = []
    worker = threading.Thread(target=lambda: box.append(settings.load(path)), daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():  # unstick it (a writer releases a blocking open) before failing
        with open(path, "wb"):
            pass
        pytest.fail(f"loading {path} did not finish in {seconds} s")
    return box[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_fifo_as_settings_never_hangs(conf, capsys, monkeypatch, tmp_path, set_tz):
    os.mkfifo(conf)
    loaded = _load_within(conf)
    assert loaded.problem.kind == "not_a_file" and loaded.error == f"{conf} is a named pipe, not a regular file"
    assert loaded.settings == settings.Settings()
    # control: with that settings file, a command still counts the recorded sessions
    set_tz("UTC")
    monkeypatch.setenv("CLINE_DIR", str(copy_corpus(tmp_path / "cline")))
    monkeypatch.setenv("TRAYBURN_STATE_DIR", str(tmp_path / "state"))
    code, out, _ = run(capsys, "today", "--date", "2026-11-30", "--json")
    assert code == 0 and json.loads(out)["calls"] == expected()["totals"]["calls"]
    code, _, err = run(capsys, "config", "set", "theme", "dark")
    assert code == Exit.SETTINGS and "named pipe" in err and err.count("\n") == 1


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_link_to_dev_zero_is_refused_not_read(conf):
    conf.symlink_to("/dev/zero")
    loaded = _load_within(conf)
    assert loaded.problem.kind == "not_a_file" and "a device" in loaded.error


def test_a_huge_file_is_refused_unread(conf):
    with open(conf, "wb") as fh:
        fh.truncate(settings.MAX_BYTES + 1)  # sparse: no disk used
    loaded = settings.load(conf)
    assert loaded.problem.kind == "too_big" and str(conf) in loaded.error and "limit" in loaded.error
    assert loaded.settings == settings.Settings()


def test_a_settings_file_linked_from_elsewhere_is_still_read(conf, tmp_path):
    real = tmp_path / "dotfiles" / "trayburn.toml"
    real.parent.mkdir()
    real.write_text(GOOD)
    conf.symlink_to(real)
    loaded = settings.load(conf)
    assert loaded.error is None and loaded.settings.theme == "dark"


# ---- a settings file that is a symbolic link (stow, chezmoi, home-manager) ----------------------------


def _dotfile(tmp_path, conf, text: str = GOOD, mode: int = 0o644):
    repo = tmp_path / "dotfiles"
    repo.mkdir()
    real = repo / "trayburn.toml"
    real.write_text(text, encoding="utf-8")
    os.chmod(real, mode)
    conf.symlink_to(real)
    return real


def test_config_set_through_a_link_writes_the_file_it_points_to(conf, tmp_path, capsys):
    """The link stays a link and the dotfile it points to is changed (its other lines and its mode kept,
    no temp file left beside it); the control: a plain settings file is changed in place as ever."""
    real = _dotfile(tmp_path, conf)
    code, _, err = run(capsys, "config", "set", "theme", "light")
    assert code == 0, err
    assert conf.is_symlink() and os.readlink(conf) == str(real)
    got = tomllib.loads(real.read_text(encoding="utf-8"))
    assert got["theme"] == "light" and got["refresh_seconds"] == 60 and got["aliases"] == {"my-proxy": "gpt-4o"}
    assert (os.stat(real).st_mode & 0o777) == 0o644
    assert sorted(os.listdir(real.parent)) == ["trayburn.toml"]
    settings.update(conf, "prices.acme-1.input", "2")  # a whole rewrite (tables) goes through the link too
    assert conf.is_symlink() and tomllib.loads(real.read_text(encoding="utf-8"))["prices"]["acme-1"]["input"] == 2
    plain = tmp_path / "plain.toml"
    plain.write_text(GOOD, encoding="utf-8")
    settings.update(plain, "theme", "light")
    assert tomllib.loads(plain.read_text(encoding="utf-8"))["theme"] == "light"


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_config_set_through_a_link_to_another_user_s_file_refuses(conf, tmp_path, capsys):
    real = _dotfile(tmp_path, conf)
    os.chown(real, 65534, 65534)
    before = real.read_bytes()
    code, _, err = run(capsys, "config", "set", "theme", "light")
    assert code != 0 and "belongs to another user; trayburn will not write to it" in err, err
    assert "Traceback" not in err
    assert conf.is_symlink() and real.read_bytes() == before


def test_config_set_through_a_dangling_link_refuses_and_creates_nothing(conf, tmp_path, capsys):
    conf.symlink_to(tmp_path / "gone.toml")
    code, _, err = run(capsys, "config", "set", "theme", "light")
    assert code != 0 and "which does not exist; create that file or remove the link" in err, err
    assert conf.is_symlink() and not (tmp_path / "gone.toml").exists()


# ---- the declaration: each setting once, everything else derived -------------------------------------------------

# A value other than the default, as typed on the command line, per kind of setting (a new kind needs one here)
TYPED = {
    setting_kinds.Text: "~/somewhere",
    setting_kinds.Whole: "60",
    setting_kinds.Number: "$2.50",
    setting_kinds.Currency: "eur",
    setting_kinds.Flag: "yes",  # (the opposite of a default true: below)
    setting_kinds.Choice: "dark",
    setting_kinds.Folders: os.pathsep.join(["~/a", "/b"]),
}


@pytest.mark.parametrize("key", [k for k in settings.KEYS if not settings.SETTINGS[k].kind.table])
def test_every_setting_is_set_read_back_and_unset_from_its_declaration(conf, key):
    """What `config set` writes reads back as the declaration's kind makes it; unset, its default returns."""
    spec = settings.SETTINGS[key]
    typed = "off" if spec.default is True else TYPED[type(spec.kind)]
    settings.update(conf, key, typed)
    value = getattr(settings.load(conf).settings, key)
    assert value == spec.kind.check(spec.kind.parse(key, typed)) != spec.default
    settings.update(conf, key, None)
    assert getattr(settings.load(conf).settings, key) == spec.default
    assert key not in tomllib.loads(conf.read_text())


def test_the_defaults_pass_their_own_checks():
    for key, spec in settings.SETTINGS.items():
        if spec.default is not None:
            assert spec.kind.check(spec.fresh()) == spec.default, key


def test_each_editor_app_brings_its_two_settings():
    from trayburn.sources.editor_tasks.places import APPS

    for app in APPS:
        assert (settings.SETTINGS[app.enabled_key].default, settings.SETTINGS[app.dirs_key].default) == (True, [])
    assert settings.KEYS[-2 * len(APPS) :] == (*(a.enabled_key for a in APPS), *(a.dirs_key for a in APPS))


def test_the_menu_offers_what_the_declaration_allows():
    assert settings.menu_choices("theme") == ("auto", "light", "dark")
    assert settings.menu_choices("refresh_seconds") == (15, 30, 60, 300)
    for key, spec in settings.SETTINGS.items():
        assert all(spec.kind.check(c) == c for c in spec.menu_choices), key
        assert not spec.menu_choices or settings.MENU in spec.where, key


def test_a_setting_kept_to_the_file_is_refused_by_config_set(conf, monkeypatch):

    spec = settings.SETTINGS["machine_name"]
    monkeypatch.setitem(settings.SETTINGS, "machine_name", spec._replace(where=(settings.FILE,)))
    with pytest.raises(settings.SettingsError, match="settings file only"):
        settings.update(conf, "machine_name", "laptop")
    assert not conf.exists()
