"""Task folders (the Cline extension before 4.0, the old Cline CLI, Roo Code, Kilo Code) as sources: every
figure checked against a sum the test computes from the files it wrote (taskfolders.expected_calls), on the
real ledger and real files; plus the real legacy task files the old Cline CLI wrote."""

from __future__ import annotations

import json
import os
import shutil
import stat
import time
from pathlib import Path, PurePosixPath, PureWindowsPath

import pytest
from helpers.corpus import Ledger, a_minute_later, age_all, assert_sums, counted, make_session, messages_doc, write_json
from helpers.taskfolders import TaskWriter, add, expected_calls, request, say, storage, usage_say

from trayburn.sources.editor_tasks import places
from trayburn.sources.editor_tasks.places import BY_NAME, Place
from trayburn.sources.editor_tasks.source import TaskSource

REAL = Path(__file__).parent / "data" / "real-cline-legacy-v1"
T0 = 1_764_600_000_000  # 2025-12-01
SONNET = ("claude-sonnet-4-5", "anthropic")
COMPAT = ("my-model", "openai")


@pytest.fixture
def led(tmp_path):
    ledger = Ledger(tmp_path / "state" / "ledger.db", wall_ns=a_minute_later)
    yield ledger
    ledger.close()


def source(app: str, *roots: Path) -> TaskSource:
    return TaskSource(BY_NAME[app], [Place(app, r, "test") for r in roots])


def ui_of(folder: Path) -> list[dict]:
    return json.loads((folder / "ui_messages.json").read_bytes())


def cline_task(n: int = 0, model=SONNET) -> list[dict]:
    t = T0 + n * 100_000
    return [
        say(t, "task", "add a test", model),
        request(t + 1200, 12, 310, 14800, 0, 0.060186, model),
        say(t + 2000, "text", "ok", model),
        request(t + 9800, 3, 95, 420, 14800, 0.007449, model, cancelReason="user_cancelled"),
    ]


# ---- each app and version family ---------------------------------------------------------------------


@pytest.mark.parametrize("atomic", [True, False], ids=["v3.40+ temp files", "before v3.40 in place"])
def test_cline_tasks_counted_per_request(led, tmp_path, atomic):
    w = TaskWriter(tmp_path / "gs", "cline", atomic=atomic)
    folders = [w.write(str(T0 + n), cline_task(n)) for n in range(3)]
    led.refresh(source("cline", w.root))
    assert_sums(counted(led), add(*(expected_calls("cline", ui_of(f)) for f in folders)))
    rows = led.query("SELECT key, model, provider FROM calls ORDER BY ts_ms LIMIT 1")
    assert rows == [(f"cline:{T0}:{T0 + 1200}", "claude-sonnet-4-5", "anthropic")]
    assert led.query("SELECT count(*) FROM files") == [(3,)]  # never a *.tmp.<ms>.<rand>.json left over
    cwd = led.query("SELECT DISTINCT workspace_root, source FROM sessions")
    assert cwd == [("/work/proj", "cli")]  # (no environment history, not in a globalStorage folder)


def test_cline_without_model_info_takes_the_task_model_history(led, tmp_path):
    """Before v3.37: no modelInfo; the model of a request is the last model_usage entry at its time."""
    w = TaskWriter(tmp_path / "gs" / "globalStorage" / "saoudrizwan.claude-dev", "cline", atomic=False)
    ui = [say(T0, "task", "go"), request(T0 + 100, 10, 5, 0, 0, 0.01), request(T0 + 5000, 20, 6, 0, 0, 0.02)]
    meta = {
        "files_in_context": [],
        "model_usage": [
            {"ts": T0 + 50, "model_id": "claude-3-5-sonnet", "model_provider_id": "anthropic", "mode": "act"},
            {"ts": T0 + 4000, "model_id": "deepseek-chat", "model_provider_id": "deepseek", "mode": "act"},
        ],
        "environment_history": [{"ts": T0, "host_name": "Visual Studio Code", "cline_version": "3.20.0"}],
    }
    w.write(str(T0), ui, meta, item={"id": str(T0), "ts": T0 + 5000, "task": "go fast", "modelId": "x",
                                     "cwdOnTaskInitialization": "/home/me/site", "tokensIn": 30, "tokensOut": 11,
                                     "totalCost": 0.03})  # fmt: skip
    led.refresh(source("cline", w.root))
    rows = led.query("SELECT model, provider, cost FROM calls ORDER BY ts_ms")
    assert rows == [("claude-3-5-sonnet", "anthropic", 0.01), ("deepseek-chat", "deepseek", 0.02)]
    s = led.query("SELECT title, workspace_root, source FROM sessions")
    assert s == [("go fast", "/work/proj", "vscode")]
    assert_sums(counted(led), expected_calls("cline", ui))  # the index's totals never added


