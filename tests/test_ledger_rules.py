"""The counting rules on hand-made sessions: forks, copies, subagents, ids, times, rollups, each call once."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from helpers.corpus import (
    QUIRKS,
    age,
    assert_sums,
    assistant,
    counted,
    dumps,
    expected_sessions,
    make_session,
    manifest,
    messages_doc,
    ms,
    user,
    write_json,
)
from helpers.ledgers import REAL, T0, append_call, assert_no_write_needed, cline, empty, sessions, total  # noqa: F401 (fixtures)

# ---- the rules, on hand-made sessions ------------------------------------------------------------------


def test_fork_counted_once_owned_by_the_earliest(ledger, empty):
    parent, fork = "1796020000000_paren", "1796020500000_forkd"
    shared = [assistant("msg_shared01", ms(T0), 1000, 10, cost=0.01), assistant("msg_shared02", ms(T0), 2000, 20)]
    make_session(
        empty,
        fork,
        "2026-11-30T09:00:00.000Z",
        shared + [assistant("msg_forkonly", ms(T0), 300, 3)],
        metadata={"title": "fork", "fork": {"forkedFromSessionId": parent}},
    )
    ledger.refresh(empty)  # the fork first: its copies count for now
    assert counted(ledger)[:2] == (3, 3300)
    make_session(empty, parent, T0, shared)
    ledger.refresh(empty)  # the parent appears: it owns what it had first
    assert counted(ledger)[:2] == (3, 3300)
    owners = dict(ledger.query("SELECT key, session_id FROM calls WHERE counted=1"))
    assert owners == {"msg_shared01": parent, "msg_shared02": parent, "msg_forkonly": fork}
    assert ledger.query("SELECT forked_from FROM sessions WHERE id=?", (fork,)) == [(parent,)]


def test_a_fork_with_no_messages_file_does_not_count_its_parent_again(ledger, empty):
    """A real /fork copies the parent's usage into the fork's `metadata.usage` (docs/formats/cline-cli.md). While
    the fork has no readable messages file, that rollup must not count again what the parent's calls already count."""
    parent, fork = "1796020000000_paren", "1796020500000_forkd"
    make_session(empty, parent, T0, [assistant("msg_parent01", ms(T0), 1000, 10, cost=0.01)])
    usage = {"inputTokens": 1000, "outputTokens": 10, "cacheReadTokens": 0, "cacheWriteTokens": 0, "totalCost": 0.01}
    make_session(
        empty,
        fork,
        "2026-11-30T09:00:00.000Z",
        None,  # no messages file (not written yet, or lost)
        status="running",
        metadata={"title": "fork", "fork": {"forkedFromSessionId": parent}, "usage": usage},
    )
    ledger.refresh(empty)
    assert counted(ledger)[:2] == (1, 1000)  # the parent's one call, once


def test_copied_folder_counted_once(ledger, empty):
    a, b = "1796020000000_orign", "1796020000000_copyy"
    msgs = [assistant("msg_copied01", ms(T0), 1000, 10, cost=0.01), assistant("msg_copied02", ms(T0), 500, 5)]
    make_session(empty, a, T0, msgs)
    make_session(empty, b, T0, msgs, session_id=a)  # same start: a tie, still once
    ledger.refresh(empty)
    assert counted(ledger)[:2] == (2, 1500)
    assert len({s for (s,) in ledger.query("SELECT session_id FROM calls WHERE counted=1")}) == 1


def test_subagents_and_teammates_count_once_for_their_session(ledger, empty):
    sid = "1796020000000_teams"
    make_session(
        empty,
        sid,
        T0,
        [assistant("msg_lead0001", ms(T0), 1000, 10, tools=("spawn_agent",))],
        agents={
            "agent_1796020000100_abcdef.messages.json": ("subagent", [assistant("msg_sub00001", ms(T0), 200, 2)]),
            "worker__Ab12Cd.messages.json": ("teammate", [assistant("msg_team0001", ms(T0), 30, 3)]),
        },
    )
    ledger.refresh(empty)
    rows = sorted(ledger.query("SELECT key, session_id, agent FROM calls WHERE counted=1"))
    assert rows == [("msg_lead0001", sid, "lead"), ("msg_sub00001", sid, "subagent"), ("msg_team0001", sid, "teammate")]


