"""The demo tray (`trayburn demo`) on a real X display with a real XEmbed tray: ended by SIGTERM, as the session
ends it at logout, it leaves no `demo-*` copy behind (it left ~700 KB at every logout)."""

from __future__ import annotations

import os
import signal
import sys

import pytest
from helpers import desktop as harness
from helpers.desktop import gtk_available

from trayburn import paths

pytestmark = [
    pytest.mark.desktop,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="real-desktop tests run on Linux"),
    pytest.mark.skipif(bool(harness.missing_tools()), reason=f"apt-get install {' '.join(harness.missing_tools())}"),
]


def test_the_demo_tray_ended_by_sigterm_removes_its_copy(tmp_path):
    if not gtk_available():
        pytest.skip("the gtk tray backend needs PyGObject: pip install 'trayburn[gtk]'")
    demos = paths.demo_dir()  # under this test's TRAYBURN_STATE_DIR (tests/conftest.py)
    desk = harness.start_desktop(tmp_path / "desk")
    try:
        env = {"TRAYBURN_LOG_DIR": str(tmp_path / "logs"), "PYSTRAY_BACKEND": ""}
        tray = desk.spawn([sys.executable, "-P", "-m", "trayburn", "demo"], log="demo", env=env)
        desk.wait_for_tray_icon(timeout=30)
        copies = [p for p in demos.iterdir() if p.name.startswith("demo-")]
        assert len(copies) == 1 and (copies[0] / "settings.toml").is_file(), copies
        os.kill(tray.pid, signal.SIGTERM)  # the process alone, as a session manager ends it
        assert tray.wait(20) == -signal.SIGTERM  # it still ends as SIGTERM ends a process
        assert not [p for p in demos.iterdir() if p.name.startswith("demo-")]
    finally:
        desk.close()