def test_roo_from_3_29_5_counts_tokens_in_as_inclusive(led, tmp_path):
    """Roo >= 3.29.5: tokensIn already holds the cache tokens (never priced twice); model from <model>."""
    w = TaskWriter(tmp_path / "roo", "roo")
    tid = "0199a8d2-6f3e-7c1a-9b2e-1f2a3b4c5d6e"
    ui = [
        say(T0, "text", "build it"),
        say(T0 + 10, "api_req_started", json.dumps({"apiProtocol": "anthropic", "tokensIn": 15220, "tokensOut": 95,
                                                    "cacheWrites": 420, "cacheReads": 14800, "cost": 0.00744})),
        say(T0 + 20, "api_req_started", json.dumps({"apiProtocol": "openai", "tokensIn": 3000, "tokensOut": 40,
                                                    "cacheWrites": 0, "cacheReads": 1000, "cost": 0.004})),
    ]  # fmt: skip
    w.write(tid, ui, item={"id": tid, "workspace": "/work/roo", "task": "build it"})
    w.api_history(tid, ["claude-sonnet-4-5", "gpt-5"])
    led.refresh(source("roo", w.root))
    assert_sums(counted(led), expected_calls("roo", ui))
    assert counted(led)[1] == 15220 + 3000  # not 15220 + 420 + 14800 + …
    assert led.query("SELECT model FROM calls ORDER BY ts_ms") == [("claude-sonnet-4-5",), ("gpt-5",)]
    assert led.query("SELECT source, workspace_root FROM sessions") == [("roo-code", "/work/roo")]
    assert led.query("SELECT count(*) FROM files") == [(1,)]  # not the .bak_, .new_, lock or checkpoints/ files


def test_kilo_legacy_old_files_follow_the_provider(led, tmp_path):
    """Kilo Code 5.x / Roo before 3.29.5 with Anthropic: tokensIn is uncached (below the cache tokens)."""
    w = TaskWriter(tmp_path / "kilo", "kilo")
    tid = "5b0f3c1e-2d4a-4b6c-8e9f-0a1b2c3d4e5f"
    ui = [say(T0, "text", "hi"), usage_say(T0 + 5, "api_req_started", 3, 95, 420, 14800, 0.0074),
          say(T0 + 9, "condense_context", contextCondense={"cost": 0.0123, "prevContextTokens": 90000,
                                                           "newContextTokens": 4000, "summary": "…"})]  # fmt: skip
    w.write(tid, ui)
    w.api_history(tid, ["anthropic/claude-3.7-sonnet"])
    led.refresh(source("kilo", w.root))
    assert_sums(counted(led), expected_calls("kilo", ui))
    assert counted(led)[1] == 3 + 420 + 14800
    assert led.query("SELECT count(*) FROM calls WHERE key LIKE '%:condense'") == [(1,)]


# ---- the pitfalls --------------------------------------------------------------------------------------


def test_two_parses_a_bad_text_is_skipped_a_bad_file_keeps_the_figures(led, tmp_path):
    w = TaskWriter(tmp_path / "gs", "cline")
    ui = cline_task()
    ui.insert(2, say(T0 + 1500, "api_req_started", '{"tokensIn": 5, "tokensOut"'))  # text cut off
    folder = w.write(str(T0), ui)
    led.refresh(source("cline", w.root))
    good = expected_calls("cline", ui)
    assert good[0] == 2
    assert_sums(counted(led), good)
    (folder / "ui_messages.json").write_bytes(b'[{"ts":1764600000000,"type":"say","say":"task","tex')  # half-written
    stats = led.refresh(source("cline", w.root))
    assert str(folder / "ui_messages.json") in stats.errors
    assert_sums(counted(led), good)  # nothing lost
    w.write(str(T0), ui + [request(T0 + 20000, 7, 7, 0, 0, 0.001, SONNET)])  # written whole again
    led.refresh(source("cline", w.root))
    assert_sums(counted(led), expected_calls("cline", ui_of(folder)))


