"""Faults stay local: garbage, foreign, symlinked, huge, newer-version and cloned-id machine files, a
reader in another process while the file is replaced, and the once-a-minute rhythm of writing."""

from __future__ import annotations

import multiprocessing
import os
import time
import zlib
from pathlib import Path

import msgspec
import pytest
from helpers.corpus import counted
from helpers.sync_machines import SESSION_IDS, boxes

from trayburn.sources import machine
from trayburn.sync.share import Sharing

OTHER = "0123456789abcdef"


def _gzip(body: object) -> bytes:
    packer = zlib.compressobj(6, zlib.DEFLATED, 31)
    return packer.compress(msgspec.json.encode(body)) + packer.flush()


def _machine_body(mid: str = OTHER, **changes: object) -> dict:
    body: dict = {
        "format": machine.MAGIC,
        "version": 1,
        "min_reader": 1,
        "machine": {"id": mid, "name": "elsewhere", "host": "feedfacefeedface"},
        "written_ms": 1796083200000,
        "trayburn": "9.9",
        "titles": False,
        "session_fields": list(machine.SESSION_FIELDS),
        "sessions": [["s1", 1796083200000, None, "completed", "proj", "cli", "gpt-4o", "openai", None, None, None]],
        "call_fields": list(machine.CALL_FIELDS),
        "calls": [["k1", 1796083201000, "gpt-4o", "openai", 100, 10, 0, 0, 0.5, 0, "lead"]],
    }
    body.update(changes)
    return body


@pytest.fixture
def here(tmp_path):
    (a,) = boxes(tmp_path, "a")
    a.copy_sessions(SESSION_IDS[:3])
    engine = a.engine()
    engine.refresh()
    yield a, engine, a.file().parent
    engine.close()


def test_a_newer_file_is_read_by_the_columns_this_trayburn_knows(here):
    a, engine, folder = here
    names = ["extra", *reversed(machine.CALL_FIELDS)]
    row = ["x", "lead", 0, 0.5, 0, 0, 10, 100, "openai", "gpt-4o", 1796083201000, "k1"]
    body = _machine_body(version=2, call_fields=names, calls=[row])
    (folder / f"{OTHER}{machine.EXT}").write_bytes(_gzip(body))
    mine = counted(engine.ledger)
    engine.refresh()
    assert counted(engine.ledger, "session_id LIKE ?", (f"{OTHER}/%",)) == (1, 100, 10, 0, 0, 0.5)
    assert counted(engine.ledger, "session_id NOT LIKE '%/%'") == mine


def test_a_file_needing_a_newer_reader_is_named_and_keeps_the_previous_import(here):
    a, engine, folder = here
    path = folder / f"{OTHER}{machine.EXT}"
    path.write_bytes(_gzip(_machine_body()))
    engine.refresh()
    before = counted(engine.ledger)
    path.write_bytes(_gzip(_machine_body(version=3, min_reader=3, calls=[])))
    engine.refresh()
    assert counted(engine.ledger) == before
    status = next(m for m in engine.sync_health().machines if m.id == OTHER)
    assert "newer trayburn" in (status.problem or "") and "upgrade" in (status.problem or "")


@pytest.mark.parametrize(
    "content",
    [
        b"\x00garbage" * 100,
        _gzip({"format": "somebody-else", "rows": []}),
        _gzip(_machine_body(calls=[["k1", -5, None, None, 1, 1, 1, 1, None, 0, None]])),
        _gzip(_machine_body(calls=[["k1", 1, None, None, 1, 1, 1, 1, None, 7, None]])),
        _gzip(_machine_body("fedcba9876543210")),  # another machine's content under this name
    ],
    ids=["garbage", "foreign", "bad-row", "bad-session", "wrong-id"],
)
def test_a_bad_file_never_stops_this_machines_figures(here, content):
    a, engine, folder = here
    mine = counted(engine.ledger)
    (folder / f"{OTHER}{machine.EXT}").write_bytes(content)
    stats = engine.refresh()
    assert counted(engine.ledger) == mine and stats.files_read == 1
    status = next(m for m in engine.sync_health().machines if m.id == OTHER)
    assert status.problem
    assert engine.health().kind == "ok"


def test_a_symlinked_or_special_file_is_never_read(here, tmp_path):
    a, engine, folder = here
    target = tmp_path / "elsewhere.json.gz"
    target.write_bytes(_gzip(_machine_body()))
    (folder / f"{OTHER}{machine.EXT}").symlink_to(target)
    os.mkfifo(folder / f"{'1' * 16}{machine.EXT}")
    mine = counted(engine.ledger)
    stats = engine.refresh()
    assert counted(engine.ledger) == mine and stats.bytes_read == 0
    assert any("symbolic link" in why for why in stats.errors.values())
    problems = {m.id: m.problem for m in engine.sync_health().machines}
    assert "symbolic link" in (problems[OTHER] or "") and "regular" in (problems["1" * 16] or "")


