"""Incomplete is said: while history is still being read, `today` says its figure covers the sessions read
so far. Today-first reads first the sessions whose files changed since midnight; a session whose files carry
an older time but today's calls (a restored backup, `cp -p`, `rsync -t`) is read with the rest of the
history, so until then the figure says it may be short, in text and in --json."""

from __future__ import annotations

import json
import os
import time

import pytest
from helpers.corpus import assistant, iso, isolated_env, make_session

from trayburn import cli

DAY_MS = 86_400_000


@pytest.fixture
def restored(tmp_path, monkeypatch):
    """Today's control session (written now), a session restored with `cp -p` (today's call, files dated
    three days back), and 30 sessions of last month (history to read)."""
    sessions = tmp_path / "cline" / "data" / "sessions"
    now = int(time.time() * 1000)
    today_ms = now - 60_000
    make_session(sessions, f"{now - 120_000}_ctrl0", iso(now - 120_000), [assistant("m_ctrl", today_ms, cost=1.5)])
    old = make_session(
        sessions, f"{now - 90_000}_rest0", iso(now - 90_000), [assistant("m_restored", today_ms, cost=15.0)]
    )
    back = (now - 3 * DAY_MS) * 10**6
    for path in old.iterdir():
        os.utime(path, ns=(back, back))
    for i in range(30):
        t = now - (40 + i) * DAY_MS
        folder = make_session(sessions, f"{t}_old{i:02d}", iso(t), [assistant(f"m_old{i}", t + 1000, cost=0.01)])
        for path in folder.iterdir():
            os.utime(path, ns=((t + 2000) * 10**6,) * 2)
    for k, v in isolated_env(tmp_path, CLINE_DIR=str(tmp_path / "cline")).items():
        monkeypatch.setenv(k, v)
    monkeypatch.setattr(cli, "HISTORY_SLICE_S", 0.0)  # a machine too slow to read any history in the slice


def test_today_says_its_figure_covers_the_sessions_read_so_far(restored, capsys):
    assert cli.main(["today", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["complete"] is False
    read, total = first["sessions_read"]
    assert total == 32 and read < total
    assert first["cost_usd"] == pytest.approx(1.5)  # the control, written today, is read at once; the restored
    # session (today's call in files dated three days back) waits with the history, and the figure says so
    assert cli.main(["today"]) == 0
    text = capsys.readouterr().out
    assert "Still reading history" in text and "of 32 sessions so far; the figure covers those" in text
    assert cli.main(["sessions", "--all", "--json"]) == 0  # reads everything
    capsys.readouterr()
    assert cli.main(["today", "--json"]) == 0
    done = json.loads(capsys.readouterr().out)
    assert (done["complete"], done["sessions_read"]) == (True, None)
    assert done["cost_usd"] == pytest.approx(16.5)  # the restored session's call is today's too
    assert cli.main(["today"]) == 0
    assert "Still reading history" not in capsys.readouterr().out