def test_in_flight_entry_counted_then_replaced_by_its_final_value(led, tmp_path):
    w = TaskWriter(tmp_path / "gs", "cline")
    head = [say(T0, "task", "go", SONNET)]
    folder = w.write(str(T0), head + [request(T0 + 10, model=SONNET)])  # "Loading...": no usage yet
    led.refresh(source("cline", w.root))
    assert counted(led)[0] == 0
    w.write(str(T0), head + [request(T0 + 10, 1000, 30, 0, 0, model=SONNET)])  # v3.70 running totals, no cost
    led.refresh(source("cline", w.root))
    row = led.query("SELECT input, output, cost FROM calls")
    assert row == [(1000, 30, None)]  # counted, estimated: never a final $0
    final = head + [request(T0 + 10, 1200, 80, 0, 0, 0.0048, SONNET)]
    w.write(str(T0), final)
    led.refresh(source("cline", w.root))
    assert_sums(counted(led), expected_calls("cline", ui_of(folder)))
    assert counted(led)[0] == 1  # one call, keyed by its ts


def test_position_shift_keeps_identity(led, tmp_path):
    """Cline deletes the last unfinished api_req_started on resume: positions shift, ts keys do not."""
    w = TaskWriter(tmp_path / "gs", "cline")
    a, b = request(T0 + 10, 100, 10, 0, 0, 0.001, SONNET), request(T0 + 20, model=SONNET)
    w.write(str(T0), [say(T0, "task", "go"), b, a])
    led.refresh(source("cline", w.root))
    folder = w.write(str(T0), [say(T0, "task", "go"), a, request(T0 + 30, 200, 20, 0, 0, 0.002, SONNET)])
    led.refresh(source("cline", w.root))
    assert_sums(counted(led), expected_calls("cline", ui_of(folder)))


def test_cancelled_and_failed_requests(led, tmp_path):
    w = TaskWriter(tmp_path / "gs", "cline")
    ui = [
        say(T0, "task", "go", SONNET),
        request(T0 + 1, 1807, 1, 108, 2307, 0.0068361, SONNET, cancelReason="user_cancelled"),
        request(T0 + 2, 2009, 1, 2409, 0, 0.01507575, SONNET, cancelReason="streaming_failed",
                streamingFailedMessage=json.dumps({"message": "dropped"})),
        request(T0 + 3, 0, 0, 0, 0, 0, SONNET, cancelReason="streaming_failed"),  # failed before any token
    ]  # fmt: skip
    folder = w.write(str(T0), ui)
    led.refresh(source("cline", w.root))
    assert counted(led)[0] == 2
    assert_sums(counted(led), expected_calls("cline", ui_of(folder)))


def test_restore_read_first_time_counts_its_sum_once(led, tmp_path):
    w = TaskWriter(tmp_path / "gs", "cline")
    ui = cline_task() + [usage_say(T0 + 20000, "deleted_api_reqs", 40, 900, 1200, 30000, 0.0265)]
    w.write(str(T0), ui)
    led.refresh(source("cline", w.root))
    assert_sums(counted(led), expected_calls("cline", ui))
    assert counted(led)[0] == 3


def test_restore_after_the_ledger_held_the_removed_requests_adds_nothing(led, tmp_path):
    w = TaskWriter(tmp_path / "gs", "cline")
    kept = [
        say(T0, "task", "go", SONNET),
        request(T0 + 10, 100, 10, 0, 0, 0.001, SONNET),
        say(T0 + 11, "checkpoint_created"),
    ]
    removed = [request(T0 + 20, 200, 20, 50, 0, 0.002, SONNET), request(T0 + 30, 300, 30, 0, 50, 0.003, SONNET)]
    w.write(str(T0), kept + removed)
    led.refresh(source("cline", w.root))
    before = counted(led)
    restore = usage_say(T0 + 40, "deleted_api_reqs", 500, 50, 50, 50, 0.005)
    w.write(str(T0), kept + [restore])
    led.refresh(source("cline", w.root))
    assert_sums(counted(led), before)  # the removed calls stay (spent), the sum is not added on top
    # then a second restore cuts the first one's message too: its sum includes it; still nothing new
    w.write(str(T0), kept[:2] + [usage_say(T0 + 50, "deleted_api_reqs", 500, 50, 50, 50, 0.005)])
    led.refresh(source("cline", w.root))
    assert_sums(counted(led), before)
    # a later request after the restore counts as usual
    w.write(str(T0), kept[:2] + [usage_say(T0 + 50, "deleted_api_reqs", 500, 50, 50, 50, 0.005),
                                 request(T0 + 60, 1, 1, 0, 0, 0.0001, SONNET)])  # fmt: skip
    led.refresh(source("cline", w.root))
    assert_sums(counted(led), add(before, (1, 1, 1, 0, 0, 0.0001)))


