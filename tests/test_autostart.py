"""Start-at-login: the Linux entry for real in a temp HOME; macOS and Windows by what they would write."""

from __future__ import annotations

import plistlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from trayburn.autostart import (
    AutostartStatus,
    FreedesktopAutostart,
    LaunchdAutostart,
    WindowsAutostart,
    autostart_for,
    exec_value,
    launch_command,
    parse_exec,
)

SPACED = ["/home/a user/My Apps/trayburn", "--flag"]
AWKWARD = ['/opt/odd $dir "q" \\b `x`/trayburn', "100%", "a=b", "it's", "~/x", "", "é"]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def linux(home: Path, tmp_path: Path) -> FreedesktopAutostart:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    entry = autostart_for("linux", home=home, env=env, command=["/usr/bin/trayburn"])
    assert isinstance(entry, FreedesktopAutostart)
    return entry


def validate(path: Path) -> None:
    tool = shutil.which("desktop-file-validate")
    if tool is None:
        pytest.skip("desktop-file-validate not installed (apt package desktop-file-utils)")
    result = subprocess.run([tool, str(path)], capture_output=True, text=True)
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr


# --- choosing an implementation ----------------------------------------------------------------


def test_platforms_map_to_implementations(home: Path) -> None:
    assert isinstance(autostart_for("linux", home=home, env={}), FreedesktopAutostart)
    assert isinstance(autostart_for("freebsd14", home=home, env={}), FreedesktopAutostart)
    assert isinstance(autostart_for("darwin", home=home, env={}), LaunchdAutostart)
    assert isinstance(autostart_for("win32", home=home, env={}, run_key=FakeRunKey()), WindowsAutostart)


def test_xdg_config_home_default_and_relative_value_ignored(home: Path) -> None:
    expected = home / ".config" / "autostart" / "trayburn.desktop"
    assert autostart_for("linux", home=home, env={}).location == str(expected)
    relative = autostart_for("linux", home=home, env={"XDG_CONFIG_HOME": "rel/dir"})
    assert relative.location == str(expected)


# --- launch_command ------------------------------------------------------------------------------


def test_launch_command_frozen(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "dist" / "trayburn"))
    assert launch_command() == [str(tmp_path / "dist" / "trayburn")]


def test_launch_command_prefers_script_beside_python(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "trayburn").write_text("#!/bin/sh\n")
    monkeypatch.setattr(sys, "executable", str(bin_dir / "python"))
    assert launch_command() == [str(bin_dir / "trayburn")]


