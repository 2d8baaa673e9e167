"""The ledger on the real recording: totals equal EXPECTED.json and a refresh reads only what changed."""

from __future__ import annotations

import pytest
from helpers.corpus import (
    Ledger,
    a_minute_later,
    as_sums,
    assert_sums,
    assistant,
    bump_mtime,
    counted,
    expected,
    expected_sessions,
    make_session,
    messages_doc,
    ms,
    write_in_place,
    write_json,
)
from helpers.ledgers import (  # noqa: F401 (fixtures)
    FILE_IS,
    LONG,
    PLAIN,
    REAL,
    T0,
    append_call,
    assert_no_write_needed,
    cline,
    corpus_files,
    empty,
    sessions,
    total,
)

from trayburn.sources.cline_cli.layout import FULL_SWEEP_S

# ---- the recorded corpus --------------------------------------------------------------------------------


def test_corpus_totals_equal_expected(ledger):
    stats = ledger.refresh(REAL)
    assert stats.errors == {}
    assert (stats.files_read, stats.bytes_read) == (len(corpus_files()), sum(p.stat().st_size for p in corpus_files()))
    assert_sums(counted(ledger), total())
    assert ledger.query("SELECT COUNT(*) FROM sessions")[0][0] == expected()["session_count"]


@pytest.mark.parametrize("sid", sorted(expected_sessions()))
def test_session_totals_equal_expected(ledger, sid):
    ledger.refresh(REAL)
    assert_sums(counted(ledger, "session_id=?", (sid,)), as_sums(expected_sessions()[sid]["totals"]))


def test_file_totals_and_agents_equal_expected(ledger):
    ledger.refresh(REAL)
    for sid, s in expected_sessions().items():
        for f in s["message_files"]:
            path = str(REAL / sid / f["file"])
            assert_sums(
                counted(ledger, FILE_IS, (path,)),
                (
                    f["calls"],
                    *(f[k] for k in ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens")),
                    f["cost"],
                ),
            )
            agents = {a for (a,) in ledger.query(f"SELECT DISTINCT agent FROM calls WHERE {FILE_IS}", (path,))}
            assert agents <= {f["agent"]}
            owners = {o for (o,) in ledger.query(f"SELECT DISTINCT session_id FROM calls WHERE {FILE_IS}", (path,))}
            assert owners <= {sid}


def test_no_rollup_where_messages_have_metrics(ledger):
    ledger.refresh(REAL)
    assert ledger.query("SELECT COUNT(*) FROM calls WHERE key LIKE '%:rollup'")[0][0] == 0


def test_second_refresh_reads_nothing(ledger):
    ledger.refresh(REAL)
    stats = ledger.refresh(REAL)
    assert (stats.files_read, stats.bytes_read, stats.errors) == (0, 0, {})
    assert_no_write_needed(ledger, REAL)
    again = Ledger(ledger.path)  # a new process, same ledger
    assert (again.refresh(REAL).files_read, again.refresh(REAL).bytes_read) == (0, 0)
    assert_sums(counted(again), total())
    again.close()


# ---- incremental refresh ---------------------------------------------------------------------------------


def test_appending_a_call_to_the_messages_file_only_is_seen(ledger, sessions):
    ledger.refresh(sessions)
    manifest_before = (sessions / LONG / f"{LONG}.json").read_bytes()
    call = assistant("msg_new00001", ms("2026-11-30T08:30:00Z"), 7000, 70, 5000, 100, cost=0.001)
    data = append_call(sessions / LONG / f"{LONG}.messages.json", call)
    stats = ledger.refresh(sessions)
    assert (stats.files_read, stats.bytes_read) == (1, len(data))
    assert (sessions / LONG / f"{LONG}.json").read_bytes() == manifest_before
    want = list(total())
    want = [want[0] + 1, want[1] + 7000, want[2] + 70, want[3] + 5000, want[4] + 100, want[5] + 0.001]
    assert_sums(counted(ledger), want)
    assert ledger.refresh(sessions).files_read == 0


def test_a_new_subagent_file_in_a_known_session_is_seen(tmp_path, sessions):
    clock = [0.0]  # a completed session whose other files stay as they were: found by the next full sweep
    ledger = Ledger(tmp_path / "state" / "ledger.db", clock=lambda: clock[0], wall_ns=a_minute_later)
    ledger.refresh(sessions)
    ledger.refresh(sessions)  # a first refresh keeps no listing: the second does
    agent = sessions / PLAIN / "agent_1796026733999_abcdef.messages.json"
    write_json(agent, messages_doc(f"{PLAIN}__x", [assistant("msg_sub00001", ms(T0), 500, 5)], agent="subagent"))
    clock[0] += FULL_SWEEP_S
    stats = ledger.refresh(sessions)
    assert stats.files_read == 1
    assert counted(ledger)[0] == total()[0] + 1
    assert ledger.query("SELECT session_id, agent FROM calls WHERE key='msg_sub00001'") == [(PLAIN, "subagent")]


def test_a_rewrite_keeping_size_is_seen_by_its_mtime(ledger, empty):
    make_session(empty, "1796020000000_aaaaa", T0, [assistant("m1", ms(T0), 100, 1, cost=0.5)])
    ledger.refresh(empty)
    path = empty / "1796020000000_aaaaa" / "1796020000000_aaaaa.messages.json"
    write_in_place(path, path.read_bytes().replace(b'"cost": 0.5', b'"cost": 0.7'))
    bump_mtime(path)
    assert ledger.refresh(empty).files_read == 1
    assert counted(ledger)[5] == pytest.approx(0.7)