def test_messages_without_ids_in_different_files_do_not_collide(ledger, empty):
    sid = "1796020000000_noids"
    lead, sub = assistant(None, ms(T0), 100, 1), assistant(None, ms(T0), 20, 2)
    del lead["id"], sub["id"]
    make_session(empty, sid, T0, [lead], agents={"agent_1796020000100_abcdef.messages.json": ("subagent", [sub])})
    ledger.refresh(empty)
    assert counted(ledger)[:3] == (2, 120, 3)


def test_tmp_files_ignored(ledger, empty):
    sid = "1796020000000_tmpfl"
    folder = make_session(empty, sid, T0, [assistant("msg_real0001", ms(T0), 100, 1)])
    extra = dumps(messages_doc(sid, [assistant("msg_temp0001", ms(T0), 999, 9)]))
    (folder / f"{sid}.messages.json.4242.0f8e2c1a.tmp").write_bytes(extra)
    (folder / f"{sid}.json.4242.0f8e2c1a.tmp").write_bytes(b"{")
    (folder / f"{sid}.compaction.json.1.2.tmp").write_bytes(extra)
    stats = ledger.refresh(empty)
    assert stats.files_read == 2 and stats.errors == {}
    assert counted(ledger)[:2] == (1, 100)


@pytest.mark.parametrize(
    "content", [None, b"", b"[1, 2]", b'{"session_id": ', b'"text"'], ids=["missing", "empty", "array", "cut", "string"]
)
def test_folder_without_a_parseable_manifest_is_not_a_session(ledger, empty, content):
    sid = "1796020000000_nomnf"
    folder = empty / sid
    write_json(folder / f"{sid}.messages.json", messages_doc(sid, [assistant("msg_orphan01", ms(T0), 100, 1)]))
    write_json(folder / "other.json", manifest(sid, T0))  # not <id>.json
    if content is not None:
        (folder / f"{sid}.json").write_bytes(content)
    ledger.refresh(empty)
    assert ledger.query("SELECT COUNT(*) FROM sessions")[0][0] == 0
    assert counted(ledger)[0] == 0
    if content is not None:  # a broken file that just changed is retried for a while (it may be mid-write)
        age(folder / f"{sid}.json")
        ledger.refresh(empty)
    assert_no_write_needed(ledger, empty)
    write_json(folder / f"{sid}.json", manifest(sid, T0))  # now it is one
    ledger.refresh(empty)
    assert ledger.query("SELECT id FROM sessions") == [(sid,)]
    assert counted(ledger)[:2] == (1, 100)


def test_rollup_from_usage_only_when_no_message_has_metrics(ledger, empty):
    sid = "1796020000000_rollu"
    raw = json.loads((QUIRKS / "manifests" / "rollup.json").read_text())
    usage = raw["metadata"]["usage"]
    make_session(empty, sid, T0, None, metadata=raw["metadata"])
    ledger.refresh(empty)
    assert_sums(
        counted(ledger),
        (
            1,
            usage["inputTokens"],
            usage["outputTokens"],
            usage["cacheReadTokens"],
            usage["cacheWriteTokens"],
            usage["totalCost"],
        ),
    )
    assert ledger.query("SELECT ts_ms FROM calls") == [(ms(T0),)]
    path = empty / sid / f"{sid}.messages.json"
    write_json(path, messages_doc(sid, [user("u1", ms(T0))]))  # a file with no metrics yet
    ledger.refresh(empty)
    assert counted(ledger)[0] == 1
    write_json(path, messages_doc(sid, [user("u1", ms(T0)), assistant("msg_first001", ms(T0), 10, 1, cost=0.5)]))
    ledger.refresh(empty)
    assert_sums(counted(ledger), (1, 10, 1, 0, 0, 0.5))  # the messages replace the rollup, never add to it


