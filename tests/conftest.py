import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ARTIFACTS = Path(__file__).parent / "_artifacts"  # gitignored
CLINE_VARIABLES = ("CLINE_DIR", "CLINE_DATA_DIR", "CLINE_SESSION_DATA_DIR")


# -- every test: nothing of the person's own home, settings, state or Cline can leak in or be written -----
@pytest.fixture(autouse=True)
def isolated(tmp_path_factory, monkeypatch) -> Path:
    """HOME, the XDG folders, trayburn's config/state/log and Cline's variables, all pointed into (or
    cleared for) this test's own folder. A test that wants other values sets them over these.
    XDG_RUNTIME_DIR and DISPLAY are left alone: the session-wide desktop lives there. Beside tmp_path,
    not in it, so a test listing its tmp_path sees only its own files."""
    root = tmp_path_factory.mktemp("isolated")
    home = root / "home"
    home.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("USERPROFILE", raising=False)
    for var, sub in (
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_STATE_HOME", ".local/state"),
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_CACHE_HOME", ".cache"),
    ):
        monkeypatch.setenv(var, str(home / sub))
    monkeypatch.setenv("TRAYBURN_CONFIG", str(root / "settings.toml"))
    monkeypatch.setenv("TRAYBURN_STATE_DIR", str(root / "state"))
    monkeypatch.setenv("TRAYBURN_LOG_DIR", str(root / "log"))
    for var in [v for v in os.environ if v.startswith("CLINE_")]:
        monkeypatch.delenv(var)
    return root


# -- markers (registered in pyproject.toml): what a test costs, so a run can leave it out ---------------
# The fast core: `-m "not display and not slow and not build"` (./scripts/test --fast).
X_FIXTURES = {("conftest", "desktop"), ("helpers.window_harness", "display")}  # the fixtures that start Xvfb


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """`desktop` and `display` on every test that uses the session's desktop, `display` on every test that uses
    the window harness's Xvfb. A test that starts an X server itself carries `display` in its file."""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        defs = [d for ds in (info.name2fixturedefs.values() if info else ()) for d in ds]
        if any((d.func.__module__, d.argname) == ("conftest", "desktop") for d in defs):
            item.add_marker(pytest.mark.desktop)
        if item.get_closest_marker("desktop") or any((d.func.__module__, d.argname) in X_FIXTURES for d in defs):
            item.add_marker(pytest.mark.display)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before the test's fixtures: the harness refuses to start an X server for a test without `display`, so
    `-m "not display"` can be trusted to start none."""
    from helpers import desktop as harness

    harness.DISPLAY_MARKED = item.get_closest_marker("display") is not None


# -- real desktop (Xvfb + D-Bus + trayer): see tests/helpers/desktop.py -----------------
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
    from helpers import desktop as harness

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
    from helpers.corpus import Ledger, a_minute_later

    led = Ledger(tmp_path / "state" / "ledger.db", wall_ns=a_minute_later)
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
