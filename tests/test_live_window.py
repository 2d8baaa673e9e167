"""Live, in an open summary window: a Cline call written to a session's messages file is shown within two seconds
though the window's timer refreshes every five minutes (the waker's file handler in Tk's own loop; Linux). A real
Xvfb, real files written in place as the CLI writes them, the real engine; the wait is on the window's own rows."""

from __future__ import annotations

import sys
import time
from datetime import date

import pytest
from helpers.corpus import assistant, make_session, user
from helpers.live import SHOWN_WITHIN_S, append_call, now_ms, started_now

from trayburn.engine import Engine

pytest.importorskip("tkinter", reason="the summary window needs tkinter (apt-get install python3-tk)")
from helpers.window_harness import display, env, open_window, wait_for  # noqa: E402, F401  (fixtures)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's; others poll")


def test_a_call_appended_reaches_an_open_window_within_two_seconds(open_window, tmp_path):
    sessions = tmp_path / "cline" / "data" / "sessions"
    running = make_session(
        sessions,
        "1796100000000_win01",
        started_now(),
        [user("u0", now_ms()), assistant("msg_first001", now_ms(), 1000, 10, cost=0.25)],
        status="running",
    )
    config = tmp_path / "settings.toml"
    config.write_text(f'sessions_dir = "{sessions}"\nrefresh_seconds = 300\n')
    engine = Engine(config, tmp_path / "state")
    try:
        win = open_window(engine, refresh=False, today=date.today)
        win.start()
        wait_for(lambda: (win.root.update(), win.updated_at)[1], "the window's first refresh")
        assert win.waker is not None and str(running) in win.waker.watched()
        table = win.day_view.sessions
        calls = lambda: str(table.totals.item("total", "values")[5])  # noqa: E731
        assert calls() == "1"
        for n in (2, 3):
            start = time.monotonic()
            append_call(running, 0.5)
            wait_for(lambda n=n: (win.root.update(), calls() == str(n))[1], "the call in the window", SHOWN_WITHIN_S)
            assert time.monotonic() - start < SHOWN_WITHIN_S
    finally:
        engine.close()
