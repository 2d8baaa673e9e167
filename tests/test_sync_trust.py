"""A sync folder cannot rewrite this machine's bill: anyone who can write to `sync_dir` can plant a machine
file, and this machine's call keys are public there (it writes them into the same folder). A planted or
cloned file costs at most its own figures; decoding one is bounded in depth, size and time."""

from __future__ import annotations

import gzip
import json
import shutil
import time
import zlib

import msgspec
from helpers.corpus import CORPUS, Ledger, counted, sessions_of
from helpers.sync_machines import SESSION_IDS, boxes

from trayburn.sources import machine

FORGER = "0badc0de0badc0de"
SPAN = "SELECT MIN(ts_ms), MAX(ts_ms) FROM calls WHERE counted=1"


def _gzip(body: object) -> bytes:
    packer = zlib.compressobj(6, zlib.DEFLATED, 31)
    return packer.compress(msgspec.json.encode(body)) + packer.flush()


def _forged(mine: machine.MachineDoc, **changes) -> bytes:
    """Another machine's file that claims every one of this machine's calls, in a session that 'started' in
    1970, at a time in 2100 and for free; plus one call of its own (the control: that one counts, as its)."""
    calls = [[c[0], 4102444800000, c[2], c[3], 1, 1, 0, 0, 0.0, 0, "lead"] for c in mine.calls]
    calls.append(["forger-own-call", 1796083201000, "gpt-4o", "openai", 100, 10, 0, 0, 0.5, 0, "lead"])
    body = {
        "format": machine.MAGIC, "version": 1, "min_reader": 1,
        "machine": {"id": FORGER, "name": "forger", "host": "feedfacefeedface"},
        "written_ms": 1796083200000, "trayburn": "0.3.0", "titles": False,
        "session_fields": list(machine.SESSION_FIELDS),
        "sessions": [["early", 1, None, "completed", "p", "cli", "gpt-4o", "openai", None, None, None]],
        "call_fields": list(machine.CALL_FIELDS), "calls": calls, **changes,
    }  # fmt: skip
    return _gzip(body)


def test_a_planted_file_reusing_this_machines_keys_neither_hides_nor_moves_its_spend(tmp_path):
    (a,) = boxes(tmp_path, "a")
    a.copy_sessions(SESSION_IDS[:3])
    engine = a.engine()
    try:
        engine.refresh()
        mine = counted(engine.ledger)
        days = engine.ledger.query(SPAN)[0]
        doc = machine.decode(a.file().read_bytes())
        assert len(doc.calls) == mine[0]
        (a.file().parent / f"{FORGER}{machine.EXT}").write_bytes(_forged(doc))
        engine.refresh()
        assert counted(engine.ledger, "session_id NOT LIKE '%/%'") == mine  # every call still this machine's
        assert engine.ledger.query(f"{SPAN} AND session_id NOT LIKE '%/%'")[0] == days
        assert counted(engine.ledger, "ts_ms >= 4102444800000")[0] == 0  # nothing moved to 2100
        assert counted(engine.ledger, "session_id LIKE ?", (f"{FORGER}/%",)) == (1, 100, 10, 0, 0, 0.5)
        # doctor lists the calls each machine counts, each key once, on this machine
        health = {m.id: m for m in engine.sync_health().machines}
        assert (health[a.machine_id()].calls, health[FORGER].calls) == (mine[0], 1)
    finally:
        engine.close()
    doc = a.cli("doctor")  # the same, as the real CLI in its own process says it
    by_id = {m["id"]: m for m in doc["sync"]["machines"]}
    assert (by_id[a.machine_id()]["calls"], by_id[FORGER]["calls"]) == (mine[0], 1)


