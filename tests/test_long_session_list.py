"""A long sessions list is made one session at a time (`Engine.sessions_listed`, what `trayburn sessions` prints),
its rows read SESSION_CHUNK at a time: the same summaries in the same order as the whole list (`Engine.sessions`),
across chunk boundaries and among sessions that started in the same second."""

from __future__ import annotations

import json
from datetime import date

from helpers.corpus import age_all, assistant, iso, isolated_env, make_session, set_tz, user  # noqa: F401

from trayburn import cli
from trayburn.engine import Engine
from trayburn.ledger import SESSION_CHUNK

T = 1_796_086_800_000  # 2026-12-01T00:00:00Z
N = 2 * SESSION_CHUNK + 203  # three chunks, the last one short


def a_long_history(tmp_path):
    """N sessions, three to a second (their list order among themselves is the ledger's); every tenth has no
    messages file (listed by its start alone); every seventh has a subagent."""
    sessions = tmp_path / "cline" / "data" / "sessions"
    for i in range(N):
        start = T + (i // 3) * 1000 + i % 3
        sid = f"{start}_s{i:04d}"
        messages = None if i % 10 == 0 else [user(f"u{i}", start + 1), assistant(f"m{i}", start + 2, cost=0.01 * i)]
        agents = {f"agent_{sid}.messages.json": ("subagent", [assistant(f"a{i}", start + 3)])} if i % 7 == 0 else {}
        make_session(sessions, sid, iso(start), messages, agents)
    age_all(tmp_path / "cline")
    return isolated_env(tmp_path, CLINE_DIR=str(tmp_path / "cline"), TZ="UTC")


def test_the_list_made_one_at_a_time_is_the_whole_list(tmp_path, monkeypatch, set_tz):
    set_tz("UTC")
    env = a_long_history(tmp_path)
    engine = Engine(env=env)
    engine.refresh()
    whole = engine.sessions(None, None)
    assert len(whole) == N
    assert list(engine.sessions_listed(None, None)) == whole
    day = date(2026, 12, 1)
    assert list(engine.sessions_listed(day, day)) == engine.sessions(day, day)
    assert list(engine.sessions_listed(date(2030, 1, 1), None)) == []
    engine.close()


def test_sessions_all_json_prints_the_whole_list(tmp_path, monkeypatch, capsys, set_tz):
    set_tz("UTC")
    env = a_long_history(tmp_path)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert cli.main(["sessions", "--all", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    engine = Engine(env=env)
    engine.refresh()
    assert printed == [json.loads(json.dumps(s.to_json())) for s in engine.sessions(None, None)]  # (USD: as is)
    assert len(printed) == N and len({s["id"] for s in printed}) == N
    engine.close()