def test_roo_restore_api_req_deleted_and_subagent_usage(led, tmp_path):
    w = TaskWriter(tmp_path / "roo", "roo")
    ui = [say(T0, "text", "go"), usage_say(T0 + 1, "api_req_started", 5000, 10, 0, 4000, 0.01),
          usage_say(T0 + 2, "api_req_deleted", 9000, 20, 500, 8000, 0.02)]  # fmt: skip
    w.write("r1", ui)
    cw = TaskWriter(tmp_path / "gs", "cline")
    cui = cline_task() + [usage_say(T0 + 30000, "subagent_usage", 100, 50, 0, 0, 0.003, source="subagents")]
    cw.write(str(T0), cui)
    led.refresh(source("roo", w.root))
    led.refresh(source("cline", cw.root))
    assert_sums(counted(led), add(expected_calls("roo", ui), expected_calls("cline", cui)))


def test_cost_zero_is_estimated_and_marked_flat_rate_kept(led, tmp_path):
    w = TaskWriter(tmp_path / "gs", "cline")
    ui = [
        say(T0, "task", "go"),
        request(T0 + 1, 1201, 31, 0, 0, 0, COMPAT),  # OpenAI-compatible, no prices: cost 0
        request(T0 + 2, 500, 20, 0, 0, 0, ("gpt-5-codex", "openai-codex")),  # a subscription: 0 is the price
    ]
    w.write(str(T0), ui)
    led.refresh(source("cline", w.root))
    rows = led.query("SELECT provider, cost FROM calls ORDER BY ts_ms")
    assert rows == [("openai-compatible", None), ("openai-codex", 0.0)]
    assert_sums(counted(led), expected_calls("cline", ui))


def test_token_meanings_per_cline_provider(led, tmp_path):
    """Anthropic-style: tokensIn uncached; the generic OpenAI-compatible handler: tokensIn includes cache
    reads, and its cacheWrites (DeepSeek's cache-miss count) is no write."""
    w = TaskWriter(tmp_path / "gs", "cline")
    ui = [say(T0, "task", "go"), request(T0 + 1, 3, 95, 420, 14800, 0.0074, SONNET),
          request(T0 + 2, 1914, 42, 300, 512, 0.001, COMPAT)]  # fmt: skip
    w.write(str(T0), ui)
    led.refresh(source("cline", w.root))
    rows = led.query("SELECT input, cache_read, cache_write FROM calls ORDER BY ts_ms")
    assert rows == [(3 + 420 + 14800, 14800, 420), (1914, 512, 0)]
    assert_sums(counted(led), expected_calls("cline", ui))


def test_same_task_in_two_roots_counts_once(led, tmp_path):
    a, b = TaskWriter(tmp_path / "code", "cline"), TaskWriter(tmp_path / "cursor", "cline")
    ui = cline_task()
    a.write(str(T0), ui[:2])  # an older copy
    folder = b.write(str(T0), ui)
    age_all(a.root, 600)
    led.refresh(source("cline", a.root, b.root))
    assert_sums(counted(led), expected_calls("cline", ui_of(folder)))
    assert led.query("SELECT count(*) FROM sessions") == [(1,)]


def test_roo_file_briefly_absent_is_not_gone(led, tmp_path):
    w = TaskWriter(tmp_path / "roo", "roo")
    ui = [say(T0, "text", "go"), usage_say(T0 + 1, "api_req_started", 5000, 10, 0, 4000, 0.01)]
    folder = w.write("r1", ui)
    led.refresh(source("roo", w.root))
    (folder / "ui_messages.json").rename(folder / ".ui_messages.json.bak_1_x.tmp")  # mid-save
    stats = led.refresh(source("roo", w.root))
    assert stats.removed_sessions == 0
    assert led.query("SELECT gone FROM files") == [(0,)]
    assert_sums(counted(led), expected_calls("roo", ui))