def test_cloned_machines_with_the_same_host_find_each_other_and_both_count_the_union(tmp_path):
    """A cloned disk image: the same id, the same host name and fingerprint, the same state. The one that
    finds its file written by the other takes a new id and says so; then each counts the union once."""
    a, b = boxes(tmp_path, "a", "b")
    a.copy_sessions(SESSION_IDS[:3])
    ea = a.engine()
    ea.refresh()
    ea.close()
    shutil.rmtree(b.sessions)
    shutil.copytree(a.sessions, b.sessions)
    shutil.copytree(a.state, b.state)  # the clone: the same id, share state and ledger
    b.copy_sessions(SESSION_IDS[3:5])  # then each goes its way
    assert a.machine_id() == b.machine_id()
    b.cli("today")  # b writes under the shared id (its file is as "it" left it)
    doc_a = a.cli("doctor")  # a finds the shared id's file written by someone else
    assert a.machine_id() != b.machine_id()
    assert f"now shares as id {a.machine_id()}" in (doc_a["sync"]["renamed"] or "")
    a.cli("today")
    b.cli("today")  # b now reads a's new file
    truth = {n: _calls_of(tmp_path, SESSION_IDS[:n]) for n in (3, 5)}
    for box in (a, b):
        engine = box.engine()
        try:
            engine.refresh()
            union = counted(engine.ledger)
            local = counted(engine.ledger, "session_id NOT LIKE '%/%'")
        finally:
            engine.close()
        want = 5 if box is b else 3
        assert len({p.name for p in box.sessions.iterdir()}) == want
        assert union[0] == truth[5], box.name
        assert local[0] == truth[want], box.name


def _calls_of(tmp_path, ids: list[str]) -> int:
    """The calls these sessions count, read by one ledger from one folder (no sharing)."""
    folder = tmp_path / f"truth{len(ids)}" / "sessions"
    for sid in ids:
        shutil.copytree(sessions_of(CORPUS) / sid, folder / sid)
    ledger = Ledger(folder.parent / "ledger.db")
    try:
        ledger.refresh(folder)
        return counted(ledger)[0]
    finally:
        ledger.close()


def _deep(levels: int) -> bytes:
    """A machine file whose sessions are `levels` arrays deep: a few hundred bytes gzipped."""
    head = json.dumps({"format": machine.MAGIC, "version": 1, "machine": {"id": FORGER}, "session_fields": []})
    raw = head[:-1].encode() + b', "sessions": ' + b"[" * levels + b"]" * levels + b"}"
    return gzip.compress(raw)


def test_a_file_nested_200000_levels_deep_costs_that_file_only(tmp_path):
    deep = _deep(200_000)
    assert len(deep) < 2_000
    try:
        machine.decode(deep)
    except machine.FormatError as exc:
        assert "nested" in str(exc)
    else:
        raise AssertionError("a 200,000-level file decoded")
    (a,) = boxes(tmp_path, "a")
    a.copy_sessions(SESSION_IDS[:3])
    alone = a.cli("today")  # the control: this machine's figure before the file lands
    (a.sync / "trayburn" / "machines" / f"{FORGER}{machine.EXT}").write_bytes(deep)
    today = a.cli("today")
    assert (today["calls"], today["cost_usd"]) == (alone["calls"], alone["cost_usd"])
    doctor = a.cli("doctor")
    assert doctor["kind"] == "sync_problems" and not doctor["ok"]
    (forger,) = [m for m in doctor["sync"]["machines"] if m["id"] == FORGER]
    assert "nested" in forger["problem"]


def test_a_file_that_unpacks_past_the_limit_is_refused_quickly_and_costs_that_file_only(tmp_path):
    """Real machine files are kilobytes to tens of megabytes: one that unpacks past the limit (a bomb: a few
    hundred KB on disk) is refused at the limit, not decoded, and nothing else changes."""
    (a,) = boxes(tmp_path, "a")
    a.copy_sessions(SESSION_IDS[:3])
    engine = a.engine()
    try:
        engine.refresh()
        mine = counted(engine.ledger)
        doc = machine.decode(a.file().read_bytes())
        bomb = _forged(doc, padding="0" * (machine.MAX_JSON_BYTES + 8_000_000))
        assert len(bomb) < 400_000
        t0 = time.perf_counter()
        try:
            machine.decode(bomb)
        except machine.FormatError as exc:
            assert exc.kind == "too_big"
        else:
            raise AssertionError("a file past the limit decoded")
        print(f"refused in {time.perf_counter() - t0:.3f} s")
        (a.file().parent / f"{FORGER}{machine.EXT}").write_bytes(bomb)
        engine.refresh()
        assert counted(engine.ledger) == mine
        (forger,) = [m for m in engine.sync_health().machines if m.id == FORGER]
        assert "unpacked" in (forger.problem or "")
    finally:
        engine.close()


