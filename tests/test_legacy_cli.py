"""The old Cline CLI's tasks (2.18.0 and 1.0.10, before 3.0): the five gaps the real recording and an attack on it
showed (issue 27), each on real files or files shaped as the recording shows, the recording's own figures
(EXPECTED.json) as the control."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from helpers.corpus import Ledger, a_minute_later, assert_sums, counted, set_tz  # noqa: F401 (fixture)
from helpers.taskfolders import TaskWriter, add, expected_calls, request, say, usage_say

from trayburn.sources.editor_tasks.places import BY_NAME, Place
from trayburn.sources.editor_tasks.source import TaskSource

REAL = Path(__file__).parent / "data" / "real-cline-legacy-v1"
EXPECTED = json.loads((REAL / "EXPECTED.json").read_text())
T0 = 1_796_154_654_696  # the recording's first task (2026-12-01, its machine's clock)
SONNET = ("claude-sonnet-4-5-20250929", "anthropic")
PERIOD = ["--since", "2026-11-30", "--until", "2026-12-02"]  # the recording's day in every zone below


@pytest.fixture
def led(tmp_path):
    ledger = Ledger(tmp_path / "state" / "ledger.db", wall_ns=a_minute_later)
    yield ledger
    ledger.close()


def source(*roots: Path) -> TaskSource:
    return TaskSource(BY_NAME["cline"], [Place("cline", r, f"test {n}") for n, r in enumerate(roots)])


def copy_root(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest)
    for p in dest.rglob("*"):
        p.chmod(p.stat().st_mode | stat.S_IWUSR)
    return dest


def run(capsys, *argv: str) -> str:
    from trayburn import cli

    assert cli.main(list(argv)) in (0, 1)
    return capsys.readouterr().out


# ---- 1. CLINE_DATA_DIR moves only 2.x's logs: its tasks stay in <CLINE_DIR or ~/.cline>/data ----------------


@pytest.mark.parametrize("zone", ["UTC", "America/Los_Angeles", "Asia/Tokyo"])
@pytest.mark.parametrize("data_dir", [True, False], ids=["CLINE_DATA_DIR set", "unset"])
def test_the_recording_in_every_command_whether_or_not_cline_data_dir_is_set(
    monkeypatch, capsys, set_tz, zone, data_dir
):
    """cline 2.18 wrote its tasks to ~/.cline/data/tasks while CLINE_DATA_DIR named another folder (its logs'):
    report, sessions, export and doctor give the recording's figures either way, in three time zones."""
    set_tz(zone)
    home = Path.home()
    copy_root(REAL / "data", home / ".cline" / "data")
    if data_dir:
        (home / "cline-logs").mkdir()
        monkeypatch.setenv("CLINE_DATA_DIR", str(home / "cline-logs"))
    want = EXPECTED["roots"]["data"]["total"]

    total = json.loads(run(capsys, "report", *PERIOD, "--by", "source", "--json"))["total"]
    assert total["calls"] == want["n_nonzero"] == 19
    assert total["cost_usd"] == pytest.approx(want["cost"], abs=1e-9)
    assert total["tokens"]["output"] == want["tokensOut"]
    assert total["tokens"]["cache_read"] == want["cacheReads"]
    assert total["tokens"]["cache_write"] == want["cacheWrites"]
    # (input includes the cache tokens; the OpenAI-compatible tasks' tokensIn already held their 512+1024+1024)
    assert total["tokens"]["input"] == want["tokensIn"] + want["cacheReads"] + want["cacheWrites"] - 2560

    sessions = json.loads(run(capsys, "sessions", *PERIOD, "--json"))
    assert sum(s["calls"] for s in sessions) == 19
    assert sum(s["cost_usd"] or 0.0 for s in sessions) == pytest.approx(want["cost"], abs=1e-9)  # (None: unpriced)

    exported = list(csv.DictReader(io.StringIO(run(capsys, "export", *PERIOD))))
    assert len(exported) == 19 and {r["source"] for r in exported} == {"cli"}
    assert sum(float(r["cost_usd"] or 0) for r in exported) == pytest.approx(want["cost"], abs=1e-6)

    doctor = json.loads(run(capsys, "doctor", "--json"))
    cline = next(a for a in doctor["task_places"] if a["app"] == "cline")
    found = [p for p in cline["places"] if p["exists"]]
    assert [p["path"] for p in found] == [str(home / ".cline" / "data" / "tasks")]
    assert found[0]["tasks"] == want["n_tasks"]
    if data_dir:  # says where it came from, and why CLINE_DATA_DIR does not move it
        assert "CLINE_DATA_DIR" in found[0]["origin"] and "default" in found[0]["origin"]
        assert any(p["path"] == str(home / "cline-logs" / "tasks") for p in cline["places"])
    assert str(home / ".cline" / "data" / "tasks") in run(capsys, "doctor")


def test_cline_dir_moves_the_old_cli_tasks_with_it(monkeypatch, capsys):
    """CLINE_DIR is where 2.x (and 1.0.10) write `data/`: both recorded roots as CLINE_DIRs, each found."""
    monkeypatch.setenv("CLINE_DIR", str(Path.home() / "elsewhere"))
    copy_root(REAL / "data", Path.home() / "elsewhere" / "data")
    monkeypatch.setenv("CLINE_DATA_DIR", str(Path.home() / "logs"))
    total = json.loads(run(capsys, "report", *PERIOD, "--by", "source", "--json"))["total"]
    assert total["calls"] == 19
    assert total["cost_usd"] == pytest.approx(EXPECTED["roots"]["data"]["total"]["cost"], abs=1e-9)


# ---- 2. subagent_usage: the subagents' spend, as theirs -----------------------------------------------------


def test_subagent_usage_is_the_subagents_and_the_session_shows_it(capsys):
    """2.18 (core 3.58+) writes ONE `subagent_usage` with the subagents' summed usage, and a `subagent` status
    message repeating their cost per item (not added). Exported as agent `subagents`, on the task's model (the
    subagents run on its API configuration); the session lists them."""
    w = TaskWriter(Path.home() / ".cline" / "data", "cline")
    tid = str(T0)
    item = {"prompt": "find the tests", "status": "completed", "totalCost": 0.0291}
    status = {"status": "completed", "items": [item]}
    ui = [
        say(T0, "task", "look around with subagents", SONNET),
        request(T0 + 1500, 2101, 52, 3001, 0, 0.01833675, SONNET),
        say(T0 + 9000, "subagent", json.dumps(status), SONNET),
        usage_say(T0 + 9001, "subagent_usage", 6000, 420, 2000, 3000, 0.0291, source="subagents"),
        request(T0 + 9500, 211, 62, 402, 3001, 0.0039708, SONNET),
    ]
    ui[3]["modelInfo"] = {"modelId": SONNET[0], "providerId": SONNET[1], "mode": "act"}
    w.write(tid, ui, meta={"environment_history": [{"host_name": "Cline CLI - Node.js", "host_version": "2.18.0"}]})

    detail = json.loads(run(capsys, "session", f"cline:{tid}", "--json"))
    assert detail["calls"] == 3
    assert detail["cost_usd"] == pytest.approx(0.01833675 + 0.0291 + 0.0039708)
    assert [(s["kind"], s["calls"]) for s in detail["subagents"]] == [("subagents", 1)]
    assert detail["subagents"][0]["cost_usd"] == pytest.approx(0.0291)
    rows = list(csv.DictReader(io.StringIO(run(capsys, "export", *PERIOD))))
    assert sorted(r["agent"] for r in rows) == ["lead", "lead", "subagents"]
    helper = next(r for r in rows if r["agent"] == "subagents")
    assert (helper["model"], float(helper["cost_usd"])) == (SONNET[0], 0.0291)
    assert "subagents (summed by the task): 1 call" in run(capsys, "session", f"cline:{tid}")


# ---- 3. two requests with one ts ---------------------------------------------------------------------------


def test_two_requests_with_one_ts_both_count_with_keys_stable_across_reads(led, tmp_path):
    w = TaskWriter(tmp_path / "data", "cline")
    tid = str(T0)
    ui = [
        say(T0, "task", "go", SONNET),
        request(T0 + 100, 1605, 36, 2205, 0, 0.01362375, SONNET),
        request(T0 + 100, 1706, 47, 106, 2205, 0.006882, SONNET),  # Date.now() twice in one millisecond
    ]
    w.write(tid, ui)
    src = source(w.root)
    led.refresh(src)
    assert_sums(counted(led), expected_calls("cline", ui))
    keys = led.query("SELECT key FROM calls ORDER BY key")
    assert keys == [(f"cline:{tid}:{T0 + 100}",), (f"cline:{tid}:{T0 + 100}#2",)]
    ui.append(request(T0 + 900, 23, 72, 150, 3403, 0.0027324, SONNET))  # the task goes on: read again
    w.write(tid, ui)
    led.refresh(src)
    assert_sums(counted(led), expected_calls("cline", ui))
    assert led.query("SELECT key FROM calls ORDER BY key")[:2] == keys
    assert led.query("SELECT count(*) FROM calls") == [(3,)]


# ---- 4. a lone surrogate costs that character, never the task ----------------------------------------------


def test_a_lone_surrogate_in_text_or_model_id_costs_nothing_but_that_text(led, tmp_path):
    """JavaScript cuts a string inside an emoji and JSON.stringify writes the half as "\\ud83d": in the task's
    text, a request's text and `modelInfo.modelId`. The task counts whole; the half becomes U+FFFD."""
    w = TaskWriter(tmp_path / "data", "cline")
    cut = ("claude-sonnet-4-5-20250929\ud83d", "anthropic")
    ui = [
        say(T0, "task", "fix the \ud83d bug", cut),
        request(T0 + 100, 1605, 36, 2205, 0, 0.01362375, cut, cwd="/work/caf\udce9"),
        say(T0 + 200, "text", "done \ude00", SONNET),
        request(T0 + 300, 1706, 47, 106, 2205, 0.006882, SONNET),
    ]
    folder = w.folder(str(T0))
    folder.mkdir(parents=True)
    (folder / "ui_messages.json").write_text(json.dumps(ui), encoding="ascii")  # the escapes as JSON writes them
    stats = led.refresh(source(w.root))
    assert stats.errors == {}
    assert_sums(counted(led), expected_calls("cline", ui))
    assert led.query("SELECT title, cwd FROM sessions") == [("fix the \ufffd bug", "/work/caf\ufffd")]
    assert sorted(m for (m,) in led.query("SELECT model FROM calls")) == [SONNET[0], SONNET[0] + "\ufffd"]


# ---- 5. one task in two roots: the same figures whatever the times and the order of reading ----------------


def _roots(tmp_path: Path, full: list[dict], stale: list[dict], stale_newer: bool) -> tuple[Path, Path]:
    a, b = TaskWriter(tmp_path / "code", "cline"), TaskWriter(tmp_path / "cli", "cline")
    a.write(str(T0), full)
    b.write(str(T0), stale)
    older = a.root if stale_newer else b.root
    for f in older.rglob("*.json"):
        os.utime(f, ns=(f.stat().st_mtime_ns - 3600 * 10**9,) * 2)
    return a.root, b.root


FULL = [
    say(T0, "task", "go", SONNET),
    request(T0 + 100, 2111, 42, 2511, 0, 0.01637925, SONNET),
    request(T0 + 700, 2212, 53, 112, 2511, 0.0086043, SONNET),
    request(T0 + 8000, 2313, 64, 213, 2623, 0.00948465, SONNET),
]


@pytest.mark.parametrize("stale_newer", [True, False], ids=["stale copy dated later", "stale copy older"])
@pytest.mark.parametrize("order", ["both at once", "both at once, reversed", "full first", "stale first"])
def test_one_task_in_two_roots_same_figures_whatever_the_times_and_the_order(led, tmp_path, stale_newer, order):
    full_root, stale_root = _roots(tmp_path, FULL, FULL[:2], stale_newer)
    if order == "both at once":
        led.refresh(source(full_root, stale_root))
    elif order == "both at once, reversed":
        led.refresh(source(stale_root, full_root))
    else:
        first, _ = (full_root, stale_root) if order == "full first" else (stale_root, full_root)
        led.refresh(source(first))
        led.refresh(source(full_root, stale_root))
    assert_sums(counted(led), expected_calls("cline", FULL))
    assert led.query("SELECT count(*) FROM sessions") == [(1,)]


def _real_restored_task() -> tuple[list[dict], list[dict]]:
    """The 1.0.10 task as recorded (1 request kept, a restore's `deleted_api_reqs` summing requests 2 and 3), and
    the copy it was before the restore: the same messages up to the restore point, then those two requests
    (their sums as the README and the restore give them, split as the server sent them)."""
    task = next((REAL / "cli-1.0.10" / "data" / "tasks").iterdir())
    after = json.loads((task / "ui_messages.json").read_bytes())
    restore_at = next(i for i, m in enumerate(after) if m.get("say") == "deleted_api_reqs")
    point = after[restore_at - 1]["ts"]
    kept = [m for m in after[:restore_at] if m["ts"] <= point]
    model = ("claude-sonnet-4-5-20250929", "anthropic")
    before = kept + [
        request(point + 1000, 4202, 93, 202, 4001, 0.0159588, model),  # 4202/93/202/4001 and 4303/94/303/4203
        request(point + 2000, 4303, 94, 303, 4203, 0.01671615, model),  # sum to the restore's 8505/187/505/8204
    ]
    return after, before


@pytest.mark.parametrize("order", ["both at once", "restored first", "before-restore first"])
def test_a_restored_copy_beside_a_copy_from_before_the_restore(led, tmp_path, order):
    """The real restored 1.0.10 task in one root, its copy from before the restore in another (newer on disk):
    its spend counts once whichever the ledger met first (the restore's sum stands for the requests it removed)."""
    after, before = _real_restored_task()
    assert sum(json.loads(m["text"])["cost"] for m in before[-2:]) == pytest.approx(
        EXPECTED["all_roots"]["deleted_api_reqs"]["cost"]
    )
    restored, old = _roots(tmp_path, after, before, stale_newer=True)
    if order == "both at once":
        led.refresh(source(restored, old))
    else:
        led.refresh(source(restored if order == "restored first" else old))
        led.refresh(source(restored, old))
    want = EXPECTED["all_roots"]
    total = want["total_with_deleted"]["cost"] - EXPECTED["roots"]["data"]["total"]["cost"]
    got = counted(led)
    assert got[5] == pytest.approx(total)  # = the HistoryItem's totalCost: kept + removed, once
    assert got[2] == 92 + 187 and got[3] == 8204 and got[4] == 4001 + 505
    assert led.query("SELECT count(DISTINCT session_id) FROM calls") == [(1,)]


def test_real_legacy_roots_read_together_keep_the_recorded_sums(led, tmp_path):
    """Both recorded roots at once, and each root twice (a synced copy): the EXPECTED.json totals exactly."""
    roots = [copy_root(REAL / "data", tmp_path / "a"), copy_root(REAL / "cli-1.0.10" / "data", tmp_path / "b")]
    twins = [copy_root(REAL / "data", tmp_path / "c"), copy_root(REAL / "cli-1.0.10" / "data", tmp_path / "d")]
    led.refresh(source(*roots, *twins))
    want = EXPECTED["all_roots"]["total_with_deleted"]
    got = counted(led)
    assert got[0] == 21  # 19 + 1 kept + 1 restore
    assert (got[2], got[3]) == (want["tokensOut"], want["cacheReads"])
    assert got[5] == pytest.approx(want["cost"])  # (the three cost-0 requests are unpriced: no cost)
    assert_sums(got, add(*(expected_calls("cline", json.loads(p.read_bytes()))
                          for r in roots for p in sorted((r / "tasks").glob("*/ui_messages.json")))))  # fmt: skip