def test_no_change_refresh_reads_nothing(led, tmp_path):
    w = TaskWriter(tmp_path / "gs", "cline")
    for n in range(5):
        w.write(str(T0 + n), cline_task(n), meta={"model_usage": []})
    src = source("cline", w.root)
    led.refresh(src)
    again = led.refresh(src)
    assert (again.files_read, again.calls_upserted) == (0, 0)
    w.write(str(T0 + 2), cline_task(2) + [request(T0 + 250_000, 1, 1, 0, 0, 0.0001, SONNET)])
    once = led.refresh(src)
    assert once.files_read == 1  # only the task that changed (its ui_messages.json)


def test_huge_task(led, tmp_path):
    w = TaskWriter(tmp_path / "gs", "cline")
    pad = "x" * 4000  # each request's text embeds its prompt: files of many MB
    ui = [say(T0, "task", "go", SONNET)]
    for n in range(3000):
        m = request(T0 + 10 * (n + 1), 10 + n, 5, 100, 1000 + n, 0.000_1 * (n % 7), SONNET, cwd=None)
        body = json.loads(m["text"])
        body["request"] = pad
        m["text"] = json.dumps(body)
        ui.append(m)
    folder = w.write(str(T0), ui)
    assert (folder / "ui_messages.json").stat().st_size > 10_000_000
    led.refresh(source("cline", w.root))
    assert_sums(counted(led), expected_calls("cline", ui))


def test_unreadable_task_file_is_reported_the_rest_counted(led, tmp_path):
    w = TaskWriter(tmp_path / "gs", "cline")
    bad = w.write("1764600000001", cline_task(1))
    good = w.write("1764600000002", cline_task(2))
    (bad / "ui_messages.json").write_bytes(b"\x00\x01 not json")
    stats = led.refresh(source("cline", w.root))
    assert list(stats.errors) == [str(bad / "ui_messages.json")]
    assert_sums(counted(led), expected_calls("cline", ui_of(good)))


# ---- Cline 4.x's copy of a legacy task -------------------------------------------------------------------


def test_cline_4x_resumed_legacy_task_counted_once(tmp_path, led):
    """4.x resumes a legacy task as a session with the task's id, its lifetime totals on the last converted
    message (no ts, provider unknown), then a "legacy conversation" warning; later messages are new spend."""
    w = TaskWriter(tmp_path / "gs", "cline")
    ui = cline_task()
    w.write(str(T0), ui)
    sessions = tmp_path / "sessions"
    sid = str(T0)
    lifetime = {"role": "assistant", "content": [{"type": "text", "text": "done"}],
                "modelInfo": {"id": "claude-sonnet-4-5", "provider": "unknown"},
                "metrics": {"inputTokens": 30035, "outputTokens": 405, "cacheReadTokens": 14800,
                            "cacheWriteTokens": 15220, "cost": 0.067635}}  # fmt: skip
    warning = {"role": "user", "content": [{"type": "text", "text": "Warning: this is a legacy conversation …"}]}
    new = {"id": "msg_new", "role": "assistant", "ts": T0 + 900_000, "content": [{"type": "text", "text": "ok"}],
           "modelInfo": {"id": "claude-sonnet-4-5", "provider": "anthropic"},
           "metrics": {"inputTokens": 2000, "outputTokens": 20, "cacheReadTokens": 0, "cacheWriteTokens": 0,
                       "cost": 0.0063}}  # fmt: skip
    make_session(sessions, sid, "2025-12-01T16:15:00Z", messages=None, source="vscode")
    write_json(sessions / sid / f"{sid}.messages.json",
               messages_doc(sid, [{"role": "user", "content": "add a test"}, lifetime, warning, new]))  # fmt: skip
    led.refresh(source("cline", w.root))
    led.refresh(sessions)
    assert_sums(counted(led), add(expected_calls("cline", ui), (1, 2000, 20, 0, 0, 0.0063)))


# ---- the real legacy task files --------------------------------------------------------------------


def real_sums(root: Path) -> tuple:
    """The real files' api_req_started and deleted_api_reqs, summed here from the files (the rules in
    docs/formats/editor-tasks.md)."""
    total = (0, 0, 0, 0, 0, 0.0)
    for ui_path in sorted((root / "tasks").glob("*/ui_messages.json")):
        total = add(total, expected_calls("cline", json.loads(ui_path.read_bytes())))
    return total


