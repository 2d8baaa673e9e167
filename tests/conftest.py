import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ARTIFACTS = Path(__file__).parent / "_artifacts"  # gitignored


# -- real desktop (Xvfb + D-Bus + trayer): see tests/desktop.py -----------------
@pytest.fixture(scope="session")
def artifacts() -> Path:
    """tests/_artifacts/: screenshots and logs worth looking at after a run."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def desktop(artifacts):
    """A running X display with a system tray, for the whole session.

    Yields a ``desktop.Desktop``; skips when not on Linux or the tools are missing.
    """
    import desktop as harness

    if not sys.platform.startswith("linux"):
        pytest.skip("real-desktop tests run on Linux (Xvfb + trayer)")
    missing = harness.missing_tools()
    if missing:
        pytest.skip(f"real-desktop tests need: apt-get install {' '.join(missing)}")
    pytest.importorskip("Xlib", reason="real-desktop tests need python-xlib (pip install python-xlib)")
    logs = artifacts / "desktop"
    shutil.rmtree(logs, ignore_errors=True)
    desk = harness.start_desktop(logs)
    try:
        yield desk
    finally:
        desk.close()


@pytest.fixture
def desktop_app(desktop):
    """Start GUI processes on the desktop: ``desktop_app(argv, log="name") -> Popen``.

    At the end of the test they are stopped and the tray is back to empty, so the
    next test starts from a clean desktop.
    """
    started: list[subprocess.Popen] = []

    def start(argv, *, log: str, env: dict[str, str] | None = None) -> subprocess.Popen:
        proc = desktop.spawn(argv, log=log, env=env)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        desktop.stop(proc)
    desktop.wait_for(
        lambda: not desktop.tray_icons() and not desktop.popup_menus(),
        10,
        what="the tray and menus to be empty after the test",
    )
    desktop.park_pointer()


# -- a fresh ledger in the test's temp dir ---------------------------------------
@pytest.fixture
def ledger(tmp_path):
    from trayburn.ledger import Ledger

    led = Ledger(tmp_path / "state" / "ledger.db")
    yield led
    led.close()


# -- no silent skips where everything was installed -----------------------------
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under ./scripts/test (TRAYBURN_REQUIRE_ALL=1), which installs every tool the tests use, a
    test skipped for a missing install is a failure: a green run must not hide an empty desktop."""
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("TRAYBURN_REQUIRE_ALL") == "1" and report.skipped and "install" in str(report.longrepr):
        report.outcome = "failed"
        report.longrepr = f"required (TRAYBURN_REQUIRE_ALL=1) but skipped: {report.longrepr}"
