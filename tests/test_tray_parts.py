"""The tray's small parts on their own: can it start here, which folder was picked, what a budget
typed by a person is, how fresh the figures are, which problem line a health gets, and children
that fail or are asked to raise. Real sockets, real folders, real child processes."""

from __future__ import annotations

import dataclasses
import logging
import socket
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from desktop import wait_for

from trayburn import paths, system
from trayburn.engine import Engine
from trayburn.tray import dialogs, host, view
from trayburn.tray.dialogs import Children, parse_money
from trayburn.window import NO_TK


# --- can the tray start here -------------------------------------------------------------------
def test_no_display_is_fatal_with_one_line():
    check = host.can_start({}, platform="linux")
    assert check.kind == "no_display" and check.fatal
    assert check.message == "no graphical session: DISPLAY is not set; `trayburn today` works in a terminal"
    assert "Wayland" in host.can_start({"WAYLAND_DISPLAY": "wayland-0"}, platform="linux").message


@pytest.mark.parametrize("display", [":4242", "nonsense", "/tmp/trayburn-no-such-socket:0"])
def test_a_display_nobody_answers_is_fatal(display):
    check = host.can_start({"DISPLAY": display}, platform="linux")
    assert check.kind == "display_unreachable" and check.fatal and display in check.message


def test_macos_and_windows_need_no_checks():
    assert host.can_start({}, platform="darwin").ok and host.can_start({}, platform="win32").ok


@pytest.fixture
def listening(tmp_path):
    """A real unix socket that accepts connections (as an X server's or a bus's would)."""
    path = tmp_path / "sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(8)
    yield path
    server.close()


def test_a_listening_display_without_a_bus_is_fatal(listening):
    check = host.can_start({"DISPLAY": f"{listening}:0"}, platform="linux")
    assert check.kind == "no_session_bus" and "dbus-run-session" in check.message


def test_the_bare_x11_backend_needs_no_bus(listening):
    check = host.can_start({"DISPLAY": f"{listening}:0", "PYSTRAY_BACKEND": "xorg"}, platform="linux")
    assert not check.fatal and check.kind == "no_tray_host"  # our socket is no X server: no tray found


def test_bus_addresses(listening, tmp_path):
    assert host.bus_problem(f"unix:path={listening}") is None
    assert "No such file" in host.bus_problem(f"unix:path={tmp_path / 'gone'}")
    assert host.bus_problem(f"unix:path={tmp_path / 'gone'};unix:path={listening}") is None  # the second answers
    assert host.bus_problem("tcp:host=localhost,port=1") is None  # not tried: assumed fine


def test_the_per_user_bus_counts_as_a_bus(listening, tmp_path):
    (tmp_path / "bus").symlink_to(listening)
    assert host._default_bus({"XDG_RUNTIME_DIR": str(tmp_path)}) == f"unix:path={tmp_path / 'bus'}"
    assert host._default_bus({}) is None


# --- which folder was picked ---------------------------------------------------------------------
def test_a_picked_folder_is_recognised_by_what_it_holds(tmp_path):
    cline = tmp_path / "cline"
    session = cline / "data" / "sessions" / "1796026733097_tvgzu"
    session.mkdir(parents=True)
    (session / f"{session.name}.json").write_text("{}")
    assert dialogs.recognise(cline) == "cline_dir"
    assert dialogs.recognise(cline / "data") == "data_dir"
    assert dialogs.recognise(cline / "data" / "sessions") == "sessions_dir"
    assert dialogs.recognise(tmp_path / "elsewhere") is None
    assert dialogs.level_for(cline / "data" / "sessions", "cline_dir") == (
        "sessions_dir",
        f"{cline / 'data' / 'sessions'} is a sessions folder: set as the sessions folder",
    )
    assert dialogs.level_for(cline, "cline_dir") == ("cline_dir", None)
    assert dialogs.level_for(tmp_path, "data_dir") == ("data_dir", None)  # nothing there yet: as asked


# --- a budget typed by a person ------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, value",
    [("20", 20.0), ("$20", 20.0), (" $20.50 ", 20.5), ("1,200", 1200.0), ("$1,200.75", 1200.75), ("0", 0.0)],
)
def test_money_as_typed(text, value):
    assert parse_money(text) == value


@pytest.mark.parametrize("text", ["", "abc", "-5", "20 euros", "1,20", "$", "2.5.1"])
def test_not_money(text):
    assert parse_money(text) is None