def test_real_legacy_files(tmp_path, led):
    roots = [tmp_path / "data", tmp_path / "cli-1.0.10"]
    shutil.copytree(REAL / "data", roots[0])
    shutil.copytree(REAL / "cli-1.0.10" / "data", roots[1])
    for p in tmp_path.rglob("*"):
        p.chmod(p.stat().st_mode | stat.S_IWUSR)
    led.refresh(source("cline", *roots))
    wanted = add(real_sums(roots[0]), real_sums(roots[1]))
    assert_sums(counted(led), wanted)
    exp = json.loads((REAL / "EXPECTED.json").read_text())
    # the same as EXPECTED.json's raw sums: 19 non-zero requests + 1 restore; 35097+12606 tokensIn …
    assert wanted[0] == 19 + 1 + 1  # (data: 19 non-zero; cli-1.0.10: 1 kept + 1 restore)
    total = exp["all_roots"]["total_with_deleted"]
    assert wanted[2] == total["tokensOut"] and wanted[3] == total["cacheReads"]
    assert wanted[1] == total["tokensIn"] + total["cacheReads"] + total["cacheWrites"] - 512 - 1024 - 1024
    # (trayburn's input includes the cache tokens; the OpenAI-compatible tasks' tokensIn already held theirs)
    assert led.query("SELECT count(*) FROM calls WHERE cost IS NULL") == [(3,)]  # the cost-0 unpriced ones
    assert {r[0] for r in led.query("SELECT source FROM sessions")} == {"cli"}


# ---- where -------------------------------------------------------------------------------------------


def test_places_on_each_os():
    app = BY_NAME["roo"]
    lin = places.default_places(app, {}, PurePosixPath("/home/me"), "linux")
    assert (
        "VS Code (default)",
        PurePosixPath("/home/me/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline"),
    ) in lin
    assert any(p == PurePosixPath("/home/me/.vscode-server/data/User/globalStorage/rooveterinaryinc.roo-cline")
               for _, p in lin)  # fmt: skip
    xdg = places.default_places(app, {"XDG_CONFIG_HOME": "/cfg"}, PurePosixPath("/home/me"), "linux")
    assert xdg[0][1] == PurePosixPath("/cfg/Code/User/globalStorage/rooveterinaryinc.roo-cline")
    mac = places.default_places(BY_NAME["kilo"], {}, PurePosixPath("/Users/me"), "darwin")
    assert [str(p) for _, p in mac][:5] == [
        f"/Users/me/Library/Application Support/{f}/User/globalStorage/kilocode.kilo-code"
        for f in ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")
    ]
    appdata = {"APPDATA": r"C:\Users\me\AppData\Roaming"}
    home = PureWindowsPath(r"C:\Users\me")
    win = places.default_places(BY_NAME["cline"], appdata, home, "win32", home / ".cline" / "data")
    assert win[0][1] == PureWindowsPath(r"C:\Users\me\AppData\Roaming\Code\User\globalStorage\saoudrizwan.claude-dev")
    assert win[-1] == ("Cline CLI data folder (before 3.0; default)", PureWindowsPath(r"C:\Users\me\.cline\data"))
    noenv = places.default_places(BY_NAME["cline"], {}, PureWindowsPath(r"C:\Users\me"), "win32")
    assert noenv[0][1] == PureWindowsPath(r"C:\Users\me\AppData\Roaming\Code\User\globalStorage\saoudrizwan.claude-dev")


