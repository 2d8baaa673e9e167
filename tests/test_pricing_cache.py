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
from corpus import CORPUS, isolated_env

from trayburn import cli
from trayburn.errors import Exit
from trayburn.pricing import PriceBook

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


def test_prices_command_text_and_route(env, capsys):
    assert cli.main(["prices", "z-ai/glm-4.6", "--provider", "openrouter"]) == 0
    text = capsys.readouterr().out
    assert "z-ai/glm-4.6 on openrouter: GLM-4.6" in text and "provider openrouter" in text
    assert cli.main(["prices", "mystery-x"]) == 0
    assert 'prices."mystery-x"' in capsys.readouterr().out
    assert cli.main(["prices"]) == Exit.USAGE
    (env / "settings.toml").write_text('[prices."glm-4.6"]\ninput = 0.5\n')
    assert cli.main(["prices", "GLM-4.6", "--json"]) == 0
    (mine,) = json.loads(capsys.readouterr().out)
    assert mine["source"] == "settings" and mine["periods"][0]["usd_per_million"]["input"]["base"] == 0.5
