"""What the tray starts: a child that fails is logged and told, a dialog that cannot open is told, an open
window is sent the request instead of a second one, children run in the home folder, and without tkinter each
says python3-tk. Real child processes."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from helpers.desktop import wait_for

from trayburn import system
from trayburn.tray.dialogs import Children
from trayburn.window import NO_TK


# --- children --------------------------------------------------------------------------------------
def script(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "child.py"
    path.write_text(textwrap.dedent(body))
    return [sys.executable, "-P", str(path)]


def test_a_child_that_fails_is_logged_with_its_stderr_and_told(tmp_path, caplog):
    told: list[str] = []
    children = Children(on_failure=told.append)
    argv = script(tmp_path, "import sys; print('no display here', file=sys.stderr); sys.exit(3)")
    with caplog.at_level(logging.ERROR):
        children.open_window("summary", argv)
        wait_for(lambda: told, 20, what="the failure to be told")
    assert told == ["Could not open the summary window (exit 3): no display here"]
    assert "exited with 3" in caplog.text and "no display here" in caplog.text


def test_a_dialog_that_cannot_open_is_told(tmp_path):
    told: list[str] = []
    argv = script(tmp_path, "import sys; print('Tcl: no display', file=sys.stderr); sys.exit(1)")
    assert Children(on_failure=told.append).ask(argv, "the folder dialog") is None
    assert told == ["Could not open the folder dialog: Tcl: no display"]
    ok = script(tmp_path, "print('/picked')")
    assert Children().ask(ok, "the folder dialog") == "/picked"


def test_the_open_window_is_sent_the_request_instead_of_a_second_one(tmp_path):
    got = tmp_path / "got"
    argv = script(
        tmp_path,
        f"""
        import sys
        for line in sys.stdin:
            open({str(got)!r}, "a").write(line)
        """,
    )
    started: list[subprocess.Popen] = []

    def popen(argv, **options):
        proc = subprocess.Popen(argv, **options)
        started.append(proc)
        return proc

    children = Children(popen)
    children.open_window("summary", argv)
    children.open_window("summary", argv, "session abc")
    children.open_window("summary", argv, "day")
    wait_for(lambda: got.exists() and got.read_text().count("\n") == 2, 20, what="two requests")
    assert len(started) == 1 and got.read_text() == "session abc\nday\n"
    started[0].stdin.close()
    assert started[0].wait(20) == 0


def test_children_run_in_the_home_folder_never_where_the_tray_started(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert system.child_options()["cwd"] == str(tmp_path)
    assert system.command("summary")[1:4] == ["-P", "-m", "trayburn"]
    seen = threading.Event()
    options: dict = {}

    def popen(argv, **kw):
        options.update(kw)
        seen.set()
        return None

    Children(popen).open_window("demo", ["x"])
    assert seen.is_set() and options["cwd"] == str(tmp_path)


def test_without_tkinter_summary_the_trays_open_summary_and_doctor_each_say_python3_tk(tmp_path):
    """A Python without Tk (as on Debian without python3-tk: tests/data/no-tk shadows `tkinter` with a module
    whose import fails the same way), whole processes: one line, no traceback."""
    import os

    no_tk = Path(__file__).parent / "data" / "no-tk"
    env = {**os.environ, "PYTHONPATH": str(no_tk), "TRAYBURN_LOG_DIR": str(tmp_path / "logs")}
    env.pop("DISPLAY", None)
    (tmp_path / "s.toml").write_text("")  # an empty settings file (--config must name a file)
    argv = [sys.executable, "-m", "trayburn", "--config", str(tmp_path / "s.toml"), "--state-dir", str(tmp_path / "st")]
    done = subprocess.run([*argv, "summary"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [f"trayburn: {NO_TK}"] and "python3-tk" in NO_TK
    doctor = subprocess.run([*argv, "doctor"], env=env, capture_output=True, text=True, timeout=60)
    assert "Summary window:  unavailable: " in doctor.stdout and "python3-tk" in doctor.stdout, doctor.stdout
    tray = f"""
import sys
sys.path.insert(0, {str(no_tk)!r})
from trayburn.engine import Engine
from trayburn.tray import host
from trayburn.tray.app import TrayApp
app = TrayApp(Engine({str(tmp_path / "s.toml")!r}, {str(tmp_path / "st2")!r}), host.load_pystray("dummy"),
              host.capabilities("dummy"), spawn=lambda *a, **k: sys.exit("a window was started"))
app.tick()
next(i for i in app.icon.menu.items if str(i.text) == "Open summary")(app.icon)
print(app.icon.notified[-1][0])
"""
    said = subprocess.run([sys.executable, "-c", tray], env=env, capture_output=True, text=True, timeout=60)
    assert said.returncode == 0, said.stderr
    assert said.stdout.strip() == NO_TK[0].upper() + NO_TK[1:]