def test_another_app_is_one_entry(led, tmp_path):
    """An app added as data only (Zoo Code, the Roo fork: its own extension id and storage setting, Roo's format)
    is found in every flavour, read as Roo is, and stamped with its own id and source; a CLI's folder under the
    home folder (the old Kilo CLI's) is a place on every OS."""
    zoo = places.App("zoo", "Zoo Code", ("zoocodeorganization.zoo-code",), "zoo_code", "zoo-code", places.ROO_FORMAT,
                 storage_setting="zoo-code.customStoragePath")  # fmt: skip
    lin = places.default_places(zoo, {}, PurePosixPath("/home/me"), "linux")
    assert lin[0][1] == PurePosixPath("/home/me/.config/Code/User/globalStorage/zoocodeorganization.zoo-code")
    w = TaskWriter(tmp_path / "zoo", "roo")
    tid = "0199a8d2-6f3e-7c1a-9b2e-1f2a3b4c5d6e"
    ui = [say(T0, "text", "build it"), usage_say(T0 + 10, "api_req_started", 15220, 95, 420, 14800, 0.00744)]
    w.write(tid, ui)
    w.api_history(tid, ["claude-sonnet-4-5"])
    led.refresh(TaskSource(zoo, [Place("zoo", w.root, "test")]))
    assert_sums(counted(led), expected_calls("roo", ui))
    assert led.query("SELECT id, source, model FROM sessions") == [(f"zoo:{tid}", "zoo-code", "claude-sonnet-4-5")]
    assert places.source_label("roo-code") == "Roo Code"
    kilo_cli = places.App("kilocli", "Kilo CLI (before 1.0)", (), "kilo_cli", "kilo-cli", places.ROO_FORMAT,
                      flavours=(), servers=(), home_folders=(("Kilo CLI", ".kilocode/cli/global"),))  # fmt: skip
    win = places.default_places(kilo_cli, {}, PureWindowsPath(r"C:\Users\me"), "win32")
    assert win == [("Kilo CLI (default)", PureWindowsPath(r"C:\Users\me\.kilocode\cli\global"))]


def test_places_settings_and_custom_storage(tmp_path):
    home = tmp_path / "home"
    user = home / ".config" / "Cursor" / "User"
    user.mkdir(parents=True)
    (user / "settings.json").write_text('{\n  // mine\n  "roo-cline.customStoragePath": "~/roo-store",\n}')
    found = places.places(BY_NAME["roo"], [], {}, home, "linux")
    assert Place("roo", home / "roo-store", "Cursor: roo-cline.customStoragePath") in found
    given = places.places(BY_NAME["roo"], ["~/x", "/y/tasks"], {}, home, "linux")
    assert [(p.path, p.origin) for p in given] == [(home / "x", "settings (roo_code_dirs)"),
                                                   (Path("/y/tasks"), "settings (roo_code_dirs)")]  # fmt: skip
    assert given[1].tasks == Path("/y/tasks")


# ---- the engine: found by default, by source, export, the session, doctor, on/off ---------------------------


def test_engine_reads_every_app_by_source(tmp_path, capsys):
    from trayburn import cli
    from trayburn.engine import Engine

    home = Path.home()
    c = TaskWriter(storage(home, "cline", "Code"), "cline")
    r = TaskWriter(storage(home, "roo", "Cursor"), "roo")
    k = TaskWriter(storage(home, "kilo", "VSCodium"), "kilo")
    cui = cline_task()
    c.write(str(T0), cui, meta={"environment_history": [{"host_name": "Visual Studio Code"}]})
    rui = [say(T0, "text", "go"), usage_say(T0 + 1, "api_req_started", 5000, 10, 0, 4000, 0.01)]
    r.write("r1", rui)
    kui = [say(T0, "text", "go"), usage_say(T0 + 1, "api_req_started", 7000, 10, 0, 0, 0.02)]
    k.write("k1", kui)
    engine = Engine()
    engine.refresh()
    assert_sums(counted(engine.ledger), add(expected_calls("cline", cui), expected_calls("roo", rui),
                                            expected_calls("kilo", kui)))  # fmt: skip
    spend = dict(engine.spend_by_source(since=None, until=None) or [])
    assert set(spend) <= {"VS Code", "Roo Code", "Kilo Code"}  # (today's only)
    engine.close()
    assert cli.main(["report", "--since", "2025-12-01", "--until", "2025-12-01", "--by", "source", "--json"]) == 0
    rows = {row["key"]: row for row in json.loads(capsys.readouterr().out)["rows"]}
    assert set(rows) == {"vscode", "roo-code", "kilo-code"}
    assert rows["vscode"]["cost_usd"] == pytest.approx(expected_calls("cline", cui)[5])
    assert cli.main(["session", f"cline:{T0}", "--json"]) == 0
    detail = json.loads(capsys.readouterr().out)
    assert len(detail["calls_detail"]) == detail["calls"] == 2  # the task with its requests
    assert cli.main(["doctor"]) in (0, 1)
    out = capsys.readouterr().out
    assert "Editor task folders:" in out and str(r.root / "tasks") in out and "[Cursor (default)]" in out
    # turned off: not read (its calls already held stay, as for a session folder that went)
    assert cli.main(["config", "set", "roo_code", "false"]) == 0
    capsys.readouterr()
    engine = Engine()
    assert [s.feed for s in engine.task_sources()] == [f"tasks:{a.name}" for a in places.APPS if a.name != "roo"]
    engine.close()