def test_a_gzip_bomb_is_refused_past_the_limit():
    bomb = _gzip(_machine_body(padding="0" * 1_000_000))  # ~1 KB packed, 1 MB unpacked
    assert len(bomb) < 5_000
    with pytest.raises(machine.FormatError) as caught:
        machine.decode(bomb, limit=100_000)
    assert caught.value.kind == "too_big" and "unpacked" in str(caught.value)
    assert machine.decode(bomb).calls  # under the real limit it is an ordinary file


def test_a_cloned_id_written_by_another_host_makes_this_machine_take_a_new_id_and_say_so(here):
    """No ping-pong and no silence: the machine that finds its own file written by someone else takes a new
    id, writes under it, says so in doctor, and counts the other's file as another machine's."""
    a, engine, folder = here
    old = a.machine_id()
    theirs = _gzip(_machine_body(old))  # another computer (another host) writing our id
    a.file().write_bytes(theirs)
    mine = counted(engine.ledger)
    a.copy_sessions(SESSION_IDS[3:5])
    engine.refresh()
    new = a.machine_id()
    assert new != old and (folder / f"{old}{machine.EXT}").read_bytes() == theirs  # theirs kept, not overwritten
    assert engine.last_share is not None and engine.last_share.problem is None
    assert machine.decode(a.file().read_bytes()).header.machine_id == new
    health = engine.sync_health()
    assert f"now shares as id {new}" in (health.renamed or "") and old in (health.renamed or "")
    engine.refresh()  # the old id's file is now another machine's: its one call counts, as its own
    assert counted(engine.ledger, "session_id LIKE ?", (f"{old}/%",)) == (1, 100, 10, 0, 0, 0.5)
    assert counted(engine.ledger, "session_id NOT LIKE '%/%'")[0] > mine[0]


def test_writes_at_once_then_at_most_once_a_minute(here):
    a, engine, folder = here
    now = [time.time()]
    sharing = Sharing(a.state, engine.ledger, clock=lambda: now[0])
    s = engine.settings
    first = sharing.after_refresh(s.sync_dir, "a", False, counted=True)
    assert first is not None
    written = first.shared_ms
    now[0] += 20
    state = sharing.after_refresh(s.sync_dir, "a", False, counted=True)
    assert state is not None and state.shared_ms == written and state.pending
    now[0] += 41
    state = sharing.after_refresh(s.sync_dir, "a", False, counted=False)
    assert state is not None and state.shared_ms == int(now[0] * 1000) and not state.pending
    now[0] += 3600
    state = sharing.after_refresh(s.sync_dir, "a", False, counted=False)  # nothing new: not written
    assert state is not None and state.shared_ms != int(now[0] * 1000)


def test_an_unwritable_machines_folder_is_a_problem_not_a_failure(tmp_path):
    """A file where the machines folder should be: what root (who writes whatever a folder's mode) meets too."""
    (a,) = boxes(tmp_path, "a")
    a.copy_sessions(SESSION_IDS[:3])
    (a.sync / "trayburn").mkdir()
    (a.sync / "trayburn" / "machines").write_text("in the way")
    engine = a.engine()
    engine.refresh()
    assert counted(engine.ledger)[0] > 0
    assert engine.last_share is not None and engine.last_share.problem_kind == "unwritable"
    assert "cannot write" in (engine.sync_health().problem or "")
    this = next(m for m in engine.sync_health().machines if m.this)  # no file of its own: still named (not "?")
    assert this.name == engine.sync_health().machine_name and this.name
    # while it stays unwritable, the export is tried again once a minute, not at every poll
    now = [time.time()]
    sharing = Sharing(a.state, engine.ledger, clock=lambda: now[0])
    sync = engine.settings.sync_dir
    tried = sharing.after_refresh(sync, "a", False, counted=False).tried_ms
    now[0] += 20
    assert sharing.after_refresh(sync, "a", False, counted=True).tried_ms == tried
    now[0] += 41
    again = sharing.after_refresh(sync, "a", False, counted=False)
    assert again.tried_ms == int(now[0] * 1000) and again.problem_kind == "unwritable"
    (a.sync / "trayburn" / "machines").unlink()  # the way cleared: written at the next try
    now[0] += 61
    assert sharing.after_refresh(sync, "a", False, counted=False).problem is None


def _read_loop(path: str, ready, stop, out) -> None:
    good = bad = 0
    ready.set()
    while not stop.is_set():
        try:
            data = Path(path).read_bytes()
        except FileNotFoundError:
            bad += 1
            continue
        try:
            machine.decode(data)
            good += 1
        except machine.FormatError:
            bad += 1
    out.put((good, bad))