def test_rollups_of_manifests_without_session_id_stay_apart(ledger, empty):
    raw = json.loads((QUIRKS / "manifests" / "rollup.json").read_text())
    for sid in ("1796020000000_anon1", "1796020000001_anon2"):
        make_session(empty, sid, T0, None, metadata=raw["metadata"], session_id=None)
    ledger.refresh(empty)
    assert counted(ledger)[0] == 2


def test_aggregate_usage_alone_counts_nothing(ledger, empty):
    raw = json.loads((QUIRKS / "manifests" / "aggregate_only.json").read_text())
    make_session(empty, "1796020000000_aggro", T0, None, metadata=raw["metadata"])
    ledger.refresh(empty)
    assert counted(ledger)[0] == 0


def test_co_located_messages_preferred_over_messages_path(ledger, empty, tmp_path):
    sid = "1796020000000_coloc"
    elsewhere = tmp_path / "elsewhere" / f"{sid}.messages.json"
    write_json(elsewhere, messages_doc(sid, [assistant("msg_stale001", ms(T0), 999, 9)]))
    make_session(empty, sid, T0, [assistant("msg_here0001", ms(T0), 100, 1)], messages_path=str(elsewhere))
    stats = ledger.refresh(empty)
    assert stats.files_read == 2  # manifest and the co-located file; never the other
    assert ledger.query("SELECT key FROM calls WHERE counted=1") == [("msg_here0001",)]


def test_messages_path_used_when_co_located_is_missing(ledger, empty, tmp_path):
    sid = "1796020000000_remot"
    elsewhere = tmp_path / "elsewhere" / f"{sid}.messages.json"
    write_json(elsewhere, messages_doc(sid, [assistant("msg_remote01", ms(T0), 100, 1)]))
    make_session(empty, sid, T0, None, messages_path=str(elsewhere))
    ledger.refresh(empty)
    assert ledger.query("SELECT key, session_id FROM calls WHERE counted=1") == [("msg_remote01", sid)]
    assert_no_write_needed(ledger, empty)
    append_call(elsewhere, assistant("msg_remote02", ms(T0), 200, 2))
    assert ledger.refresh(empty).files_read == 1
    assert counted(ledger)[:2] == (2, 300)
    # the co-located file appears (with both calls): used from now on, nothing doubled
    shutil.copy(elsewhere, empty / sid / f"{sid}.messages.json")
    ledger.refresh(empty)
    assert counted(ledger)[:2] == (2, 300)
    assert_no_write_needed(ledger, empty)


def test_messages_path_used_when_co_located_never_parsed(ledger, empty, tmp_path):
    sid = "1796020000000_brokn"
    elsewhere = tmp_path / "elsewhere" / f"{sid}.messages.json"
    write_json(elsewhere, messages_doc(sid, [assistant("msg_remote01", ms(T0), 100, 1)]))
    make_session(empty, sid, T0, None, messages_path=str(elsewhere))
    (empty / sid / f"{sid}.messages.json").write_bytes(b"\x00\x01")
    ledger.refresh(empty)
    assert counted(ledger)[:2] == (1, 100)


def test_messages_path_into_another_session_is_not_borrowed(ledger, empty):
    a, b = "1796020000000_owner", "1796020000001_stale"
    make_session(empty, a, T0, [assistant("msg_owned001", ms(T0), 100, 1)])
    make_session(
        empty, b, "2026-11-30T07:00:00.000Z", None, messages_path=str(empty / a / f"{a}.messages.json")
    )  # b would own it: it started earlier
    ledger.refresh(empty)
    assert ledger.query("SELECT session_id FROM calls WHERE counted=1") == [(a,)]


def test_missing_time_is_the_session_start_and_missing_model_the_manifests(ledger, empty):
    sid = "1796020000000_notsm"
    msg = assistant("msg_nots0001", 0, 100, 1, model=None)
    make_session(empty, sid, "2026-11-29T23:59:00.000Z", [msg], model="deepseek-chat")
    ledger.refresh(empty)
    assert ledger.query("SELECT ts_ms, model FROM calls") == [(ms("2026-11-29T23:59:00Z"), "deepseek-chat")]