# --- freshness -----------------------------------------------------------------------------------
def test_freshness_says_just_now_while_refreshes_work_and_the_age_when_they_stop():
    assert view.freshness(5, 30, False) == ("Updated just now", False)
    assert view.freshness(80, 30, False) == ("Updated just now", False)  # within three intervals
    assert view.freshness(185, 30, False) == ("Updated 3 min ago — refresh stopped", True)
    assert view.freshness(185, 30, True) == ("Updated 3 min ago — refresh failing", True)
    assert view.freshness(None, 30, True) == ("Not updated yet — refresh failing", True)
    assert view.freshness(400, 300, False) == ("Updated just now", False)  # 5-minute polls


def test_budget_text():
    assert view.budget_text(0.33, 0.40) == "$0.33 of $0.40 budget (82 %)"
    assert view.budget_text(0.33, None) is None


# --- the problem line, by kind -------------------------------------------------------------------
@pytest.fixture
def clean_env(tmp_path, monkeypatch):
    for var in ("CLINE_DIR", "CLINE_DATA_DIR", "CLINE_SESSION_DATA_DIR", "TRAYBURN_CONFIG", "TRAYBURN_STATE_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path


def test_health_kinds_from_real_folders(clean_env):
    tmp = clean_env
    engine = Engine(tmp / "settings.toml", tmp / "state")
    assert engine.health().kind == "not_installed"
    assert view.problem_line(engine.health()) is None  # the first-run entries say it
    sessions = tmp / "home" / ".cline" / "data" / "sessions"
    sessions.parent.mkdir(parents=True)
    assert engine.health().kind == "no_sessions_folder"
    sessions.write_text("a file")
    assert engine.health().kind == "sessions_not_a_folder"
    assert "is not a folder" in view.problem_line(engine.health())
    sessions.unlink()
    sessions.mkdir()
    assert engine.health().kind == "no_sessions"
    (tmp / "settings.toml").write_text(f'sessions_dir = "{tmp / "nowhere"}"\n')
    engine.reload_if_changed()
    assert engine.health().kind == "override_missing"
    assert view.problem_line(engine.health()).startswith("The setting sessions_dir in ")
    (tmp / "settings.toml").write_text("theme = = 1\n")
    engine.reload_if_changed()
    assert engine.health().kind == "settings_broken"
    assert view.problem_line(engine.health()).startswith("Settings file is broken at line 1")
    engine.close()


def test_the_engines_kind_wins_when_it_has_one(clean_env):
    engine = Engine(clean_env / "settings.toml", clean_env / "state")
    health = engine.health()
    engine.close()

    @dataclasses.dataclass
    class WithKind:
        kind: str
        levels: paths.Levels
        config_path: Path
        sessions: int = 0
        problems: tuple = ()
        problem_level: paths.Level | None = None

    said = WithKind("override_missing", health.levels, health.config_path, problem_level=health.levels.data)
    assert view.problem_line(said) == view.tilde(
        f"CLINE_DATA_DIR points to {health.levels.data.path}, which does not exist"
    )


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


class _Button:
    """AppKit's NSStatusBarButton as far as the darwin icon uses it (no Mac here: pystray's darwin backend
    needs AppKit), recording what it was given."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []

    def setImagePosition_(self, position: int) -> None:
        self.calls.append(("imagePosition", position))

    def setTitle_(self, text: str) -> None:
        self.calls.append(("title", text))


def test_on_macos_todays_cost_is_the_status_items_title_beside_the_bare_mark():
    """pystray's darwin Icon keeps its NSStatusItem as `_status_item` (pystray/_darwin.py); the tray sets the
    item's button title to the label and draws the icon as the mark. Not verified on a Mac: this checks the
    wiring against a stand-in for pystray's class and AppKit's button only."""
    button = _Button()
    pystray = host.load_pystray("dummy")

    class DarwinIcon(pystray.Icon):  # pystray's dummy Icon with the darwin backend's status item
        HAS_NOTIFICATION = True

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self._status_item = type("StatusItem", (), {"button": staticmethod(lambda: button)})()

        def _update_icon(self):
            pass

        def _update_title(self):
            pass

        def _update_menu(self):
            pass

    icon = host._darwin(DarwinIcon)("trayburn", None, "trayburn")
    assert icon.has_label and icon.draws_label and not icon.activates and icon.notifications
    icon.set_label("$0.33", "$00.00")
    assert button.calls == [("imagePosition", host.IMAGE_LEFT), ("title", "$0.33")]

    class NoTitle(DarwinIcon):  # an AppKit whose button has no title to set: left as pystray makes it
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self._status_item = type("StatusItem", (), {"button": staticmethod(lambda: object())})()

    plain = host._darwin(NoTitle)("trayburn", None, "trayburn")
    assert not plain.has_label and not plain.draws_label
