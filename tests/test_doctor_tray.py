"""`trayburn doctor` says whether the tray can start here and which backend would run: without a
display one line and no failure (doctor over SSH is about the data); on a real Xvfb desktop with an
XEmbed tray and a session bus, "can start" and the backend that the tray itself would choose."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import desktop as harness
from helpers.corpus import copy_corpus, isolated_env

SCRIPT = Path(sys.executable).parent / "trayburn"
TRAY_VARS = ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "PYSTRAY_BACKEND", "XDG_RUNTIME_DIR")


def doctor(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), "doctor", *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def data_env(tmp_path: Path) -> dict[str, str]:
    """The real recording as the Cline folder, everything else inside tmp_path."""
    root = copy_corpus(tmp_path / "cline")
    return isolated_env(tmp_path, CLINE_DIR=str(root), TZ="UTC")


def test_without_a_display_one_line_and_the_data_verdict_alone(tmp_path):
    bare = {k: v for k, v in os.environ.items() if k not in TRAY_VARS and not k.startswith("CLINE")}
    env = bare | data_env(tmp_path)
    done = doctor(env)
    assert (done.returncode, done.stderr) == (0, ""), done.stdout + done.stderr
    tray = [line for line in done.stdout.splitlines() if line.startswith("Tray")]
    assert tray == ["Tray:            cannot start here (no DISPLAY) — fine over SSH"]
    done = doctor(env, "--json")
    assert done.returncode == 0
    out = json.loads(done.stdout)
    assert out["kind"] == "ok"
    assert out["tray"]["can_start"] is False and out["tray"]["kind"] == "no_display"
    assert out["tray"]["backend"] is None
    # no Cline at all: exit 1 is about the data, the tray line is the same
    (tmp_path / "none").mkdir()
    done = doctor(bare | isolated_env(tmp_path / "none"))
    assert done.returncode == 1 and "cannot start here (no DISPLAY)" in done.stdout


@pytest.mark.display  # starts an X server of its own
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="real-desktop tests run on Linux")
@pytest.mark.skipif(bool(harness.missing_tools()), reason=f"apt-get install {' '.join(harness.missing_tools())}")
def test_on_a_desktop_it_can_start_with_the_backend_that_would_run(tmp_path):
    from trayburn.tray import host

    desk = harness.start_desktop(tmp_path / "desk")
    try:
        env = desk.env | data_env(tmp_path)
        check = host.can_start(desk.env)
        assert check.ok and check.xembed, check.message
        done = doctor(env, "--json")
        assert (done.returncode, done.stderr) == (0, ""), done.stdout + done.stderr
        tray = json.loads(done.stdout)["tray"]
        assert tray["can_start"] is True and tray["kind"] == "ok"
        chosen = subprocess.run(  # what the tray would choose, in a process with this desktop's environment
            [
                sys.executable,
                "-c",
                "from trayburn.tray import host; print(host.choose_backend(sni=host.can_start().sni))",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout.strip()
        assert chosen in host.BACKENDS
        assert tray["backend"] == host.describe(chosen)
        text = doctor(env).stdout
        line = next(line for line in text.splitlines() if line.startswith("Tray"))
        assert line.startswith("Tray:            can start here (an XEmbed tray on ") and f"backend {chosen} " in line
    finally:
        desk.close()
