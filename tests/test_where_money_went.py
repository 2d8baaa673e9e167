"""Where the money went: cost by tool and by agent add up to the period's spend exactly (on the real recording and on
hand-made calls with known tool blocks), what the cache saved against a hand computation, and a what-if on another
model against genai-prices' own calculator, call by call from the recording's files."""

from __future__ import annotations

import json
import sqlite3
from datetime import date

import pytest
from genai_prices import Usage, calc_price
from genai_prices.data_snapshot import get_snapshot
from helpers.corpus import CORPUS, age_all, assistant, expected, isolated_env, make_session, sessions_of, set_tz, user  # noqa: F401

from trayburn import cli
from trayburn.engine import Engine
from trayburn.figures import attribution, periods
from trayburn.ledger import SCHEMA_VERSION
from trayburn.sources.base import command_words
from trayburn.sources.editor_tasks.parse import parse_task
from trayburn.sources.editor_tasks.places import APPS

REAL_DAY = "2026-11-30"
NANO = 1_000_000_000


def report(capsys, state, cline_dir, *extra: str) -> dict:
    argv = ["report", "--since", REAL_DAY, "--until", REAL_DAY, "--json", "--state-dir", str(state), *extra]
    assert cli.main(argv) == 0
    return json.loads(capsys.readouterr().out)


def nanos(cost: float | None) -> int:
    return round((cost or 0.0) * NANO)


@pytest.fixture
def real_cli(tmp_path, set_tz, monkeypatch):
    set_tz("UTC")
    for k, v in isolated_env(tmp_path, CLINE_DIR=str(CORPUS)).items():
        monkeypatch.setenv(k, v)
    return tmp_path / "state"


def test_real_recording_by_tool_and_by_agent_add_up_to_the_days_spend(real_cli, capsys):
    spend = report(capsys, real_cli, CORPUS)["total"]
    for by in ("tool", "agent"):
        r = report(capsys, real_cli, CORPUS, "--by", by)
        assert nanos(r["total"]["cost_usd"]) == nanos(spend["cost_usd"])
        assert sum(nanos(row["cost_usd"]) for row in r["rows"]) == nanos(spend["cost_usd"])
        assert r["total"]["calls"] == spend["calls"] == expected()["totals"]["calls"]
        for row in r["rows"]:  # a shell tool's programs add up to its share
            if row.get("commands"):
                assert sum(nanos(c["cost_usd"]) for c in row["commands"]) == nanos(row["cost_usd"])
    agents = report(capsys, real_cli, CORPUS, "--by", "agent")
    assert sum(row["calls"] for row in agents["rows"]) == spend["calls"]  # every call in exactly one row
    roles = sorted((row["role"], row.get("label", row["key"])) for row in agents["rows"])
    assert roles == [
        ("lead", "lead"),
        ("subagent", "1796026750829_e5vdgr"),
        ("subagent", "1796026750831_om4ix8"),
        ("teammate", "worker"),
    ]
    want = {}  # each agent's calls, straight from the files
    for f in sessions_of(CORPUS).glob("*/*.messages.json"):
        doc = json.loads(f.read_bytes())
        n = sum(1 for m in doc["messages"] if m["role"] == "assistant" and isinstance(m.get("metrics"), dict))
        key = "lead" if doc.get("agent", "lead") == "lead" else f"{f.parent.name}/{f.name}"
        want[key] = want.get(key, 0) + n
    assert {row["key"]: row["calls"] for row in agents["rows"]} == {k: v for k, v in want.items() if v}
    tools = {row["key"]: row for row in report(capsys, real_cli, CORPUS, "--by", "tool")["rows"]}
    assert {c["key"] for c in tools["run_commands"]["commands"]} == {"echo", "ls", "wc", "python3"}
    assert tools["spawn_agent"]["uses"] == 2 and tools["spawn_agent"]["calls"] == 1  # two in one reply


def shell(mid, ts, commands, cost, *others, encoded=False):
    """An assistant message whose reply called run_commands with these command lines, then the other tools."""
    m = assistant(mid, ts, cost=cost, model="gpt-4o")
    given = json.dumps(commands) if encoded else commands
    m["content"] += [{"type": "tool_use", "id": "s", "name": "run_commands", "input": {"commands": given}}]
    m["content"] += [{"type": "tool_use", "id": f"t{i}", "name": n, "input": {"x": 1}} for i, n in enumerate(others)]
    return m