def test_missing_time_without_a_start_is_the_time_in_the_session_id(ledger, empty):
    sid = "1796020000000_nostr"
    make_session(empty, sid, None, [assistant("msg_nost0001", 0, 100, 1), assistant("msg_nost0002", None, 200, 2)])
    ledger.refresh(empty)
    assert ledger.query("SELECT ts_ms FROM calls") == [(1796020000000,)] * 2
    assert ledger.query("SELECT started_ms FROM sessions") == [(None,)]  # the start itself stays unknown


def test_missing_time_without_a_start_or_a_time_in_the_id_is_the_manifests_mtime(ledger, empty):
    folder = make_session(
        empty,
        "imported-session",
        None,
        [assistant("msg_nost0001", 0, 100, 1)],
        metadata={"usage": {"inputTokens": 5, "outputTokens": 1}},
    )
    make_session(empty, "99_abcde", None, None, metadata={"usage": {"inputTokens": 7, "outputTokens": 1}})
    when_ns = ms("2026-11-30T06:00:00Z") * 10**6
    for path in (folder / "imported-session.json", empty / "99_abcde" / "99_abcde.json"):
        os.utime(path, ns=(when_ns, when_ns))
    ledger.refresh(empty)
    assert ledger.query("SELECT key, ts_ms FROM calls ORDER BY key") == [
        ("99_abcde:rollup", when_ns // 10**6),
        ("msg_nost0001", when_ns // 10**6),
    ]


def test_quirk_files_in_sessions(ledger, empty):
    """The hand-made messages files, as the lead files of sessions: parsed and counted like the parser says."""
    from trayburn.sources.cline_cli.parse import parse_messages

    want = 0
    for i, path in enumerate(sorted((QUIRKS / "messages").glob("*.json"))):
        sid = f"17960200000{i:02d}_quirk"
        (empty / sid).mkdir()
        write_json(empty / sid / f"{sid}.json", manifest(sid, T0))
        shutil.copy(path, empty / sid / f"{sid}.messages.json")
        want += len(parse_messages(path.read_bytes(), sid).calls)
    stats = ledger.refresh(empty)
    assert stats.errors == {}
    assert counted(ledger)[0] == want
    zero = ledger.query("SELECT cost FROM calls WHERE key='msg_zero'")
    assert zero == [(0.0,)]  # a reported 0 is kept as 0, not as "no cost"


def copies_of_the_corpus(dest: Path, n: int) -> None:
    """n renamed copies of every recorded session (as if copied between machines): same messages."""
    for i in range(n):
        for folder in REAL.iterdir():
            sid = f"{folder.name}{i}"
            (dest / sid).mkdir()
            for f in folder.iterdir():
                (dest / sid / f.name.replace(folder.name, sid)).write_bytes(f.read_bytes())


def test_threads_sharing_one_ledger_refresh_safely(ledger, empty):
    import threading

    copies_of_the_corpus(empty, 5)
    barrier, errors = threading.Barrier(4), []

    def refresh():
        barrier.wait(30)
        try:
            ledger.refresh(empty)
            counted(ledger)  # a read from another thread, maybe during someone's refresh
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=refresh) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    assert_sums(counted(ledger), total())  # five copies of everything: still each call once
    owners = {s for (s,) in ledger.query("SELECT DISTINCT session_id FROM calls WHERE counted=1")}
    assert owners == {f"{sid}0" for sid in expected_sessions()}  # same starts: the first name wins, always


def test_a_file_replaced_with_the_same_size_and_time_is_seen_by_its_inode(ledger, empty):
    sid = "1796020000000_inode"
    make_session(empty, sid, T0, [assistant("m1", ms(T0), 100, 1, cost=0.5)])
    ledger.refresh(empty)
    path = empty / sid / f"{sid}.messages.json"
    st = path.stat()
    new = path.with_name("new")
    new.write_bytes(path.read_bytes().replace(b'"cost": 0.5', b'"cost": 0.7'))
    os.utime(new, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(new, path)
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    assert ledger.refresh(empty).files_read == 1
    assert counted(ledger)[5] == pytest.approx(0.7)
