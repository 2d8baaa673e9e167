"""trayburn's own files are private whatever the umask, never written through a planted link, and
never kept in a folder other users can write. Real files and modes; a real non-root run (as
`nobody`, through setpriv) where the machine allows it."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from helpers.corpus import copy_corpus, expected, set_tz  # noqa: F401

from trayburn import autostart, cli, demo, files, settings, system
from trayburn.system import InstanceLock
from trayburn.tray import host
from trayburn.tray.app import TrayApp

ROOT = Path(__file__).resolve().parent.parent
posix = pytest.mark.skipif(os.name != "posix", reason="file modes and O_NOFOLLOW are POSIX")
UMASKS = [0o000, 0o002, 0o022, 0o077]
PRECIOUS = b"someone else's file\n"
AS_NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


def mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


@pytest.fixture
def umask():
    """umask(value) for this test only."""
    old = os.umask(0o022)
    os.umask(old)
    yield lambda value: os.umask(value)
    os.umask(old)


@pytest.fixture
def victim(tmp_path) -> Path:
    """A file outside trayburn's folders that a planted link points at: it must never change."""
    path = tmp_path / "elsewhere" / "precious.txt"
    path.parent.mkdir()
    path.write_bytes(PRECIOUS)
    return path


# ---- modes, whatever the umask ----------------------------------------------------------------------


@posix
@pytest.mark.parametrize("value", UMASKS, ids=[f"umask{u:03o}" for u in UMASKS])
def test_folders_0700_and_files_0600_whatever_the_umask(tmp_path, umask, value):
    umask(value)
    state = files.private_dir(tmp_path / "new" / "state")
    assert mode(state) == 0o700
    fd = files.open_private(state / "tray.lock", os.O_RDWR | os.O_CREAT)
    os.close(fd)
    files.atomic_write(state / "notified.json", b"{}")
    assert mode(state / "tray.lock") == mode(state / "notified.json") == 0o600
    settings.save(tmp_path / "config" / "settings.toml", settings.Settings(theme="dark"))
    assert mode(tmp_path / "config" / "settings.toml") == 0o600 and mode(tmp_path / "config") == 0o700
    entry = autostart.FreedesktopAutostart(tmp_path / "xdg", command=["trayburn"])
    entry.enable()
    assert mode(Path(entry.location)) == 0o600 and entry.status().enabled


@posix
def test_an_older_trayburns_loose_files_are_tightened(tmp_path):
    state = tmp_path / "state"
    state.mkdir(mode=0o755)
    state.chmod(0o755)
    (state / "tray.lock").write_text("123")
    (state / "tray.lock").chmod(0o644)
    InstanceLock(state / "tray.lock").acquire().release()
    assert (mode(state), mode(state / "tray.lock")) == (0o700, 0o600)


@posix
def test_the_log_and_its_rotations_are_private(tmp_path, umask):
    umask(0o000)
    path = system.setup(log_dir=tmp_path / "log")
    try:
        handler = logging.getLogger().handlers[0]
        handler.maxBytes = 200  # rotate after a line or two
        for i in range(10):
            logging.getLogger("trayburn.test").info("line %d %s", i, "x" * 80)
        handler.flush()
    finally:
        logging.getLogger().handlers[0].close()
        logging.getLogger().handlers[:] = []
    files = sorted(p.name for p in path.parent.iterdir())
    assert files == ["trayburn.log", "trayburn.log.1", "trayburn.log.2", "trayburn.log.3"]
    assert {mode(path.parent / f) for f in files} == {0o600} and mode(path.parent) == 0o700
    assert "line 9" in path.read_text()


# ---- planted links are refused, never followed ---------------------------------------------------------


@posix
def test_a_link_planted_as_the_lock_is_refused_not_truncated(tmp_path, victim):
    state = files.private_dir(tmp_path / "state")
    (state / "tray.lock").symlink_to(victim)
    with pytest.raises(files.Refused) as caught:
        InstanceLock(state / "tray.lock").acquire()
    assert caught.value.kind == "link" and "symbolic link" in str(caught.value)
    assert victim.read_bytes() == PRECIOUS


