"""The resolved-prices cache: a warm process prices known models without importing genai-prices
(checked in real `trayburn` processes on the real recording), the file is private and rebuilt when
the settings' prices or aliases change, and a broken file costs speed, never figures. Also
`trayburn prices`."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest
from helpers.corpus import CORPUS, assistant, isolated_env, make_session, ms

from trayburn import cli
from trayburn.errors import Exit
from trayburn.pricing import PriceBook

NOON = ms("2026-11-30T12:00:00Z")
HEAVY = ("genai_prices", "pydantic", "pydantic_core", "httpx")
PROBE = """
import json, sys
from trayburn.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
print("\\nMODULES " + json.dumps(sorted({m.split(".")[0] for m in sys.modules})))
raise SystemExit(code)
"""


def run_trayburn(tmp_path, *argv: str) -> tuple[dict | list, set[str]]:
    env = {**os.environ, **isolated_env(tmp_path, CLINE_DIR=str(CORPUS))}
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out, _, modules = done.stdout.rpartition("\nMODULES ")
    return json.loads(out), set(json.loads(modules))


def test_warm_today_imports_no_genai_prices_pydantic_or_httpx(tmp_path):
    argv = ("today", "--date", "2026-11-30", "--json")
    first, cold = run_trayburn(tmp_path, *argv)
    assert first["estimated_cost_usd"] > 0 and {m["name"] for m in first["models"]} >= {"GPT-4o", "Claude Sonnet 4.5"}
    assert "genai_prices" in cold  # the first run resolved the recording's models
    second, warm = run_trayburn(tmp_path, *argv)
    assert second == first
    assert warm.isdisjoint(HEAVY), warm & set(HEAVY)
    _, plain = run_trayburn(tmp_path, "today", "--json")  # the person's `trayburn today` (no calls today)
    assert plain.isdisjoint(HEAVY)
    _, sessions = run_trayburn(tmp_path, "sessions", "--all", "--json")
    assert sessions.isdisjoint(HEAVY)
    span = ("--since", "2026-11-24", "--until", "2026-12-06")
    by_model, modules = run_trayburn(tmp_path, "report", *span, "--by", "model", "--json")
    assert {r["label"] for r in by_model["rows"]} >= {"GPT-4o", "Claude Sonnet 4.5"} and modules.isdisjoint(HEAVY)
    assert by_model["total"]["estimated_cost_usd"] == pytest.approx(first["estimated_cost_usd"], abs=1e-9)
    rows, modules = run_trayburn(tmp_path, "export", *span, "--format", "json")
    assert len(rows) == first["calls"] and modules.isdisjoint(HEAVY)
    seen, modules = run_trayburn(tmp_path, "prices", "--json")  # every model seen: names and prices cached
    assert {m["name"] for m in seen["models"]} >= {"GPT-4o", "Claude Sonnet 4.5"} and modules.isdisjoint(HEAVY)
    doctor, modules = run_trayburn(tmp_path, "doctor", "--json")
    assert doctor["unpriced_models"] == [] and modules.isdisjoint(HEAVY)


def test_cache_file_is_private_and_shared_by_the_next_book(tmp_path):
    path = tmp_path / "state" / "prices.json"
    book = PriceBook(cache=path)
    want = book.call_cost("z-ai/glm-4.6", 300_000, 1_000, 0, 0, provider="openrouter")
    name = book.display("z-ai/glm-4.6", provider="openrouter")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    data = json.loads(path.read_text())
    assert data["models"]["openrouter\tz-ai/glm-4.6"]["price"]["provider"] == "openrouter"
    again = PriceBook(cache=path)
    assert again._cache.models  # loaded from the file, not resolved again
    assert again.call_cost("z-ai/glm-4.6", 300_000, 1_000, 0, 0, provider="openrouter") == want
    assert again.display("z-ai/glm-4.6", provider="openrouter") == name == "GLM-4.6"
    assert [p.name for p in path.parent.iterdir()] == ["prices.json"]  # no temp file left behind


def test_cache_is_rebuilt_when_prices_or_aliases_change(tmp_path):
    path = tmp_path / "prices.json"
    PriceBook(cache=path).key("my-proxy")
    assert json.loads(path.read_text())["models"]["\tmy-proxy"]["key"] == "my-proxy"
    aliased = PriceBook(aliases={"my-proxy": "glm-4.6"}, cache=path)
    assert not aliased._cache.models  # another stamp: nothing reused
    assert aliased.key("my-proxy") == "glm-4-6" and aliased.prices("my-proxy").provider == "zai"
    assert json.loads(path.read_text())["stamp"]["settings"]["aliases"] == {"my-proxy": "glm-4.6"}
    priced = PriceBook({"glm-4.6": {"input": 1.0}}, {"my-proxy": "glm-4.6"}, cache=path)
    assert not priced._cache.models and priced.prices("my-proxy").input == 1.0


@pytest.mark.parametrize("text", ["{not json", '{"format": 1, "stamp": 3}', "[]", ""])
def test_a_broken_cache_is_ignored_and_replaced(tmp_path, text):
    path = tmp_path / "prices.json"
    path.write_text(text)
    book = PriceBook(cache=path)
    assert book.prices("gpt-4o", "openai").provider == "openai"
    assert json.loads(path.read_text())["models"]


def test_an_unwritable_state_folder_still_prices(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    book = PriceBook(cache=blocker / "prices.json")  # its folder cannot be made
    assert book.prices("glm-5", None).provider == "zai"


def test_a_cache_that_cannot_be_written_is_said_once_not_at_every_price(tmp_path, caplog):
    """A folder where prices.json should be (or a full disk): each model resolved used to try, fail and log
    again (a cold `trayburn today --json` printed 40 such lines); now the first failure keeps the cache in
    memory, and each problem is said once."""
    path = tmp_path / "prices.json"
    path.mkdir()
    caplog.set_level("WARNING", logger="trayburn.pricing.book")
    book = PriceBook(cache=path)
    ids = [("gpt-4o", "openai"), ("claude-sonnet-4-5", "anthropic"), ("glm-5", None), ("z-ai/glm-4.6", "openrouter")]
    providers = [book.prices(model, route).provider for model, route in ids]
    names = [book.display(model, route) for model, route in ids]
    assert providers == ["openai", "anthropic", "zai", "openrouter"] and "Claude Sonnet 4.5" in names
    said = [r.getMessage().split(" /")[0] for r in caplog.records]
    assert sorted(said) == ["could not write the prices cache", "ignoring the prices cache"], said
    assert path.is_dir() and not list(path.iterdir())


# ---- trayburn prices ------------------------------------------------------------------------------


@pytest.fixture
def env(tmp_path, monkeypatch):
    for k, v in isolated_env(tmp_path).items():
        monkeypatch.setenv(k, v)
    return tmp_path


def test_prices_command_json(env, capsys):
    assert cli.main(["prices", "cline-pass/glm-5.2", "claude-sonnet-4-5", "mystery-x", "--json"]) == 0
    glm, sonnet, mystery = json.loads(capsys.readouterr().out)
    assert (glm["name"], glm["source"], glm["genai_prices"]["provider"]) == ("GLM-5.2", "genai-prices", "zai")
    rates = glm["periods"][0]["usd_per_million"]
    assert (rates["input"]["base"], rates["output"]["base"], rates["cache_read"]["base"]) == (1.4, 4.4, 0.26)
    tiers = sonnet["periods"][0]["usd_per_million"]["input"]["tiers"]
    assert tiers == [{"above_input": 200_000, "price": 6.0}]
    assert (mystery["priced"], mystery["source"], mystery["periods"]) == (False, None, [])


def test_prices_with_no_model_lists_every_model_seen_the_unpriced_first(env, capsys, monkeypatch):
    monkeypatch.setenv("CLINE_DIR", str(env / "cline"))
    sessions = env / "cline" / "data" / "sessions"
    calls = [assistant("a", NOON, 1_000, 10, model="gpt-4o"), assistant("b", NOON + 1, 2_000, 20, model="GLM-4.6")]
    calls += [assistant("c", NOON + 2, 3_000, 30, model="z-ai/glm-4.6")]
    calls += [assistant(f"m{i}", NOON + 3 + i, 50_000, 500, model="mystery-model-x") for i in range(2)]
    calls += [assistant("r", NOON + 9, 100, 1, model="other-mystery", cost=0.5)]  # reported: nothing to price
    make_session(sessions, "1796020000000_seen1", "2026-11-30T00:00:00.000Z", calls)
    assert cli.main(["prices", "--json"]) == 0
    models = json.loads(capsys.readouterr().out)["models"]
    assert [(m["name"], m["priced"], m["calls"], m["unpriced_calls"]) for m in models] == [
        ("mystery-model-x", False, 2, 2),
        ("other-mystery", False, 1, 0),  # no price, but every call reported its cost
        ("GLM-4.6", True, 2, 0),
        ("GPT-4o", True, 1, 0),
    ]
    mystery = models[0]
    assert (mystery["input"], mystery["output"], mystery["unpriced_routes"]) == (100_000, 1_000, ["openai-compatible"])
    assert sorted(models[2]["ids"]) == ["GLM-4.6", "z-ai/glm-4.6"]
    assert cli.main(["prices"]) == 0
    text = capsys.readouterr().out
    assert text.index("mystery-model-x") < text.index("GLM-4.6")
    assert 'prices."mystery-model-x"' in text and "trayburn config path" in text
    assert cli.main(["doctor", "--json"]) in (Exit.OK, Exit.PROBLEMS)
    doc = json.loads(capsys.readouterr().out)
    assert [(m["name"], m["calls"], m["input"]) for m in doc["unpriced_models"]] == [("mystery-model-x", 2, 100_000)]
    cli.main(["doctor"])
    text = capsys.readouterr().out
    assert "Models with no known price (1" in text and "mystery-model-x: 2 calls, 101.0k tokens" in text


def test_prices_command_text_and_route(env, capsys):
    assert cli.main(["prices", "z-ai/glm-4.6", "--provider", "openrouter"]) == 0
    text = capsys.readouterr().out
    assert "z-ai/glm-4.6 on openrouter: GLM-4.6" in text and "provider openrouter" in text
    assert cli.main(["prices", "mystery-x"]) == 0
    assert 'prices."mystery-x"' in capsys.readouterr().out
    assert cli.main(["prices", "--provider", "openrouter"]) == Exit.USAGE  # a route, but no model to apply it to
    (env / "settings.toml").write_text('[prices."glm-4.6"]\ninput = 0.5\n')
    assert cli.main(["prices", "GLM-4.6", "--json"]) == 0
    (mine,) = json.loads(capsys.readouterr().out)
    assert mine["source"] == "settings" and mine["periods"][0]["usd_per_million"]["input"]["base"] == 0.5
