"""What the command line says when a person gets it slightly wrong (issue 33): a bad choice in words, not
"argument action"; each command's help with a description; a mistyped --config path refused with a clear line;
`trayburn demo` without a display pointing at `demo --json`. The real `trayburn` entry point, in-process or as a
child process."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from trayburn import cli


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "argv, said",
    [
        (("config", "bogus"), "trayburn: 'bogus' is not one of: path, show, set, unset (see `trayburn config --help`)"),
        (("autostart", "maybe"), "trayburn: 'maybe' is not one of: on, off, status (see `trayburn autostart --help`)"),
        (("report", "--by", "colour"), "trayburn: --by: 'colour' is not one of: day, week, month, project, model, "),
    ],
)
def test_a_bad_choice_is_said_in_words(capsys, argv, said):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith(said) and "argument" not in err and len(err.splitlines()) == 1, err


@pytest.mark.parametrize("command", sorted(cli.GRAMMAR))
def test_every_commands_help_has_its_description(capsys, command):
    code, out, _ = run(capsys, command, "--help")
    text = cli.GRAMMAR[command][0]
    assert code == 0 and f"\n{text[:1].upper()}{text[1:]}.\n" in out, out


def test_a_mistyped_config_path_is_an_error_with_a_clear_line(capsys, tmp_path):
    missing = tmp_path / "setings.toml"  # (a typo)
    code, out, err = run(capsys, "--config", str(missing), "today")
    assert code == 2 and out == ""
    assert err.startswith(f"trayburn: --config {missing}: no such settings file"), err
    (tmp_path / "settings.toml").write_text("refresh_seconds = 30\n")
    code, _, err = run(capsys, "--config", str(tmp_path / "settings.toml"), "today")
    assert (code, err) == (0, "")
    code, _, err = run(capsys, "config", "set", "refresh_seconds", "60", "--config", str(tmp_path / "new.toml"))
    assert code == 0 and "refresh_seconds = 60" in (tmp_path / "new.toml").read_text()  # `config` makes it


def test_the_demo_without_a_display_suggests_its_json(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "PYSTRAY_BACKEND")}
    done = subprocess.run(
        [sys.executable, "-P", "-m", "trayburn", "demo"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 4 and "`trayburn demo --json`" in done.stderr, done.stderr
    assert "trayburn today" not in done.stderr