def test_a_new_process_on_an_up_to_date_ledger_reads_no_files_rows_for_the_editor_apps(tmp_path):
    """`trayburn today` in a terminal: each app's scan digest, stored by the first process (whichever source
    loaded the ledger's files first), stands for "nothing changed": the next process reads no files row."""
    from trayburn.engine import Engine

    home = Path.home()
    r = TaskWriter(storage(home, "roo", "Code"), "roo")
    k = TaskWriter(storage(home, "kilo", "Code"), "kilo")
    rui = [say(T0, "text", "go"), usage_say(T0 + 1, "api_req_started", 5000, 10, 0, 4000, 0.01)]
    kui = [say(T0, "text", "go"), usage_say(T0 + 1, "api_req_started", 7000, 10, 0, 0, 0.02)]
    r.write("r1", rui)
    k.write("k1", kui)
    for folder in (r.folder("r1"), k.folder("k1")):  # written a while ago, as a finished task's files are
        for f in folder.iterdir():
            os.utime(f, ns=(f.stat().st_mtime_ns - 60 * 10**9,) * 2)
    first = Engine()
    first.refresh()
    first.close()
    again = Engine()
    ran: list[str] = []
    again.ledger.db.set_trace_callback(ran.append)
    again.refresh()
    again.ledger.db.set_trace_callback(None)
    assert [s for s in ran if "FROM files" in s] == []
    assert_sums(counted(again.ledger), add(expected_calls("roo", rui), expected_calls("kilo", kui)))
    again.close()


def test_doctor_is_ok_with_editor_tasks_alone(tmp_path, capsys):
    """No Cline CLI (no ~/.cline), only Roo Code's tasks: doctor says OK (exit 0), naming the tasks and that the
    CLI is not installed; the tray's kind is "ok" too, so it shows the figures instead of "not installed"."""
    from trayburn import cli
    from trayburn.engine import Engine

    r = TaskWriter(storage(Path.home(), "roo", "Code"), "roo")
    r.write("r1", [say(T0, "text", "go"), usage_say(T0 + 1, "api_req_started", 5000, 10, 0, 4000, 0.01)])
    assert not (Path.home() / ".cline").exists()
    assert cli.main(["doctor", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["kind"] == "ok"
    assert "1 of Roo Code" in out["verdict"] and "the Cline CLI is not installed" in out["verdict"]
    engine = Engine()
    assert engine.health().kind == "ok"
    engine.close()
    shutil.rmtree(r.root / "tasks")  # the tasks gone from disk: nothing left but what the ledger held
    assert cli.main(["doctor", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["kind"] == "not_installed"


def test_export_carries_the_app(tmp_path, capsys):
    from trayburn import cli

    r = TaskWriter(storage(Path.home(), "roo"), "roo")
    r.write("r1", [say(T0, "text", "go"), usage_say(T0 + 1, "api_req_started", 5000, 10, 0, 4000, 0.01)])
    assert cli.main(["export", "--since", "2025-12-01", "--until", "2025-12-01"]) == 0
    out = capsys.readouterr().out
    assert "roo-code" in out


def test_the_menu_says_today_by_app():
    """Two editor apps with spend today: the tray's menu has "Kilo Code $0.02 · Roo Code $0.01", biggest first,
    each amount the one its task's file reports."""
    from trayburn.engine import Engine
    from trayburn.tray import host
    from trayburn.tray.app import TrayApp

    now = int(time.time() * 1000)
    r = TaskWriter(storage(Path.home(), "roo", "Code"), "roo")
    r.write("r1", [say(now, "text", "go"), usage_say(now, "api_req_started", 5000, 10, 0, 4000, 0.01)])
    k = TaskWriter(storage(Path.home(), "kilo", "Code"), "kilo")
    k.write("k1", [say(now, "text", "go"), usage_say(now, "api_req_started", 7000, 10, 0, 0, 0.02)])
    app = TrayApp(Engine(), host.load_pystray("dummy"), host.capabilities("dummy"))
    app.tick()
    texts = [str(i.text) for i in app.icon.menu.items]
    assert "Kilo Code $0.02 · Roo Code $0.01" in texts, texts
    app.engine.close()