@posix
def test_a_link_planted_as_the_log_is_refused_and_logging_goes_on(tmp_path, victim, capsys):
    folder = files.private_dir(tmp_path / "log")
    (folder / "trayburn.log").symlink_to(victim)
    try:
        system.setup(log_dir=folder)
        logging.getLogger("trayburn.test").warning("still logging")
        logging.getLogger().handlers[0].flush()
    finally:
        logging.getLogger().handlers[:] = []
    err = capsys.readouterr().err
    assert "cannot write the log" in err and "symbolic link" in err and "still logging" in err
    assert victim.read_bytes() == PRECIOUS


@posix
def test_a_link_planted_as_a_written_file_is_replaced_not_followed(tmp_path, victim):
    """trayburn's own state files. (The settings file is the person's dotfile: a link there is written
    through when it points to a file of theirs, refused otherwise: test_settings.py.)"""
    path = tmp_path / "state" / "notified.json"
    path.parent.mkdir(exist_ok=True)
    path.symlink_to(victim)
    (tmp_path / "settings.toml").symlink_to(victim)
    assert files.read_file(tmp_path / "settings.toml", 1000) == PRECIOUS  # reading follows (dotfiles)
    with pytest.raises(files.Refused, match="symbolic link"):
        files.read_file(path, 1000, follow=False)
    files.atomic_write(path, b"{}")
    assert victim.read_bytes() == PRECIOUS and not path.is_symlink()


@posix
def test_the_trays_notification_state_never_writes_through_a_link(tmp_path, victim, monkeypatch):
    """The tray's budget notice, with notified.json planted as a link: the tray notifies, the link's
    target is untouched, and the day's figures are those of the recorded sessions (the control)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for var in ("CLINE_DIR", "CLINE_DATA_DIR", "CLINE_SESSION_DATA_DIR"):
        monkeypatch.delenv(var, raising=False)
    config, state = demo.prepare(tmp_path / "demo"), files.private_dir(tmp_path / "state")
    (state / "notified.json").symlink_to(victim)
    app = TrayApp(_engine(config, state), host.load_pystray("dummy"), host.capabilities("dummy"))
    app.tick()
    assert app.engine.day().calls == expected()["totals"]["calls"]
    app._notify_budget(dataclasses.replace(app.view, budget_level=80))
    assert victim.read_bytes() == PRECIOUS
    assert json.loads((state / "notified.json").read_text()) == {_today(): [80]}


def _engine(config: Path, state: Path):
    from trayburn.engine import Engine

    return Engine(config, state)


def _today() -> str:
    from datetime import date

    return date.today().isoformat()


# ---- a folder other users can write ------------------------------------------------------------------


def _nobody_can_run() -> str | None:
    """Why a run as `nobody` is impossible here, or None."""
    if os.name != "posix" or os.geteuid() != 0:
        return "needs root to switch to nobody (the non-root behaviour is covered by the tests above)"
    if shutil.which("setpriv") is None:
        return "setpriv not installed (util-linux)"
    probe = subprocess.run(
        [*AS_NOBODY, sys.executable, "-c", "import trayburn"],
        cwd="/",
        capture_output=True,
        env={"PYTHONPATH": str(ROOT)},
    )
    return None if probe.returncode == 0 else f"nobody cannot run this checkout's python: {probe.stderr[-200:]!r}"


@posix
def test_a_state_folder_others_can_write_is_refused(tmp_path, capsys, set_tz):
    """Owned by someone else and writable by all (as /tmp is): refused with a message, by the tray's
    lock and by the demo; and the figures of a private folder beside it are still right."""
    if os.geteuid() != 0:
        shared = Path("/tmp")  # root's and world-writable on every POSIX system
        if shared.stat().st_uid == os.geteuid() or not shared.stat().st_mode & 0o002:
            pytest.skip("needs a world-writable folder owned by another user")
    else:
        shared = tmp_path / "shared"
        shared.mkdir()
        os.chown(shared, 65534, 65534)
        shared.chmod(0o1777)
    with pytest.raises(files.Refused) as caught:
        InstanceLock(shared / "tray.lock").acquire()
    assert caught.value.kind == "not_private" and "can be written by other users" in str(caught.value)
    assert not (shared / "tray.lock").exists()
    code, _, err = _cli(capsys, "demo", "--json", "--state-dir", str(shared))
    assert code == 1 and "can be written by other users" in err and err.count("\n") == 1
    set_tz("UTC")
    code, out, _ = _cli(capsys, "demo", "--json", "--state-dir", str(tmp_path / "mine"))
    assert code == 0 and json.loads(out)["calls"] == expected()["totals"]["calls"]


def _cli(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def nobody_home():
    """A folder of nobody's in the system temp dir (pytest's own is root's, 0700)."""
    why = _nobody_can_run()
    if why:
        pytest.skip(why)
    base = Path(tempfile.mkdtemp(prefix="trayburn-nobody-"))
    os.chown(base, 65534, 65534)
    yield base
    shutil.rmtree(base)