def _share_loop(state: str, config: str, ready, go, out) -> None:
    """One process of this machine (the tray, a `today`) writing its file again and again."""
    from pathlib import Path

    from trayburn.engine import Engine
    from trayburn.sync.share import Sharing

    engine = Engine(config, state, env={"HOME": str(Path(state).parent)})
    now = [time.time()]
    sharing = Sharing(Path(state), engine.ledger, clock=lambda: now[0])
    s = engine.settings
    ready.set()
    go.wait(60)
    renamed = 0
    for _ in range(25):
        now[0] += 61  # due at every turn
        got = sharing.after_refresh(s.sync_dir, s.machine_name, False, counted=True)
        renamed += bool(got and got.renamed)
    engine.close()
    out.put(renamed)


def test_processes_of_one_machine_sharing_at_once_never_take_it_for_a_clone(tmp_path):
    """The tray and a CLI command write this machine's file at the same moment: each finds the file changed
    by the other, which is this machine, not a clone (the check and the write are one step under a lock)."""
    import multiprocessing

    (a,) = boxes(tmp_path, "a")
    a.copy_sessions(SESSION_IDS[:2])
    engine = a.engine()
    engine.refresh()
    engine.close()
    first = a.machine_id()
    ctx = multiprocessing.get_context("spawn")
    go, out = ctx.Event(), ctx.Queue()
    readies = [ctx.Event() for _ in range(3)]
    procs = [ctx.Process(target=_share_loop, args=(str(a.state), str(a.config), r, go, out)) for r in readies]
    for p in procs:
        p.start()
    try:
        assert all(r.wait(120) for r in readies), "a sharing process did not start"
        go.set()
        renamed = [out.get(timeout=120) for _ in procs]
    finally:
        for p in procs:
            p.join(60)
    assert renamed == [0, 0, 0] and a.machine_id() == first


def _one_me(box) -> None:
    """doctor lists this machine once, under its one id, and says no id was taken."""
    doc = box.cli("doctor")
    mine = [m for m in doc["sync"]["machines"] if m["this"] or m["name"] == box.name]
    assert [m["id"] for m in mine] == [box.machine_id()], doc["sync"]["machines"]
    assert doc["sync"]["renamed"] is None


def test_an_older_version_of_this_machines_own_file_put_back_by_the_sync_tool_is_rewritten_not_a_clone(tmp_path):
    (a,) = boxes(tmp_path, "a")
    a.copy_sessions(SESSION_IDS[:3])
    a.cli("today")
    first_id, older = a.machine_id(), a.file().read_bytes()
    a.copy_sessions(SESSION_IDS[3:5])
    a.file().unlink()  # (a missing file is written at once)
    a.cli("today")
    newer = machine.decode(a.file().read_bytes())
    a.file().write_bytes(older)  # the sync tool puts the older version back (a new mtime, an older header)
    a.cli("today")
    assert a.machine_id() == first_id
    rewritten = machine.decode(a.file().read_bytes())
    assert rewritten.header.written_ms > newer.header.written_ms and len(rewritten.calls) == len(newer.calls)
    _one_me(a)


def test_a_state_folder_restored_from_a_copy_is_this_machine_not_a_clone(tmp_path):
    (a,) = boxes(tmp_path, "a")
    a.copy_sessions(SESSION_IDS[:3])
    a.cli("today")
    first_id = a.machine_id()
    shutil.copytree(a.state, tmp_path / "state-copy")  # a backup of the state folder
    a.copy_sessions(SESSION_IDS[3:5])
    a.file().unlink()
    a.cli("today")  # the file now newer than the copy's record of it
    shutil.rmtree(a.state)
    shutil.copytree(tmp_path / "state-copy", a.state)  # restored
    a.cli("today")
    assert a.machine_id() == first_id
    assert len(machine.decode(a.file().read_bytes()).sessions) == 5
    _one_me(a)
