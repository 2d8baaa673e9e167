"""A new process's first scan takes the folder listings an earlier process saved (`layout.Saved`): it lists
only the folders whose stamp moved since, and finds exactly what a full listing finds, whatever happened to
the folders meanwhile (a file added to an ended session, one removed, one rewritten in place, a folder
replaced), and whatever happened to the saved file (damaged, of another sessions folder, unwritable)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from helpers.corpus import (
    a_minute_later,
    age_all,
    assistant,
    dumps,
    make_session,
    messages_doc,
    ms,
    write_in_place,
    write_json,
)
from helpers.listings import listings  # noqa: F401 (fixture)

from trayburn.sources.cline_cli import layout

T0 = "2026-11-30T08:00:00.000Z"


def sessions_with_three(tmp_path: Path) -> Path:
    sessions = tmp_path / "sessions"
    for i in range(3):
        sid = f"179603000000{i}_s{i}"
        make_session(sessions, sid, T0, [assistant(f"msg_{i}", ms(T0), 100, 10, cost=0.1)])
    make_session(
        sessions,
        "1796030000009_agents",
        T0,
        [assistant("msg_9", ms(T0), 100, 10)],
        agents={"agent_b.messages.json": ("subagent", []), "agent_a.messages.json": ("subagent", [])},
    )
    age_all(sessions)
    return sessions


def first_scan(sessions: Path, saved: Path) -> layout.Scan:
    """The first scan of a new process (a new ScanCache), as if a minute after the files were written."""
    return layout.scan(str(sessions), layout.ScanCache(saved=str(saved), wall_ns=a_minute_later))


def plain(scan: layout.Scan) -> list[tuple]:
    return [(f.session_id, f.path, f.manifest, list(f.messages)) for f in scan.folders]


def full_listing(sessions: Path) -> list[tuple]:
    """What a scan that saves nothing and lists every folder finds."""
    return plain(layout.scan(str(sessions), layout.ScanCache()))


def test_a_second_process_lists_no_folder_and_finds_the_same(tmp_path, listings):
    sessions, saved = sessions_with_three(tmp_path), tmp_path / "listings.json"
    assert plain(first_scan(sessions, saved)) == full_listing(sessions)
    listings.clear()
    again = first_scan(sessions, saved)
    assert listings == []  # neither the sessions folder nor any session folder
    assert plain(again) == full_listing(sessions)
    # the subagents' files in the order a listing gives them: the lead's first, then by name
    agents = next(f for f in again.folders if f.session_id.endswith("_agents"))
    assert [os.path.basename(f.path) for f in agents.messages] == [
        "1796030000009_agents.messages.json",
        "agent_a.messages.json",
        "agent_b.messages.json",
    ]


def test_a_file_added_to_an_ended_session_is_found(tmp_path, listings):
    sessions, saved = sessions_with_three(tmp_path), tmp_path / "listings.json"
    first_scan(sessions, saved)
    added = sessions / "1796030000001_s1" / "agent_x.messages.json"
    write_json(added, messages_doc("1796030000001_s1__agent_x", [], agent="subagent"))
    listings.clear()
    again = first_scan(sessions, saved)
    assert [p for p in listings if p.endswith("_s1")] and len(listings) == 1  # that folder alone listed
    assert str(added) in {f.path for d in again.folders for f in d.messages}
    assert plain(again) == full_listing(sessions)


def test_a_file_removed_or_rewritten_in_place_is_seen(tmp_path):
    sessions, saved = sessions_with_three(tmp_path), tmp_path / "listings.json"
    first_scan(sessions, saved)
    (sessions / "1796030000009_agents" / "agent_a.messages.json").unlink()
    lead = sessions / "1796030000002_s2" / "1796030000002_s2.messages.json"
    write_in_place(lead, lead.read_bytes() + b"\n")
    again = first_scan(sessions, saved)
    assert plain(again) == full_listing(sessions)
    assert next(f for f in again.folders if f.session_id.endswith("_s2")).messages[0].checkpoint.size == (
        lead.stat().st_size
    )


def test_a_folder_removed_replaced_or_added_is_seen(tmp_path):
    sessions, saved = sessions_with_three(tmp_path), tmp_path / "listings.json"
    first_scan(sessions, saved)
    shutil.rmtree(sessions / "1796030000000_s0")
    shutil.rmtree(sessions / "1796030000001_s1")
    make_session(sessions, "1796030000001_s1", T0, None)  # the same name, now without its messages file
    make_session(sessions, "1796030000005_new", T0, [assistant("msg_5", ms(T0), 1, 1)])
    again = first_scan(sessions, saved)
    assert plain(again) == full_listing(sessions)
    assert [f.session_id for f in again.folders] == [
        "1796030000001_s1",
        "1796030000002_s2",
        "1796030000005_new",
        "1796030000009_agents",
    ]


def test_a_folder_changed_a_moment_ago_is_not_saved(tmp_path, listings):
    """Its stamp could stay as it is through a change within the same timestamp tick: listed again next time."""
    sessions, saved = sessions_with_three(tmp_path), tmp_path / "listings.json"
    layout.scan(str(sessions), layout.ScanCache(saved=str(saved)))  # the real clock: every folder made just now
    listings.clear()
    first_scan(sessions, saved)
    assert len(listings) == 1 + 4  # the sessions folder and each session's


@pytest.mark.parametrize(
    "content",
    [b"", b"{not json", b'{"version": 1}', b'{"version": 1, "dir": 3, "names": 1, "folders": []}', b"\xff\xfe"],
)
def test_a_damaged_saved_file_counts_as_none(tmp_path, content):
    sessions, saved = sessions_with_three(tmp_path), tmp_path / "listings.json"
    saved.write_bytes(content)
    assert plain(first_scan(sessions, saved)) == full_listing(sessions)
    assert plain(first_scan(sessions, saved)) == full_listing(sessions)  # and it was written anew


def test_a_saved_file_with_wrong_names_only_costs_listings(tmp_path):
    """Saved names that are not there (a file hand-edited, or another version's) send the folder to a listing."""
    sessions, saved = sessions_with_three(tmp_path), tmp_path / "listings.json"
    first_scan(sessions, saved)
    doc = json.loads(saved.read_bytes())
    for entry in doc["folders"].values():
        entry[4] = ["nothing-here.messages.json"]
    saved.write_bytes(dumps(doc))
    assert plain(first_scan(sessions, saved)) == full_listing(sessions)


@pytest.mark.parametrize(
    "entry", [[], [1, 2], {"mtime": 1}, "text", None, [None, None, None, None, 7], ["a", "b", "c", "d", ["x"], "m"]]
)
def test_a_saved_folder_entry_of_another_shape_only_costs_its_listing(tmp_path, entry):
    """A folder's entry that is not the list it should be (too short, a dict, a string, wrong types) sends that
    folder to a listing, whatever it holds: no exception out of the scan."""
    sessions, saved = sessions_with_three(tmp_path), tmp_path / "listings.json"
    first_scan(sessions, saved)
    doc = json.loads(saved.read_bytes())
    for name in doc["folders"]:
        doc["folders"][name] = entry
    saved.write_bytes(dumps(doc))
    assert plain(first_scan(sessions, saved)) == full_listing(sessions)
    assert plain(first_scan(sessions, saved)) == full_listing(sessions)  # and it was written anew


def test_another_sessions_folder_does_not_use_them(tmp_path):
    sessions, saved = sessions_with_three(tmp_path), tmp_path / "listings.json"
    first_scan(sessions, saved)
    other = tmp_path / "other"
    shutil.copytree(sessions, other)
    age_all(other)
    (other / "1796030000000_s0" / "agent_z.messages.json").write_bytes(b"[]")
    assert plain(first_scan(other, saved)) == full_listing(other)


def test_an_unwritable_place_for_them_changes_nothing(tmp_path):
    sessions = sessions_with_three(tmp_path)
    blocked = tmp_path / "a-file"
    blocked.write_bytes(b"")
    assert plain(first_scan(sessions, blocked / "listings.json")) == full_listing(sessions)