NOBODY_SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    from pathlib import Path
    from trayburn import files, settings, system
    from trayburn.system import InstanceLock

    base = Path(sys.argv[1])
    out = {"uid": os.geteuid()}
    os.umask(0o002)
    state = files.private_dir(base / "state")
    InstanceLock(state / "tray.lock").acquire().release()
    settings.save(base / "config" / "settings.toml", settings.Settings(theme="dark"))
    system.setup(log_dir=base / "log")
    out["modes"] = {p: oct(os.stat(base / p).st_mode & 0o777) for p in
                    ("state", "state/tray.lock", "config/settings.toml", "log", "log/trayburn.log")}
    (state / "notified.json").symlink_to(base / "precious.txt")
    try:
        files.open_private(state / "notified.json", os.O_WRONLY | os.O_APPEND)
    except files.Refused as exc:
        out["link"] = exc.kind
    try:
        files.open_private(base / "roots.lock", os.O_RDWR)
    except files.Refused as exc:
        out["foreign"] = exc.kind
    print(json.dumps(out))
    """
)


@posix
def test_as_a_non_root_user(nobody_home):
    """The same rules as `nobody`: modes under umask 002, a planted link refused, a file of another
    user's in its folder refused."""
    base = nobody_home
    (base / "precious.txt").write_bytes(PRECIOUS)
    (base / "roots.lock").write_text("")  # root's, in a folder nobody owns, writable by all
    (base / "roots.lock").chmod(0o666)
    done = subprocess.run(
        [*AS_NOBODY, sys.executable, "-c", NOBODY_SCRIPT, str(base)],
        cwd="/",
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(ROOT), "HOME": str(base)},
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["uid"] == 65534
    assert got["modes"] == {
        "state": "0o700",
        "state/tray.lock": "0o600",
        "config/settings.toml": "0o600",
        "log": "0o700",
        "log/trayburn.log": "0o600",
    }
    assert (got["link"], got["foreign"]) == ("link", "not_ours")
    assert (base / "precious.txt").read_bytes() == PRECIOUS


def test_read_file_reads_whole_files_and_never_past_its_limit(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    assert files.read_file(path, 100) == b"x" * 100
    with pytest.raises(files.Refused, match="over the 99-byte limit") as caught:
        files.read_file(path, 99)
    assert caught.value.kind == "too_big"
    with open(path, "r+b") as fh:
        fh.truncate(1 << 40)  # a sparse terabyte: refused by its size, never read into memory
    with pytest.raises(files.Refused, match="limit"):
        files.read_file(path, 1000)
    with pytest.raises(FileNotFoundError):
        files.read_file(tmp_path / "none", 10)


@posix
def test_a_shared_sticky_folder_of_ours_is_refused_and_its_mode_left_alone(tmp_path, capsys):
    """`--state-dir /tmp` (or a log folder there) as root: /tmp is root's own, so the old rule made it 0700 and
    every other user lost /tmp. A folder with the sticky bit is refused whoever owns it, its mode unchanged; the
    control: a folder of ours without it is made private as ever."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    with pytest.raises(files.Refused) as caught:
        files.private_dir(shared)
    assert caught.value.kind == "not_private" and "shared by every user" in str(caught.value)
    assert stat.S_IMODE(os.stat(shared).st_mode) == 0o1777
    code, _, err = _cli(capsys, "demo", "--json", "--state-dir", str(shared))
    assert code == 1 and "shared by every user" in err and "Traceback" not in err
    assert stat.S_IMODE(os.stat(shared).st_mode) == 0o1777
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o755)
    mine.chmod(0o755)
    files.private_dir(mine)
    assert stat.S_IMODE(os.stat(mine).st_mode) == 0o700
