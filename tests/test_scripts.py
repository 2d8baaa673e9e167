"""scripts/setup and scripts/run never trap a person: offline once set up, a message (never a hang
or a sudo prompt) without the rights to install, a clear refusal of an old Python. The real
scripts, run in a real shell; stand-ins only for the system tools a test cannot change (dpkg's
answer, an old python)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
STAMP = ROOT / ".venv" / ".trayburn-setup"
posix = pytest.mark.skipif(os.name != "posix", reason="the scripts are bash")


def complete() -> None:
    if not STAMP.is_file():
        pytest.skip("this checkout's .venv was not made by ./scripts/setup (run it first)")


def stand_in(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def setup(*args: str, env: dict[str, str] | None = None, user: list[str] | None = None):
    return subprocess.run(
        [*(user or []), "bash", str(ROOT / "scripts" / "setup"), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
    )


@posix
def test_once_set_up_nothing_is_downloaded(tmp_path):
    """With every index unreachable, setup still succeeds at once: it calls no pip at all."""
    complete()
    offline = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(tmp_path), "PIP_CONFIG_FILE": os.devnull}
    setup(env=offline)  # the first run in this HOME links the trayburn command and says so, once
    for args in ((), ("--test",)):
        done = setup(*args, env=offline)
        assert (done.returncode, done.stderr) == (0, ""), done.stderr
    run = subprocess.run(
        [str(ROOT / "scripts" / "run"), "--version"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **offline},
    )
    assert run.returncode == 0 and run.stdout.startswith("trayburn "), run.stderr


@posix
def test_python_older_than_311_is_refused_with_a_message(tmp_path):
    old = stand_in(
        tmp_path / "bin",
        "python3.10",
        'case "$1" in -V) echo "Python 3.10.12";; -c) exit 1;; *) exit 2;; esac',
    )
    done = setup(env={"PYTHON": str(old)})
    assert done.returncode == 1
    assert "needs Python 3.11 or newer" in done.stderr and "Python 3.10.12" in done.stderr
    done = setup(env={"PYTHON": str(tmp_path / "no-such-python")})
    assert done.returncode == 1 and "install Python 3.11 or newer" in done.stderr


def copy_of_the_scripts(tmp_path: Path) -> Path:
    """scripts/ and pyproject.toml in a folder of their own: setup makes its .venv there, not here."""
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copytree(ROOT / "scripts", repo / "scripts")
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    return repo


NO_INDEX = {"PIP_NO_INDEX": "1", "PIP_CONFIG_FILE": os.devnull, "PIP_FIND_LINKS": os.devnull}


@pytest.mark.slow  # a real scripts/setup run into a fresh .venv (pip, no index): seconds
@posix
def test_without_the_rights_to_install_it_prints_the_apt_command_once(tmp_path):
    """A non-root user who cannot sudo, with a package missing: the command to run is printed once
    (a second run says nothing about it), nothing waits for a password, and pip's failure (no index
    here) is named as the network, in one line, with its log's path; pip's own output is in the log."""
    if shutil.which("apt-get") is None or shutil.which("dpkg-query") is None:
        pytest.skip("a Debian-family system (apt-get and dpkg-query)")
    bin_dir = tmp_path / "bin"
    query = shutil.which("dpkg-query")
    stand_in(bin_dir, "dpkg-query", f"{query} \"$@\" | grep -v '^xvfb '")  # xvfb "missing"
    stand_in(bin_dir, "id", 'if [ "$1" = "-u" ]; then echo 1000; else exec /usr/bin/id "$@"; fi')  # not root
    stand_in(bin_dir, "sudo", "echo 'sudo: a password is required' >&2; exit 1")  # may not sudo
    repo = copy_of_the_scripts(tmp_path)
    env = {**os.environ, **NO_INDEX, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHON": sys.executable}

    def setup_there():
        return subprocess.run(
            ["bash", str(repo / "scripts" / "setup"), "--test"],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
            stdin=subprocess.DEVNULL,
        )

    first = setup_there()
    assert first.returncode == 1
    assert "missing system packages: xvfb" in first.stderr
    assert "run as an administrator:  sudo apt-get install xvfb" in first.stderr
    assert "no network, or the package index is unreachable" in first.stderr
    assert "build/setup.log" in first.stderr
    assert len(first.stderr.splitlines()) <= 5, first.stderr
    assert "pip" in (repo / "build" / "setup.log").read_text()
    second = setup_there()
    assert second.returncode == 1 and "xvfb" not in second.stderr, second.stderr


@pytest.mark.slow  # a real scripts/setup run into a fresh .venv (pip, no index): seconds
@posix
@pytest.mark.skipif(sys.base_prefix == "/usr", reason="needs a Python of its own (pyenv, uv, conda), not Debian's")
def test_a_python_of_its_own_is_not_sent_to_apt_for_itself(tmp_path):
    """PYTHON=a pyenv/uv/conda Python: Debian's python3.X-dev or -tk would not give it headers or
    Tk (and the archive may not have that version), so no python package is asked for, even with
    dpkg saying that nothing at all is installed."""
    if shutil.which("apt-get") is None or shutil.which("dpkg-query") is None:
        pytest.skip("a Debian-family system (apt-get and dpkg-query)")
    bin_dir = tmp_path / "bin"
    stand_in(bin_dir, "dpkg-query", "exit 1")  # nothing installed
    stand_in(bin_dir, "id", 'if [ "$1" = "-u" ]; then echo 1000; else exec /usr/bin/id "$@"; fi')  # not root
    stand_in(bin_dir, "sudo", "echo 'sudo: a password is required' >&2; exit 1")  # may not sudo
    repo = copy_of_the_scripts(tmp_path)
    env = {**os.environ, **NO_INDEX, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHON": sys.executable}
    done = subprocess.run(
        ["bash", str(repo / "scripts" / "setup")],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    missing = next(line for line in done.stderr.splitlines() if "missing system packages:" in line)
    assert "libgirepository1.0-dev" in missing and "python" not in missing, done.stderr


@pytest.mark.slow  # a real scripts/setup run into a fresh .venv (pip, no index): seconds
@posix
def test_without_apt_it_says_what_is_needed_and_falls_back_to_xorg(tmp_path):
    """No apt-get and no PyGObject headers: the packages are named, the X11 backend is chosen,
    and pip is asked for trayburn without the gtk extra (it fails here only because the test
    gives it no index: that failure shows which extras were asked for)."""
    tools = tmp_path / "tools"
    tools.mkdir()
    for tool in (
        "bash",
        "env",
        "id",
        "rm",
        "cut",
        "cat",
        "dirname",
        "sh",
        "mkdir",
        "ls",
        "ln",
        "cp",
        "sha256sum",
        "grep",
    ):
        found = shutil.which(tool)
        if found:
            (tools / tool).symlink_to(found)
    repo = copy_of_the_scripts(tmp_path)
    done = subprocess.run(
        ["bash", str(repo / "scripts" / "setup")],
        capture_output=True,
        text=True,
        timeout=120,
        env={
            "PATH": str(tools),
            "PYTHON": sys.executable,
            "HOME": str(tmp_path),
            "PIP_NO_INDEX": "1",
            "PIP_FIND_LINKS": str(tmp_path),
            "PIP_CONFIG_FILE": os.devnull,
        },
        stdin=subprocess.DEVNULL,
    )
    assert "no apt-get here" in done.stderr and "gobject-introspection" in done.stderr
    assert "python3-tk" in done.stderr  # the Debian names, for reference
    assert "X11 (xorg) backend" in done.stderr
    assert done.returncode != 0 and not (repo / ".venv" / ".trayburn-setup").exists()  # no index: no stamp
    assert "[gtk" not in done.stderr


def test_build_system_can_read_the_license_field():
    """PEP 639's `license = "MIT"` needs setuptools 77 or newer; the LICENSE file is there."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert data["project"]["license"] == "MIT"
    assert "setuptools>=77" in data["build-system"]["requires"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")


def checkout(tmp_path: Path) -> Path:
    """A copy of this checkout's scripts and pyproject.toml whose .venv is complete (its stamp matches, as after a
    first ./scripts/setup): setup takes its fast path. Its .venv/bin/trayburn is a stand-in that names itself."""
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "scripts", repo / "scripts")
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    venv = repo / ".venv" / "bin"
    venv.mkdir(parents=True)
    stand_in(venv, "python", 'exec python3 "$@"')
    stand_in(venv, "trayburn", 'echo "trayburn of $(readlink -f "$0")"')
    digest = subprocess.run(
        ["bash", "-c", "cat pyproject.toml scripts/setup | sha256sum | cut -c1-16"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (repo / ".venv" / ".trayburn-setup").write_text(f"{digest}:python3 0 1\n")
    return repo


def run_setup(repo: Path, home: Path, path: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(home), "PATH": path}
    env.pop("TRAYBURN_BIN_DIR", None)
    return subprocess.run(
        ["bash", str(repo / "scripts" / "setup")], capture_output=True, text=True, timeout=60, env=env
    )


@posix
def test_after_setup_the_trayburn_command_is_on_the_path(tmp_path):
    """~/.local/bin on PATH (as Debian's and Ubuntu's login puts it once it exists): setup links the command there,
    says so in one line, and `trayburn` then runs this checkout's; a second run says nothing."""
    repo, home = checkout(tmp_path), tmp_path / "home"
    bin_dir = home / ".local" / "bin"
    path = f"{bin_dir}:{os.environ['PATH']}"
    done = run_setup(repo, home, path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"trayburn setup: the trayburn command is on your PATH: {bin_dir / 'trayburn'} (try: trayburn today)"
    ]
    ran = subprocess.run(["trayburn"], capture_output=True, text=True, env={**os.environ, "PATH": path}, timeout=30)
    assert ran.stdout.strip() == f"trayburn of {repo / '.venv' / 'bin' / 'trayburn'}"
    again = run_setup(repo, home, path)
    assert (again.returncode, again.stderr) == (0, "")


@posix
def test_when_the_folder_is_not_on_the_path_setup_says_the_exact_line(tmp_path):
    repo, home = checkout(tmp_path), tmp_path / "home"
    done = run_setup(repo, home, os.environ["PATH"])
    line = done.stderr.strip().splitlines()[-1]
    assert "not on your PATH yet" in line, done.stderr
    export = line.split(": ", 2)[-1].split(" (")[0]  # export PATH="/…/.local/bin:$PATH"
    assert export == f'export PATH="{home / ".local" / "bin"}:$PATH"', line
    ran = subprocess.run(["bash", "-c", f"{export}; trayburn"], capture_output=True, text=True, timeout=30)
    assert ran.stdout.startswith("trayburn of "), ran.stderr


# ~/.profile as Debian 13 ships it: from /etc/skel for a user (adds ~/.local/bin at login once it exists), from
# base-files for root (does not).
SKEL_PROFILE = """if [ -n "$BASH_VERSION" ]; then
    if [ -f "$HOME/.bashrc" ]; then
\t. "$HOME/.bashrc"
    fi
fi
if [ -d "$HOME/bin" ] ; then
    PATH="$HOME/bin:$PATH"
fi
if [ -d "$HOME/.local/bin" ] ; then
    PATH="$HOME/.local/bin:$PATH"
fi
"""
ROOT_PROFILE = """# ~/.profile: executed by Bourne-compatible login shells.

if [ "$BASH" ]; then
  if [ -f ~/.bashrc ]; then
    . ~/.bashrc
  fi
fi
"""


@posix
@pytest.mark.parametrize(
    ("profile", "promise"),
    [
        (SKEL_PROFILE, "your ~/.profile adds it at your next login"),
        (ROOT_PROFILE, "to keep it after this shell, add that line to ~/.profile"),
        (None, "to keep it after this shell, add that line to ~/.profile"),
    ],
    ids=["user", "root", "no-profile"],
)
def test_setup_says_whether_the_next_login_puts_the_folder_on_the_path(tmp_path, profile, promise):
    """Root's ~/.profile on Debian does not add ~/.local/bin: setup promised "at your next login" and `trayburn`
    stayed "command not found" for a newcomer working as root. The promise is made only when a login profile
    adds the folder, and a login shell then finds the command."""
    repo, home = checkout(tmp_path), tmp_path / "home"
    home.mkdir()
    if profile is not None:
        (home / ".profile").write_text(profile)
    done = run_setup(repo, home, "/usr/bin:/bin")
    line = done.stderr.strip().splitlines()[-1]
    assert line.endswith(f"({promise})"), line
    login = subprocess.run(
        ["bash", "-lc", "command -v trayburn"],
        capture_output=True,
        text=True,
        timeout=30,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
    )
    found = login.stdout.strip() == str(home / ".local" / "bin" / "trayburn")
    assert found == (profile is SKEL_PROFILE), (login.stdout, login.stderr)


@posix
def test_another_trayburn_in_the_folder_is_left_alone(tmp_path):
    repo, home = checkout(tmp_path), tmp_path / "home"
    bin_dir = home / ".local" / "bin"
    bin_dir.mkdir(parents=True)
    theirs = stand_in(bin_dir, "trayburn", "echo pipx's trayburn")
    done = run_setup(repo, home, f"{bin_dir}:{os.environ['PATH']}")
    assert done.returncode == 0 and done.stderr == ""  # the fast path stays quiet
    assert theirs.read_text().endswith("echo pipx's trayburn\n") and not theirs.is_symlink()