def test_launch_command_falls_back_to_module(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    assert launch_command() == [str(tmp_path / "python"), "-P", "-m", "trayburn"]


# --- Linux, for real ------------------------------------------------------------------------------


def test_linux_enable_validate_status_disable(linux: FreedesktopAutostart) -> None:
    assert linux.status().enabled is False
    linux.enable()
    path = Path(linux.location)
    assert path.is_file()
    validate(path)
    status = linux.status()
    assert status == AutostartStatus(True, str(path), "starts: /usr/bin/trayburn")
    linux.disable()
    assert not path.exists()
    assert linux.status() == AutostartStatus(False, str(path), "no autostart entry")
    linux.disable()  # already gone: no error


def test_linux_enable_is_idempotent_and_leaves_no_temp_files(linux: FreedesktopAutostart) -> None:
    linux.enable()
    first = Path(linux.location).read_text()
    linux.enable()
    assert Path(linux.location).read_text() == first == linux.render()
    assert [p.name for p in Path(linux.location).parent.iterdir()] == ["trayburn.desktop"]


def test_linux_entry_has_required_keys(linux: FreedesktopAutostart) -> None:
    text = linux.render()
    for line in [
        "[Desktop Entry]",
        "Type=Application",
        "Name=trayburn",
        "Exec=/usr/bin/trayburn",
        "Icon=trayburn",
        "Terminal=false",
        "Categories=Utility;",
        "X-GNOME-Autostart-enabled=true",
    ]:
        assert line in text.splitlines()
    assert re.search(r"^Comment=.+", text, re.MULTILINE)


@pytest.mark.parametrize("command", [SPACED, AWKWARD], ids=["spaces", "reserved-characters"])
def test_linux_exec_quoting_round_trips_and_validates(home: Path, command: list[str]) -> None:
    entry = autostart_for("linux", home=home, env={}, command=command)
    entry.enable()
    validate(Path(entry.location))
    value = exec_line(entry.render())
    assert spec_split(value) == command
    assert parse_exec(value) == command
    assert entry.status().detail == "starts: " + subprocess.list2cmdline(command)


def test_linux_exec_with_spaces_is_quoted_as_one_argument() -> None:
    assert exec_value(SPACED) == '"/home/a user/My Apps/trayburn" --flag'


def test_linux_exec_agrees_with_glib(home: Path) -> None:
    glib = pytest.importorskip("gi.repository.GLib")
    entry = autostart_for("linux", home=home, env={}, command=AWKWARD)
    entry.enable()
    keyfile = glib.KeyFile()
    keyfile.load_from_file(entry.location, glib.KeyFileFlags.NONE)
    value = keyfile.get_string("Desktop Entry", "Exec")
    # GLib expands %-codes first, then splits with g_shell_parse_argv.
    ok, argv = glib.shell_parse_argv(value.replace("%%", "%"))
    assert ok and argv == AWKWARD


def test_linux_status_respects_hidden_and_gnome_flag(linux: FreedesktopAutostart) -> None:
    path = Path(linux.location)
    path.parent.mkdir(parents=True)
    path.write_text(linux.render() + "Hidden=true\n")
    assert linux.status().enabled is False
    flag = "X-GNOME-Autostart-enabled="
    path.write_text(linux.render().replace(flag + "true", flag + "false"))
    assert linux.status().enabled is False


def test_linux_status_names_another_install(linux: FreedesktopAutostart, tmp_path: Path) -> None:
    linux.enable()
    other = FreedesktopAutostart(tmp_path / "xdg", command=["/other/trayburn"])
    status = other.status()
    assert status.enabled is True
    assert "/usr/bin/trayburn" in status.detail
    assert "this install would start: /other/trayburn" in status.detail


def exec_line(text: str) -> str:
    (value,) = [line[len("Exec=") :] for line in text.splitlines() if line.startswith("Exec=")]
    return value


def spec_split(value: str) -> list[str]:
    """The Desktop Entry spec's Exec parsing, written out independently of trayburn's."""
    escapes = {"s": " ", "n": "\n", "t": "\t", "r": "\r", "\\": "\\"}
    text, i = "", 0
    while i < len(value):  # 1. the string-value escapes
        if value[i] == "\\" and i + 1 < len(value) and value[i + 1] in escapes:
            text, i = text + escapes[value[i + 1]], i + 2
        else:
            text, i = text + value[i], i + 1
    args: list[str] = []
    word: str | None = None
    quoted, i = False, 0
    while i < len(text):  # 2. the quoting rules
        c = text[i]
        if quoted and c == "\\" and text[i + 1] in '"`$\\':
            word, i = word + text[i + 1], i + 2
            continue
        if c == '"':
            quoted, word = not quoted, word or ""
        elif c == " " and not quoted:
            if word is not None:
                args.append(word)
            word = None
        else:
            word = (word or "") + c
        i += 1
    assert not quoted, "unterminated quote"
    if word is not None:
        args.append(word)
    return [a.replace("%%", "%") for a in args]  # 3. the one field code we use


# --- macOS, by content (and the file round trip, which works anywhere) ---------------------------


def test_macos_plist_content(home: Path) -> None:
    agent = autostart_for("darwin", home=home, env={}, command=SPACED)
    parsed = plistlib.loads(agent.render().encode())
    assert parsed == {
        "Label": "dev.trayburn.tray",
        "ProgramArguments": SPACED,
        "RunAtLoad": True,
        "ProcessType": "Interactive",
        "KeepAlive": False,
    }
    assert agent.location == str(home / "Library" / "LaunchAgents" / "dev.trayburn.tray.plist")


def test_macos_enable_status_disable(home: Path) -> None:
    agent = autostart_for("darwin", home=home, env={}, command=SPACED)
    assert agent.status().enabled is False
    agent.enable()
    agent.enable()
    assert plistlib.loads(Path(agent.location).read_bytes())["ProgramArguments"] == SPACED
    detail = "starts: " + subprocess.list2cmdline(SPACED)
    assert agent.status() == AutostartStatus(True, agent.location, detail)
    agent.disable()
    assert agent.status().enabled is False and not Path(agent.location).exists()


def test_macos_status_on_a_broken_plist(home: Path) -> None:
    agent = autostart_for("darwin", home=home, env={}, command=SPACED)
    Path(agent.location).parent.mkdir(parents=True)
    Path(agent.location).write_text("not a plist")
    status = agent.status()
    assert status.enabled is False and status.detail.startswith("unreadable")


# --- Windows, through a fake Run key ---------------------------------------------------------------


class FakeRunKey:
    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    def get(self, name: str) -> str | None:
        return self.values.get(name)

    def set(self, name: str, value: str) -> None:
        self.values[name] = value

    def delete(self, name: str) -> None:
        self.values.pop(name, None)


WINDOWS_COMMAND = [r"C:\Users\A User\AppData\Local\Programs\trayburn\trayburn.exe", 'say "hi"', "trail\\"]


def test_windows_value_round_trips() -> None:
    entry = WindowsAutostart(FakeRunKey(), command=WINDOWS_COMMAND)
    value = entry.render()
    assert value.startswith('"C:\\Users\\A User\\')
    assert windows_split(value) == WINDOWS_COMMAND


def test_windows_enable_status_disable() -> None:
    key = FakeRunKey()
    entry = autostart_for("win32", run_key=key, command=WINDOWS_COMMAND)
    assert entry.status().enabled is False
    entry.enable()
    entry.enable()
    assert key.values == {"trayburn": entry.render()}
    status = entry.status()
    assert status.enabled and status.location.endswith(r"CurrentVersion\Run\trayburn")
    entry.disable()
    assert key.values == {} and entry.status().enabled is False


def windows_split(line: str) -> list[str]:
    """The Microsoft C runtime's argv rules (what CommandLineToArgvW does after the program name)."""
    args: list[str] = []
    word, quoted, slashes, started = "", False, 0, False
    for c in line + " ":
        if c == "\\":
            slashes += 1
            continue
        if c == '"':
            word += "\\" * (slashes // 2)
            if slashes % 2:
                word += '"'
            else:
                quoted = not quoted
            slashes, started = 0, True
            continue
        word += "\\" * slashes
        slashes = 0
        if c in " \t" and not quoted:
            if started or word:
                args.append(word)
            word, started = "", False
        else:
            word += c
            started = True
    return args
