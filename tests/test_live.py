"""Live: a Cline call written to a session's messages file reaches the running tray within two seconds, though its
poll interval is five minutes. The kernel's inotify (watch.py's Waker) wakes the poller; the poll itself still
decides what is shown. Real files written as the Cline CLI writes them (in place), the real kernel, a real engine
and ledger, the tray headless (the dummy backend keeps what it would show). Waiting is on a condition the tray's
drawing signals, with a timeout: never a sleep.

The same path on a real X tray (trayer, the gtk backend) is in test_tray_desktop.py."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest
from helpers.corpus import assistant, make_session, user
from helpers.live import SHOWN_WITHIN_S, append_call, now_ms, started_now

from trayburn import watch
from trayburn.engine import Engine
from trayburn.tray import host
from trayburn.tray.app import TrayApp

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's; others poll")


class Shown:
    """The tooltips the tray applied, in order, with a condition to wait on."""

    def __init__(self, app: TrayApp):
        self.tooltips: list[str] = []
        self.cond = threading.Condition()
        applied = app._apply

        def apply(view):
            applied(view)
            with self.cond:
                self.tooltips.append(view.tooltip)
                self.cond.notify_all()

        app._apply = apply  # type: ignore[method-assign]

    def wait_for(self, predicate, timeout: float) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: predicate(self.tooltips), timeout)


@pytest.fixture
def live(tmp_path):
    sessions = tmp_path / "cline" / "data" / "sessions"
    running = make_session(
        sessions,
        "1796100000000_live1",
        started_now(),
        [user("u0", now_ms()), assistant("msg_first001", now_ms(), 1000, 10, cost=0.25)],
        status="running",
    )
    config = tmp_path / "settings.toml"
    config.write_text(f'sessions_dir = "{sessions}"\nrefresh_seconds = 300\n')
    app = TrayApp(Engine(config, tmp_path / "state"), host.load_pystray("dummy"), host.capabilities("dummy"))
    shown = Shown(app)
    thread = threading.Thread(target=app.run, name="tray", daemon=True)
    thread.start()
    assert shown.wait_for(lambda t: t and "$0.25" in t[-1], 30), shown.tooltips
    assert app.waker is not None, "inotify_init1 failed on this machine"
    yield app, shown, sessions, running
    app.do_quit()
    thread.join(10)


def test_a_call_appended_to_a_running_session_is_shown_within_two_seconds(live):
    app, shown, sessions, running = live
    assert str(running) in app.waker.watched()
    for n, total in enumerate(("$0.75", "$1.25", "$1.75"), 1):
        start = time.monotonic()
        append_call(running, 0.5)
        assert shown.wait_for(lambda t, total=total: total in t[-1], SHOWN_WITHIN_S), (n, shown.tooltips[-1])
        assert time.monotonic() - start < SHOWN_WITHIN_S


def test_a_new_session_folder_and_its_next_call_are_each_shown_within_two_seconds(live):
    app, shown, sessions, running = live
    start = time.monotonic()
    fresh = make_session(
        sessions, "1796100000001_live2", started_now(), [assistant("msg_new00001", now_ms(), 1000, 10, cost=1.0)]
    )
    assert shown.wait_for(lambda t: "$1.25" in t[-1], SHOWN_WITHIN_S), shown.tooltips[-1]
    assert time.monotonic() - start < SHOWN_WITHIN_S
    start = time.monotonic()
    append_call(fresh, 2.0)  # the new folder was watched as it appeared
    assert shown.wait_for(lambda t: "$3.25" in t[-1], SHOWN_WITHIN_S), shown.tooltips[-1]
    assert time.monotonic() - start < SHOWN_WITHIN_S


def test_the_waker_wakes_for_a_write_a_new_folder_and_a_close_and_for_nothing_else(tmp_path):
    root = tmp_path / "sessions"
    (root / "a").mkdir(parents=True)
    (root / "old").mkdir()
    waker = watch.waker()
    assert waker is not None
    waker.follow([str(root)], [str(root / "a")])
    assert waker.watched() == {str(root), str(root / "a")}
    (root / "old" / "x.json").write_text("{}")  # a folder it does not follow: the poll's business
    (root / "a" / "x.json.123.tmp").write_text("{}")  # half of an atomic write
    assert not waker.wait(0.3)
    (root / "a" / "a.messages.json").write_text("{}")
    assert waker.wait(5)
    (root / "b").mkdir()
    assert waker.wait(5)
    assert str(root / "b") in waker.watched()
    (root / "b" / "b.messages.json").write_text("{}")
    assert waker.wait(5)
    waker.follow([str(root)], [])  # a new folder stays followed for an hour; "a" is dropped
    assert waker.watched() == {str(root), str(root / "b")}
    ended = threading.Event()
    threading.Thread(target=lambda: (waker.wait(), ended.set()), daemon=True).start()
    waker.close()
    assert ended.wait(5), "close() ends a waiting wait()"


def test_a_call_in_an_editor_apps_task_and_a_new_task_are_each_shown_within_two_seconds(tmp_path):
    """Roo Code's tasks (written as Roo writes them: a new file, then renamed over ui_messages.json) wake the
    tray as the Cline CLI's sessions do: the `tasks/` folder for a new task, today's task folders for writes."""
    from helpers.taskfolders import TaskWriter, say, storage, usage_say

    roo = TaskWriter(storage(Path.home(), "roo"), "roo")
    ui = [say(now_ms(), "text", "go"), usage_say(now_ms(), "api_req_started", 1000, 10, 0, 0, 0.25)]
    task = roo.write("task-live1", ui)
    config = tmp_path / "settings.toml"
    config.write_text("refresh_seconds = 300\n")
    app = TrayApp(Engine(config, tmp_path / "state"), host.load_pystray("dummy"), host.capabilities("dummy"))
    shown = Shown(app)
    thread = threading.Thread(target=app.run, name="tray", daemon=True)
    thread.start()
    try:
        assert shown.wait_for(lambda t: t and "$0.25" in t[-1], 30), shown.tooltips
        assert app.waker is not None, "inotify_init1 failed on this machine"
        assert {str(task), str(task.parent)} <= app.waker.watched()
        start = time.monotonic()
        ui.append(usage_say(now_ms(), "api_req_started", 1000, 10, 0, 0, 0.5))
        roo.write("task-live1", ui)
        assert shown.wait_for(lambda t: "$0.75" in t[-1], SHOWN_WITHIN_S), shown.tooltips[-1]
        assert time.monotonic() - start < SHOWN_WITHIN_S
        start = time.monotonic()
        roo.write("task-live2", [say(now_ms(), "text", "go"), usage_say(now_ms(), "api_req_started", 9, 9, 0, 0, 1.0)])
        assert shown.wait_for(lambda t: "$1.75" in t[-1], SHOWN_WITHIN_S), shown.tooltips[-1]
        assert time.monotonic() - start < SHOWN_WITHIN_S
    finally:
        app.do_quit()
        thread.join(10)


def test_another_machines_file_synced_in_is_shown_within_two_seconds(tmp_path):
    """Each source says where its new sessions appear (`Source.watch_folders`): the sessions folder, and with
    sharing the machines folder, where a sync tool renames another machine's new file over its old one."""
    from helpers.sync_machines import boxes

    here, there = boxes(tmp_path, "here", "there")
    folder = make_session(there.sessions, "1796100000000_far1", started_now(), [user("u0", now_ms())])
    versions = []
    for cost in (0.25, 0.5):  # the other machine's file with one call today, then with two
        append_call(folder, cost)
        e = there.engine()
        e.refresh()
        e.close()
        versions.append(there.file().read_bytes())
        there.file().unlink()  # (so the next refresh writes it at once)
    machines = there.file().parent
    (machines / "incoming.tmp").write_bytes(versions[0])
    (machines / "incoming.tmp").rename(there.file())
    here.configure(refresh_seconds=300)
    app = TrayApp(here.engine(), host.load_pystray("dummy"), host.capabilities("dummy"))
    assert str(here.sessions) in app.engine.watch_folders() and str(machines) in app.engine.watch_folders()
    shown = Shown(app)
    thread = threading.Thread(target=app.run, name="tray", daemon=True)
    thread.start()
    try:
        assert shown.wait_for(lambda t: t and "$0.25" in t[-1], 30), shown.tooltips
        assert app.waker is not None, "inotify_init1 failed on this machine"
        assert str(machines) in app.waker.watched()
        start = time.monotonic()
        (machines / "incoming.tmp").write_bytes(versions[1])  # as a sync tool does: a new file renamed over
        (machines / "incoming.tmp").rename(there.file())
        assert shown.wait_for(lambda t: "$0.75" in t[-1], SHOWN_WITHIN_S), shown.tooltips[-1]
        assert time.monotonic() - start < SHOWN_WITHIN_S
    finally:
        app.do_quit()
        thread.join(10)
