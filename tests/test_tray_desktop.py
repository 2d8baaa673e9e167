"""The tray app on a real X display with a real XEmbed tray (trayer) and the gtk backend:
the icon docks and shows today's cost, a new session changes it at the next refresh, a left
click opens the summary window, a right click opens the menu with today's cost and top model.

Screenshots land in tests/_artifacts/ (look at them). Menu text is read back with tesseract.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from helpers.desktop import gtk_available, image_colours
from helpers.menus import add_session
from helpers.ocr import ocr

from trayburn import demo
from trayburn.engine import Engine

pytestmark = pytest.mark.skipif(
    shutil.which("tesseract") is None, reason="reading the menu back needs tesseract (apt-get install tesseract-ocr)"
)


@pytest.fixture
def tray(desktop, desktop_app, tmp_path):
    if not gtk_available():
        pytest.skip("the gtk tray backend needs PyGObject: pip install 'trayburn[gtk]' (see README)")
    config = demo.prepare(tmp_path / "demo")
    settings = tomllib.loads(config.read_text())
    config.write_text(config.read_text() + "refresh_seconds = 5\n")
    state = tmp_path / "state"
    env = {"TRAYBURN_LOG_DIR": str(tmp_path / "logs"), "PYSTRAY_BACKEND": ""}
    argv = [sys.executable, "-m", "trayburn", "--config", str(config), "--state-dir", str(state)]
    proc = desktop_app(argv, log="trayburn-tray", env=env)
    icon = desktop.wait_for_tray_icon(timeout=30)
    sessions = Path(settings["cline_dir"]) / "data" / "sessions"
    return proc, icon, config, state, sessions


def icon_pixels(desktop, icon, path: Path) -> bytes:
    from PIL import Image

    desktop.screenshot(path, icon.rect)
    return Image.open(path).convert("RGB").tobytes()


def test_icon_docks_and_shows_todays_cost_and_changes_with_a_new_session(desktop, tray, artifacts):
    proc, icon, config, state, sessions = tray
    shot = desktop.screenshot(artifacts / "tray-docked.png")
    colours = image_colours(shot, icon.rect)
    assert len(colours) > 4, "the icon is drawn (mark and label), not a flat square"
    before = desktop.wait_for(lambda: icon_pixels(desktop, icon, artifacts / "tray-icon-before.png"), 5)

    add_session(sessions, "1796099999999_zznew")
    changed = desktop.wait_for(
        lambda: icon_pixels(desktop, icon, artifacts / "tray-icon-after.png") != before,
        30,
        what="the icon to change after a new session was written",
    )
    assert changed
    desktop.screenshot(artifacts / "tray-after-new-session.png")
    assert proc.poll() is None


def test_right_click_menu_shows_todays_cost_and_top_model(desktop, tray, artifacts, tmp_path):
    proc, icon, config, state, sessions = tray
    desktop.click(*icon.rect.center, button=3)
    menu = desktop.wait_for_menu()
    shot = desktop.screenshot(artifacts / "tray-menu.png")
    crop = desktop.screenshot(artifacts / "tray-menu-crop.png", menu.rect)
    text = ocr(crop)
    reader = Engine(config, tmp_path / "reader-state")  # the same files, read independently
    reader.refresh()
    day = reader.day()
    assert f"${day.cost_usd:,.2f}" in text, text
    assert f"{day.calls} calls" in text, text
    assert day.top_model.name.split()[0] in text, text
    assert "Today's sessions" in text.replace("’", "'") and "Quit trayburn" in text, text
    desktop.key("Escape")
    desktop.wait_for_no_menu()
    assert shot.exists()


def test_left_click_opens_the_summary_window(desktop, tray, artifacts):
    proc, icon, config, state, sessions = tray
    desktop.click(*icon.rect.center, button=1)
    window = desktop.wait_for(
        lambda: next(
            iter(
                w
                for w in desktop.find_windows(viewable=True)
                if (w.name or "").startswith("trayburn") and w.rect.width > 300
            ),
            None,
        ),
        30,
        what="the summary window to open",
    )
    desktop.screenshot(artifacts / "tray-summary-window.png")
    assert window.rect.height > 200


@pytest.mark.parametrize("picker", ["gtk", "tk"])
def test_choosing_a_folder_from_the_menu_uses_a_real_folder_dialog(desktop, tmp_path, monkeypatch, picker):
    """Settings ▸ Sessions folder: the real folder picker (a child process; GTK's where PyGObject
    is, Tk's elsewhere) writes the setting."""
    from trayburn.tray import host
    from trayburn.tray.app import TrayApp

    if picker == "gtk" and not gtk_available():
        pytest.skip("GTK's folder chooser needs PyGObject: pip install 'trayburn[gtk]'")
    for key, value in desktop.env.items():
        monkeypatch.setenv(key, value)
    if picker == "tk":
        monkeypatch.setenv("TRAYBURN_TK_DIALOGS", "1")
    target = tmp_path / "picked sessions"
    target.mkdir()
    config = tmp_path / "settings.toml"
    app = TrayApp(Engine(config, tmp_path / "state"), host.load_pystray("dummy"), host.capabilities("dummy"))
    app.tick()
    item = next(
        i
        for i in next(i for i in app.icon.menu.items if str(i.text) == "Settings").submenu.items
        if str(i.text).startswith("Sessions folder: ")
    )
    item(app.icon)
    dialog = desktop.wait_for(
        lambda: next(iter(desktop.find_windows(name="trayburn: choose the sessions folder", viewable=True)), None),
        30,
        what="the folder dialog",
    )
    subprocess.run(["xdotool", "windowfocus", str(dialog.id)], env=desktop.env, check=True)
    desktop.key("ctrl+a", "ctrl+k")  # Tk's entry: line start, then delete to the end
    subprocess.run(["xdotool", "type", "--delay", "20", str(target)], env=desktop.env, check=True)
    # Tk's picker: Return enters the folder, OK (Alt+O) chooses it; GTK's: Return chooses it
    desktop.key(*(["Return", "alt+o"] if picker == "tk" else ["Return"]))
    desktop.wait_for(
        lambda: config.exists() and "sessions_dir" in config.read_text(),
        30,
        what="the settings file to name the chosen folder",
    )
    assert tomllib.loads(config.read_text())["sessions_dir"] == str(target)
    app.tick()
    assert app.engine.levels.sessions.path == target and app.engine.levels.sessions.origin == "settings"


def test_share_across_machines_picks_the_sync_folder_in_a_real_dialog(desktop, tmp_path, monkeypatch):
    """Settings ▸ Share across machines…: the same folder picker child (Tk's here) writes `sync_dir`;
    the next tick offers Stop sharing and this machine's file is written there."""
    from trayburn.tray import host
    from trayburn.tray.app import TrayApp

    for key, value in desktop.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("TRAYBURN_TK_DIALOGS", "1")
    target = tmp_path / "Sync"
    target.mkdir()
    config = tmp_path / "settings.toml"
    config.write_text(f'sessions_dir = "{demo.SOURCE}"\n')
    app = TrayApp(Engine(config, tmp_path / "state"), host.load_pystray("dummy"), host.capabilities("dummy"))
    app.tick()
    settings = next(i for i in app.icon.menu.items if str(i.text) == "Settings").submenu
    next(i for i in settings.items if str(i.text) == "Share across machines…")(app.icon)
    title = "trayburn: choose a folder you sync between machines"
    dialog = desktop.wait_for(
        lambda: next(iter(desktop.find_windows(name=title, viewable=True)), None), 30, what="the folder dialog"
    )
    subprocess.run(["xdotool", "windowfocus", str(dialog.id)], env=desktop.env, check=True)
    desktop.key("ctrl+a", "ctrl+k")
    subprocess.run(["xdotool", "type", "--delay", "20", str(target)], env=desktop.env, check=True)
    desktop.key("Return", "alt+o")
    desktop.wait_for(lambda: "sync_dir" in config.read_text(), 30, what="the settings file to name the sync folder")
    assert tomllib.loads(config.read_text())["sync_dir"] == str(target)
    desktop.wait_for(lambda: app.icon.notified, 10, what="the person told where the figures are shared")
    app.tick()
    settings = [str(i.text) for i in next(i for i in app.icon.menu.items if str(i.text) == "Settings").submenu.items]
    assert "Stop sharing" in settings and any(t.startswith("Share across machines: ") for t in settings)
    assert list((target / "trayburn" / "machines").iterdir()), "this machine's file is written there"


@pytest.mark.parametrize("typed, budget", [("$20", 20.0), ("12.5", 12.5)])
def test_the_budget_dialog_takes_dollars_as_people_type_them(desktop, tmp_path, monkeypatch, typed, budget):
    """Settings ▸ Daily budget…: the real Tk dialog (a child process) accepts "$20" and "20"."""
    from trayburn.tray import host
    from trayburn.tray.app import TrayApp

    for key, value in desktop.env.items():
        monkeypatch.setenv(key, value)
    config = tmp_path / "settings.toml"
    app = TrayApp(Engine(config, tmp_path / "state"), host.load_pystray("dummy"), host.capabilities("dummy"))
    app.tick()
    settings = next(i for i in app.icon.menu.items if str(i.text) == "Settings").submenu
    next(i for i in settings.items if str(i.text).startswith("Daily budget: "))(app.icon)
    dialog = desktop.wait_for(
        lambda: next(iter(desktop.find_windows(name="trayburn", viewable=True)), None), 30, what="the budget dialog"
    )
    subprocess.run(["xdotool", "windowfocus", str(dialog.id)], env=desktop.env, check=True)
    desktop.key("ctrl+a", "ctrl+k")
    subprocess.run(["xdotool", "type", "--delay", "20", typed], env=desktop.env, check=True)
    desktop.key("Return")
    desktop.wait_for(
        lambda: config.exists() and "daily_budget" in config.read_text(), 30, what="the budget in the settings file"
    )
    assert tomllib.loads(config.read_text())["daily_budget"] == budget
    app.tick()
    settings = next(i for i in app.icon.menu.items if str(i.text) == "Settings").submenu
    assert f"Daily budget: ${budget:,.2f}…" in [str(i.text) for i in settings.items]


def window_name(desktop, window_id: int) -> str:
    done = subprocess.run(["xdotool", "getwindowname", str(window_id)], env=desktop.env, capture_output=True, text=True)
    return done.stdout.strip()


def test_a_call_appended_to_a_running_session_reaches_the_docked_icon_within_two_seconds(
    desktop, desktop_app, tmp_path, artifacts
):
    """The gtk icon in trayer, polling every five minutes: each call written to the running session's
    messages file (in place, as the CLI writes) is in the icon's tooltip and drawing within 2 s."""
    import time

    from helpers.corpus import make_session, user
    from helpers.live import SHOWN_WITHIN_S, append_call, now_ms, started_now

    if not gtk_available():
        pytest.skip("the gtk tray backend needs PyGObject: pip install 'trayburn[gtk]' (see README)")
    from helpers.corpus import assistant

    sessions = tmp_path / "cline" / "data" / "sessions"
    running = make_session(
        sessions,
        "1796100000000_desk1",
        started_now(),
        [user("u0", now_ms()), assistant("msg_first001", now_ms(), 1000, 10, cost=0.25)],
        status="running",
    )
    config = tmp_path / "settings.toml"
    config.write_text(f'sessions_dir = "{sessions}"\nrefresh_seconds = 300\n')
    env = {"TRAYBURN_LOG_DIR": str(tmp_path / "logs"), "PYSTRAY_BACKEND": ""}
    argv = [sys.executable, "-m", "trayburn", "--config", str(config), "--state-dir", str(tmp_path / "state")]
    desktop_app(argv, log="trayburn-live", env=env)
    icon = desktop.wait_for_tray_icon(timeout=30)
    desktop.wait_for(lambda: "$0.25" in window_name(desktop, icon.id), 30, what="the first figure in the tooltip")

    def drawn(path):  # the icon where it is now (drawn at the tray's size, its slot may have moved since it docked)
        return icon_pixels(desktop, desktop.wait_for(lambda: next(iter(desktop.tray_icons()), None), 5), path)

    before = drawn(artifacts / "tray-live-before.png")
    log = tmp_path / "logs" / "trayburn.log"
    for total in ("$0.75", "$1.25"):
        start = time.monotonic()
        append_call(running, 0.5)
        try:
            desktop.wait_for(
                lambda total=total: total in window_name(desktop, icon.id), SHOWN_WITHIN_S, what=f"{total} shown"
            )
        except AssertionError as exc:  # say what was shown and what the tray logged, not only that it timed out
            tail = "\n".join(log.read_text().splitlines()[-15:]) if log.exists() else "(no log)"
            raise AssertionError(f"{exc}; shown: {window_name(desktop, icon.id)!r}; log:\n{tail}") from None
        assert time.monotonic() - start < SHOWN_WITHIN_S
    desktop.wait_for(lambda: drawn(artifacts / "tray-live-after.png") != before, 2, what="the icon redrawn")


def test_quit_closes_the_summary_window_the_tray_opened(desktop, tmp_path, monkeypatch):
    """Open summary, then Quit trayburn: the window (a child process on the real display) goes too."""
    from trayburn.tray import host
    from trayburn.tray.app import TrayApp

    for key, value in desktop.env.items():
        monkeypatch.setenv(key, value)
    config = demo.prepare(tmp_path / "demo")
    app = TrayApp(Engine(config, tmp_path / "state"), host.load_pystray("dummy"), host.capabilities("dummy"))
    app.tick()
    next(i for i in app.icon.menu.items if str(i.text) == "Open summary")(app.icon)

    def summary():
        return next((w for w in desktop.find_windows(viewable=True) if w.name.startswith("trayburn —")), None)

    desktop.wait_for(summary, 30, what="the summary window")
    proc = app.children._windows["summary"]
    next(i for i in app.icon.menu.items if str(i.text) == "Quit trayburn")(app.icon)
    assert proc.poll() is not None, "the window's process ended with Quit"
    desktop.wait_for(lambda: summary() is None, 10, what="the summary window gone")
