"""The summary window's test harness: a private Xvfb, the recorded corpus as Cline's folder with its
ledger built once, windows opened in-process on that display, and ways to read and drive them."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import shutil
import subprocess
import time
from datetime import date
from pathlib import Path

import pytest

from trayburn.engine import Engine

from . import desktop

tk = pytest.importorskip("tkinter", reason="the summary window needs tkinter (apt-get install python3-tk)")

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "real-cline-v1"
EXPECTED = json.loads((CORPUS / "EXPECTED.json").read_text())
BY_LABEL = {s["label"]: s for s in EXPECTED["sessions"]}
DAY = date(2026, 11, 30)
DEADLINE_S = 20


def wait_for(condition, what: str, timeout: float = DEADLINE_S, every: float = 0.05):
    """Poll a real condition until it holds (returning its value) or fail saying what was awaited."""
    return desktop.wait_for(condition, timeout, interval=every, what=what)


# ---- fixtures ------------------------------------------------------------------------------------


_XVFB: dict[str, str] = {}  # one Xvfb for the whole run: Tk keeps its display connection to the end


@pytest.fixture(scope="module")
def display():
    """A private Xvfb; its display number is what it writes to -displayfd. Started once per test run and
    stopped when the run ends: Tk, in this process, never closes a display it has opened, and exits the
    process when that display goes away, so every window test module shares the same one."""
    if not shutil.which("Xvfb"):
        pytest.skip("the window tests need Xvfb: apt-get install xvfb")
    if "display" not in _XVFB:
        _XVFB["display"] = _start_xvfb()
    return _XVFB["display"]


def _start_xvfb(*extra: str, screen: str = "1280x800x24") -> str:
    desktop.x_server_may_start()
    read_end, write_end = os.pipe()
    proc = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_end), "-screen", "0", screen, "-dpi", "96", "-nolisten", "tcp", *extra],
        pass_fds=(write_end,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_end)
    atexit.register(_stop, proc)
    number = b""
    try:
        end = time.monotonic() + DEADLINE_S
        while not number.endswith(b"\n"):
            ready, _, _ = select.select([read_end], [], [], max(0.0, end - time.monotonic()))
            chunk = os.read(read_end, 16) if ready else b""
            if not chunk:
                pytest.fail(f"Xvfb did not report its display (exit code {proc.poll()})")
            number += chunk
    finally:
        os.close(read_end)
    return f":{int(number)}"


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """The recorded corpus as Cline's folder, a fresh ledger, no settings file, UTC."""
    state = tmp_path_factory.mktemp("window-state")
    values = {
        "CLINE_DIR": str(CORPUS),
        "TRAYBURN_STATE_DIR": str(state),
        "TRAYBURN_CONFIG": str(state / "none.toml"),
        "TZ": "UTC",
    }
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TZ", "UTC")
        mp.delenv("GTK_THEME", raising=False)
        time.tzset()
        first = Engine(env=values)
        first.refresh()  # build the ledger once; every later refresh reads nothing
        first.close()
        yield values
    time.tzset()


@pytest.fixture
def engine(env):
    e = Engine(env=env)
    yield e
    e.close()


@pytest.fixture
def open_window(display, env):
    """`open_window(engine, **options) -> SummaryWindow`, shown and refreshed, closed afterwards."""
    from trayburn.window.app import SummaryWindow

    roots = []

    def make(engine, *, refresh: bool = True, scaling: float | None = None, **options):
        root = tk.Tk(screenName=display, className="trayburn")
        roots.append(root)
        # Tk keeps one scaling per display for the whole process: set it for every window (Xvfb's 96 dpi)
        root.tk.call("tk", "scaling", scaling or 96 / 72)
        options.setdefault("today", lambda: DAY)
        options.setdefault("env", env)
        win = SummaryWindow(root, engine, **options)
        win.render()
        if refresh:
            win.refresh()
        settle(root)
        return win

    yield make
    for root in roots:
        with contextlib.suppress(tk.TclError):  # closed by the test
            root.destroy()


def settle(root) -> None:
    root.update_idletasks()
    root.update()


def cells(tree, iid) -> dict[str, str]:
    return {k: str(v) for k, v in tree.set(iid).items()}


def column(tree, key) -> list[str]:
    return [str(tree.set(iid, key)) for iid in tree.get_children()]


def press(win, widget, key: str) -> None:
    """A key press as the user makes it: focus on the widget, then the event."""
    widget.focus_force()
    settle(win.root)
    widget.event_generate(key, when="tail")
    settle(win.root)


def screenshot(win, name: str) -> Path:
    """The window as it is on its display, in tests/_artifacts/windows/NAME.png (look at it; docs/screenshots
    take theirs from here)."""
    out = ROOT / "tests" / "_artifacts" / "windows"
    out.mkdir(parents=True, exist_ok=True)
    settle(win.root)
    path = out / f"{name}.png"
    frame = win.root.wm_frame()
    subprocess.run(["import", "-display", win.root.winfo_screen(), "-window", frame, str(path)], check=True)
    return path