def test_writes_are_atomic_under_a_reader_looping_in_another_process(here):
    a, engine, folder = here
    ctx = multiprocessing.get_context("spawn")
    ready, stop, out = ctx.Event(), ctx.Event(), ctx.Queue()
    reader = ctx.Process(target=_read_loop, args=(str(a.file()), ready, stop, out))
    reader.start()
    try:
        assert ready.wait(60), "the reader process did not start"
        now = [time.time()]
        sharing = Sharing(a.state, engine.ledger, clock=lambda: now[0])
        s = engine.settings
        deadline = time.monotonic() + 60
        writes = 0
        while writes < 40 and time.monotonic() < deadline:
            now[0] += 61
            state = sharing.after_refresh(s.sync_dir, f"a{writes}", writes % 2 == 0, counted=True)
            assert state is not None and state.problem is None
            writes += 1
    finally:
        stop.set()
        good, bad = out.get(timeout=60)
        reader.join(30)
    assert writes == 40 and good > 0 and bad == 0


def test_an_import_by_another_process_in_between_is_never_skipped_over(here):
    """The memo of what was imported is trusted only while the ledger's checkpoint of the file is the one
    it was made at: here a second engine (another process's) imported a version in between."""
    a, engine, folder = here
    path = folder / f"{OTHER}{machine.EXT}"

    def version(tokens: int, written: int) -> bytes:
        calls = [["k1", 1796083201000, "gpt-4o", "openai", tokens, 10, 0, 0, 0.5, 0, "lead"]]
        return _gzip(_machine_body(calls=calls, written_ms=written))

    path.write_bytes(version(100, 1))
    engine.refresh()
    other = a.engine()
    path.write_bytes(version(200, 2))
    other.refresh()
    other.close()
    path.write_bytes(version(100, 3))  # back to the first version's rows
    engine.refresh()
    assert counted(engine.ledger, "session_id LIKE ?", (f"{OTHER}/%",))[:2] == (1, 100)


def _peer(calls: int) -> bytes:
    """A peer's file of `calls` calls (40 a session), as a machine with a year and more of heavy use writes it."""
    sessions = [
        (f"1796{i:08d}_abcde", 1796026733097 + i, None, "completed", "proj", "cli", "gpt-4o", "openrouter")
        + (None, None, None)
        for i in range(calls // 40)
    ]
    rows = [
        (f"msg_{i:012d}", 1796026733097 + i * 1000, "anthropic/claude-sonnet-4.5", "openrouter", 51234, 812, 48000)
        + (1200, 0.012345, i // 40, "lead")
        for i in range(calls)
    ]
    header = machine.Header(1, 1, "0123456789abcdef", "peer", "feedfacefeedface", 1796026733097, "0.4", False)
    return machine.encode(machine.MachineDoc(header, sessions, rows))


@pytest.mark.slow  # (encodes and decodes 400,000 calls: about 10 s)
def test_a_400000_call_peer_is_read_whole_and_the_readers_bound_stays():
    """A year and more at 1,000 calls a day: the file an older reader refused whole (over its 32 MB unpacked) is
    read whole; the reader keeps its bounds (rows and bytes) for what is past them."""
    data = _peer(400_000)
    assert len(data) < machine.MAX_FILE_BYTES
    with pytest.raises(machine.FormatError) as caught:
        machine.decode(data, limit=machine.OLD_READER_BYTES)  # what trayburn 0.3 read at most
    assert caught.value.kind == "too_big"
    doc = machine.decode(data)
    assert len(doc.calls) == 400_000 and doc.calls[-1][0] == "msg_000000399999"
    fields = msgspec.json.encode({"session_fields": machine.SESSION_FIELDS, "call_fields": machine.CALL_FIELDS})[1:-1]
    over = b'{"format":"trayburn-machine","version":1,"machine":{"id":"0123456789abcdef"},' + fields
    over += b',"sessions":[],"calls":[' + b",".join([b"[]"] * (machine.MAX_CALLS + 1)) + b"]}"
    packer = zlib.compressobj(6, zlib.DEFLATED, 31)
    with pytest.raises(machine.FormatError) as caught:
        machine.decode(packer.compress(over) + packer.flush())
    assert caught.value.kind == "too_big" and f"{machine.MAX_CALLS:,}" in str(caught.value)


def test_the_writer_says_its_file_nears_the_readers_bound_well_before_it():
    from trayburn.sync.share import size_note

    assert size_note(100_000, 12 * 10**6) is None
    old = size_note(300_000, 37 * 10**6)
    assert old is not None and "0.3 and older" in old  # past what older readers take: said, not refused
    near = size_note(int(machine.MAX_CALLS * 0.75), 90 * 10**6)
    assert near is not None and f"{machine.MAX_CALLS:,}" in near and "refuse it whole" in near