@pytest.fixture
def made(tmp_path, set_tz):
    set_tz("UTC")
    sessions = sessions_of(tmp_path / "cline")
    t = 1_796_086_800_000  # 2026-12-01T01:00Z
    make_session(
        sessions,
        "1796086800000_tools",
        "2026-12-01T00:00:00Z",
        [
            user("u0", t),
            shell("m1", t + 1, ["git status", "npm test", "git diff"], 0.09, "read_files"),  # 2 tools
            assistant("m2", t + 2, cost=0.01),  # no tool: "reply"
            assistant("m3", t + 3, cost=0.03, tools=("editor", "editor", "apply_patch")),
            shell("m4", t + 4, ["FOO=1 ./node_modules/.bin/jest -i"], 0.007, encoded=True),  # a JSON-encoded list
            assistant("m5", t + 5, cost=0.001, tools=("team_run_task",)),
        ],
        agents={"agent_1796086800001_abc.messages.json": ("subagent", [shell("s1", t + 6, ["ls"], 0.02)])},
    )
    age_all(sessions)  # settled: a later refresh reads nothing again
    engine = Engine(env=isolated_env(tmp_path, CLINE_DIR=str(tmp_path / "cline")))
    engine.refresh()
    yield engine
    engine.close()


DEC1 = periods.day_of(date(2026, 12, 1))


def test_known_tool_blocks_split_evenly(made):
    a = made.attribution(DEC1, "tool")
    rows = {r.key: r for r in a.rows}
    want = {  # nano-dollars, by hand
        "run_commands": 45_000_000 + 7_000_000 + 20_000_000,
        "read_files": 45_000_000,
        "reply": 10_000_000,
        "editor": 20_000_000,
        "apply_patch": 10_000_000,
        "team_run_task": 1_000_000,
    }
    assert {k: r.nano for k, r in rows.items()} == want
    assert a.total.nano == sum(want.values()) == 158_000_000
    words = {c.key: c.nano for c in rows["run_commands"].under}
    assert words == {"git": 30_000_000, "npm": 15_000_000, "jest": 7_000_000, "ls": 20_000_000}
    assert (rows["editor"].calls, rows["editor"].uses) == (1, 2)
    agents = {r.key: (r.role, r.label, r.nano, r.calls) for r in made.attribution(DEC1, "agent").rows}
    assert agents == {
        "lead": ("lead", "lead", 138_000_000, 5),
        "1796086800000_tools/agent_1796086800001_abc.messages.json": ("subagent", "1796086800001_abc", 20_000_000, 1),
    }


def test_one_session_by_tool(made):
    a = made.attribution(None, "tool", session_id="1796086800000_tools")
    assert a.total.nano == 158_000_000 and a.session_id == "1796086800000_tools"


def test_a_split_without_remainder_into_thirds():
    shares = attribution.apportion([0.01 / 3] * 3, 10_000_000)
    assert sum(shares) == 10_000_000 and max(shares) - min(shares) == 1


def test_command_words():
    assert command_words(["git status", "  ", "cd a && npm test"]) == "git cd"
    assert command_words('["python3 -m pytest", "FOO=1 BAR=2 make"]') == "python3 make"
    assert command_words(None) == ""


def test_legacy_tasks_tool_messages():
    data = (
        CORPUS.parent / "real-cline-legacy-v1" / "data" / "tasks" / "1796154669123" / "ui_messages.json"
    ).read_bytes()
    calls = parse_task(data, APPS[0], "1796154669123").calls
    assert [(c.tools, c.commands) for c in calls] == [
        (("newFileCreated",), None),
        (("execute_command",), "cat"),
        ((), None),
    ]


# ---- the cache and the what-if, at list price -------------------------------------------------------------------


def anthropic_rates() -> tuple[float, float]:
    """Claude Sonnet 4.5's input and cache-read prices (USD per million) in genai-prices' data."""
    _, model = get_snapshot().find_provider_model("claude-sonnet-4-5", None, "anthropic", None)
    return float(model.prices.input_mtok.base), float(model.prices.cache_read_mtok.base)


def test_cache_saved_by_hand(tmp_path, set_tz):
    set_tz("UTC")
    sessions = sessions_of(tmp_path / "cline")
    t = 1_796_086_800_000
    calls = [(50_000, 40_000, 1_000), (20_000, 0, 5_000), (90_000, 80_000, 0)]  # input (cache included), read, write
    msgs = [user("u0", t)]
    for i, (inp, cr, cw) in enumerate(calls):
        m = assistant(f"c{i}", t + i + 1, input=inp, cache_read=cr, cache_write=cw, cost=0.5, model="claude-sonnet-4-5")
        m["modelInfo"]["provider"] = "anthropic"
        msgs.append(m)
    make_session(sessions, "1796086800000_cache", "2026-12-01T00:00:00Z", msgs, provider="anthropic")
    engine = Engine(env=isolated_env(tmp_path, CLINE_DIR=str(tmp_path / "cline")))
    engine.refresh()
    c = engine.cache_saved(DEC1)
    input_rate, read_rate = anthropic_rates()
    read = sum(cr for _, cr, _ in calls)
    assert c.total.cache_read_tokens == read == 120_000
    assert c.total.input_tokens == 160_000
    assert c.total.hit_share == pytest.approx(0.75)
    assert c.total.saved_usd == pytest.approx(read * (input_rate - read_rate) / 1e6, abs=1e-12)
    assert [m.name for m in c.models] == ["Claude Sonnet 4.5"]
    engine.close()


def test_reprice_a_day_against_genai_prices(real_cli, capsys):
    """Every counted call of the recording's day, from its file, priced by genai-prices' own calculator on the
    call's route: OpenRouter's price for OpenRouter calls, Anthropic's list price on any other route."""
    w = report(capsys, real_cli, CORPUS, "--reprice", "claude-sonnet-4-5")["what_if"]
    want, calls = 0.0, 0
    for folder in sessions_of(CORPUS).iterdir():
        route = json.loads((folder / f"{folder.name}.json").read_bytes()).get("provider")
        for f in folder.glob("*.messages.json"):
            for m in json.loads(f.read_bytes())["messages"]:
                metrics = m.get("metrics")
                if m["role"] != "assistant" or not isinstance(metrics, dict):
                    continue
                tokens = [
                    metrics.get(k) or 0 for k in ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens")
                ]
                if not any(tokens) and not metrics.get("cost"):
                    continue
                on = (m.get("modelInfo") or {}).get("provider") or route
                usage = Usage(input_tokens=tokens[0], output_tokens=tokens[1], cache_read_tokens=tokens[2],
                              cache_write_tokens=tokens[3])  # fmt: skip
                if on == "openrouter":
                    price = calc_price(usage, "anthropic/claude-sonnet-4.5", provider_id="openrouter")
                else:
                    price = calc_price(usage, "claude-sonnet-4-5", provider_id="anthropic")
                want += float(price.total_price)
                calls += 1
    assert w["what_if"] is True and w["calls"] == calls == expected()["totals"]["calls"]
    assert w["unpriced_calls"] == 0
    assert w["cost_usd"] == pytest.approx(want, abs=1e-9)
    assert w["spend_usd"] == pytest.approx(report(capsys, real_cli, CORPUS)["total"]["cost_usd"], abs=1e-9)


def test_reprice_on_an_unknown_model_says_so(real_cli, capsys):
    w = report(capsys, real_cli, CORPUS, "--reprice", "no-such-model-xyz")["what_if"]
    assert w["cost_usd"] is None and w["unpriced_calls"] == w["calls"] == expected()["totals"]["calls"]
    assert set(w["unpriced_routes"]) >= {"anthropic", "openrouter"}
    argv = [
        "report",
        "--since",
        REAL_DAY,
        "--until",
        REAL_DAY,
        "--state-dir",
        str(real_cli),
        "--reprice",
        "no-such-model-xyz",
    ]
    assert cli.main(argv) == 0
    assert "no price known for it" in capsys.readouterr().out


# ---- schema 6: the shell words, with no re-read of history --------------------------------------------------------


def test_schema_5_ledger_migrates_without_reading_again(made, tmp_path):
    path = made.ledger.path
    made.close()
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE calls DROP COLUMN commands")
    db.execute("PRAGMA user_version=5")
    db.commit()
    db.close()
    engine = Engine(env=isolated_env(tmp_path, CLINE_DIR=str(tmp_path / "cline")))
    assert engine.ledger.query("PRAGMA user_version") == [(SCHEMA_VERSION,)] and SCHEMA_VERSION >= 6
    stats = engine.refresh()
    assert stats.files_read == 0  # nothing read again
    a = engine.attribution(DEC1, "tool")
    rows = {r.key: r for r in a.rows}
    assert a.total.nano == 158_000_000 and rows["read_files"].nano == 45_000_000  # the tools were held
    assert [(c.key, c.nano) for c in rows["run_commands"].under] == [(attribution.NOT_RECORDED, 72_000_000)]
    engine.close()
