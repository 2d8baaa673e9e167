"""Prices that match the bill: every route/id pair Cline users send is priced at the list price of the
right genai-prices provider, per call with its real usage (tiers and daily periods included), and
checked against `genai_prices.calc_price` for the same usage; settings still win."""

from __future__ import annotations

import json

import pytest
from helpers.corpus import CORPUS, sessions_of
from helpers.prices import NIGHT, NOON, ROUTED, USAGES, list_cost

from trayburn.pricing import Price, PriceBook, price

# (model id as Cline writes it, the call's provider, the genai-prices provider and id of its list price)


@pytest.mark.parametrize(("raw", "route", "provider", "ref"), ROUTED)
def test_each_route_is_priced_at_its_providers_list_price(raw, route, provider, ref):
    book = PriceBook()
    price = book.prices(raw, route)
    assert price is not None and price.provider == provider
    for usage in USAGES:
        for at in (NOON, NIGHT):
            want = list_cost(provider, ref, usage, at)
            assert book.call_cost(raw, *usage, provider=route, at_ms=at) == pytest.approx(want, rel=1e-9)


def test_the_session_provider_stands_in_for_a_call_without_one():
    book = PriceBook()
    assert book.prices("glm-5.2", None, "cline-pass").provider == "zai"
    assert book.prices("z-ai/glm-4.6", "unknown", "openrouter").provider == "openrouter"
    assert book.prices("z-ai/glm-4.6", "zai", "openrouter").provider == "zai"  # the call's own route wins


def test_glm_5_2_is_priced_as_z_ai_lists_it_not_zhipuais_cny_tier():
    """Issue 8: 1.40 / 4.40 / 0.26 USD per million input / output / cache read."""
    for raw, route in [("z-ai/glm-5.2", None), ("cline-pass/glm-5.2", "cline-pass"), ("glm-5.2", "openai-compatible")]:
        p = PriceBook().prices(raw, route)
        assert (p.input, p.output, p.cache_read) == pytest.approx((1.40, 4.40, 0.26), rel=0.01)


def test_sonnet_4_5_long_context_tier():
    """Issue 8: 250k input and 1k output is $0.765 at the base rates, $1.5225 as Anthropic bills it."""
    book = PriceBook()
    assert book.call_cost("claude-sonnet-4-5", 250_000, 1_000, 0, 0, provider="anthropic") == pytest.approx(1.5225)
    below = book.call_cost("claude-sonnet-4-5", 200_000, 1_000, 0, 0, provider="anthropic")
    assert below == pytest.approx(list_cost("anthropic", "claude-sonnet-4-5", (200_000, 1_000, 0, 0), NOON))
    assert below == pytest.approx(200_000 * 3 / 1e6 + 1_000 * 15 / 1e6)  # at 200k exactly: still the base rate


def test_gemini_2_5_pro_tiers_above_and_below_200k():
    book = PriceBook()
    p = book.prices("gemini-2.5-pro", "gemini")
    assert p.tier_starts() == [200_000] and not p.linear
    for usage in [(150_000, 4_000, 100_000, 0), (260_000, 4_000, 100_000, 0)]:
        want = list_cost("google", "gemini-2.5-pro", usage, NOON)
        assert book.call_cost("gemini-2.5-pro", *usage, provider="gemini") == pytest.approx(want, rel=1e-9)
    small, big = (book.call_cost("gemini-2.5-pro", n, 0, 0, 0, provider="gemini") / n for n in (150_000, 260_000))
    assert big > small * 1.5


def test_deepseek_daily_window_follows_the_calls_time():
    book = PriceBook()
    night, noon = (
        book.call_cost("deepseek-flash", 10_000, 1_000, 0, 0, provider="deepseek", at_ms=t) for t in (NIGHT, NOON)
    )
    assert night != noon
    assert night == pytest.approx(list_cost("deepseek", "deepseek-flash", (10_000, 1_000, 0, 0), NIGHT), rel=1e-9)


def test_cache_tokens_are_charged_once_and_uncached_input_is_never_negative():
    p = PriceBook().prices("gpt-4o", "openai")
    assert p.cost(1_000_000, 0, 1_000_000, 0) == pytest.approx(p.cache_read)
    odd = p.cost(100, 10, 5_000, 0)  # cache reads above the input (odd data): only the cache reads
    assert odd == pytest.approx((5_000 * p.cache_read + 10 * p.output) / 1e6)
    assert p.cost(10_000, 0, 0, 2_000) == pytest.approx(10_000 * p.input / 1e6)  # no cache-write price: as input


def test_real_recordings_models_at_their_routes_list_prices():
    """Every call in the recording, priced on its own route, matches calc_price for that route's provider."""
    book, seen = PriceBook(), set()
    right = {"anthropic": "anthropic", "deepseek": "deepseek", "openai-compatible": "openai", "openai-native": "openai"}
    right["openrouter"] = "openrouter"
    for path in sessions_of(CORPUS).rglob("*.messages.json"):
        for m in json.loads(path.read_text())["messages"]:
            if m.get("role") != "assistant" or not m.get("metrics"):
                continue
            info, t = m["modelInfo"], m["metrics"]
            usage = tuple(t.get(k, 0) for k in ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"))
            want = list_cost(right[info["provider"]], info["id"], usage, m["ts"])
            got = book.call_cost(info["id"], *usage, provider=info["provider"], at_ms=m["ts"])
            assert got == pytest.approx(want, rel=1e-9)
            seen.add((info["id"], info["provider"]))
    assert len(seen) == 5


def test_one_canonical_model_and_name_whatever_ids_were_seen():
    spellings = {
        "GLM-4.6": ["z-ai/glm-4.6", "GLM-4.6", "glm-4.6", "cline-pass/glm-4.6"],
        "Claude Sonnet 4.5": ["claude-sonnet-4-5", "anthropic/claude-sonnet-4.5", "claude-sonnet-4-5-20250929"],
        "DeepSeek V4.1 Flash": ["deepseek-flash"],
        "GPT-4o": ["gpt-4o", "openai/gpt-4o"],
    }
    for name, ids in spellings.items():
        for order in (ids, ids[::-1]):
            book = PriceBook()
            assert {book.key(i) for i in order} == {book.key(ids[0])}
            assert [book.display(i) for i in order] == [name] * len(order)
    assert PriceBook().display("") == "unknown model"


def test_settings_prices_and_aliases_win():
    book = PriceBook({"glm-4.6": {"input": 9.0}, "acme-1": {"input": 1.0, "output": 2.0}, "half": {"output": 3.0}},
                     {"my-proxy": "z-ai/glm-4.6"})  # fmt: skip
    shipped = PriceBook().prices("glm-4.6", "zai")
    mine = book.prices("z-ai/glm-4.6")
    assert mine.source == "settings" and (mine.input, mine.output, mine.cache_read) == (9.0, shipped.output, 0.11)
    assert book.key("my-proxy") == book.key("GLM-4.6") and book.prices("my-proxy").input == 9.0
    assert book.call_cost("acme-1", 1_000_000, 1_000_000, 0, 0) == pytest.approx(3.0)
    assert book.prices("half") is None and book.call_cost("half", 10, 10, 0, 0) is None  # half a price is no price
    assert PriceBook().call_cost("mystery-model-x", 10, 10, 0, 0) is None  # unknown: None, never $0
    long = PriceBook({"claude-sonnet-4.5": {"output": 20.0}}).prices("claude-sonnet-4-5", "anthropic")
    assert long.cost(250_000, 0) == pytest.approx(250_000 * 6 / 1e6)  # tiers stay on the kinds not overridden


def test_price_round_trips_through_json():
    book = PriceBook()
    for raw, route in [("deepseek-flash", "deepseek"), ("claude-sonnet-4-5", "anthropic"), ("glm-5", None)]:
        p = book.prices(raw, route)
        back = Price.from_json(json.loads(json.dumps(p.to_json())))
        assert back == p
        for usage in USAGES:
            assert back.cost(*usage, at_ms=NIGHT) == p.cost(*usage, at_ms=NIGHT)


def test_route_table_order():
    lookups = price.lookups("z-ai/glm-4.6", "openrouter")
    assert lookups[0] == ("openrouter", "z-ai/glm-4.6") and ("zai", "glm-4.6") in lookups
    assert price.lookups("cline-pass/glm-5.2", "cline-pass")[0] == ("zai", "glm-5.2")
    assert price.lookups("glm-5.2", "")[-1][0] is None  # genai-prices' own guess (zhipuai for glm-) comes last


def test_a_prefix_match_prices_a_model_but_does_not_rename_it():
    book = PriceBook()
    assert book.prices("deepseek-chat-v3.1", "deepseek").model == "deepseek-chat"  # genai-prices' prefix match
    assert book.key("deepseek-chat-v3.1", "deepseek") != book.key("deepseek-chat", "deepseek")
    assert book.display("deepseek-chat-v3.1", "deepseek") != book.display("deepseek-chat", "deepseek")
    assert book.key("claude-sonnet-4-5-20250929") == book.key("claude-sonnet-4-5")  # a dated snapshot: the same


def test_a_model_no_price_list_names_is_spelled_from_its_key():
    book = PriceBook()
    for ids, name in [
        (["Acme-2.5-Pro", "acme-2-5-pro", "proxy/acme-2.5-pro"], "acme-2.5-pro"),
        (["Llama-3.1-8B"], "llama-3.1-8b"),
        (["llama3.1:8b", "Llama3.1:8B"], "llama3.1:8b"),  # Ollama's tags: not "llama3-1:8b"
        (["qwen2.5-coder:7b"], "qwen2.5-coder:7b"),
    ]:
        assert {book.display(i) for i in ids} == {name}


def test_calls_summed_within_one_tier_band_cost_what_they_cost_one_by_one():
    """What the report can do in SQL: sum the tokens of calls in the same band, price the sums once."""
    p = PriceBook().prices("claude-sonnet-4-5", "anthropic")
    (start,) = p.tier_starts()
    for band in ([(12_000, 800, 3_000, 1_000), (150_000, 2_000, 100_000, 0), (90, 5, 100, 0)],
                 [(250_000, 1_000, 0, 0), (300_000, 5_000, 200_000, 20_000)]):  # fmt: skip
        floored = [(max(i, cr + cw), o, cr, cw) for i, o, cr, cw in band]
        sums = [sum(col) for col in zip(*floored, strict=True)]
        lower = 0 if floored[0][0] <= start else start
        assert p.cost(*sums, tier_input=lower + 1) == pytest.approx(sum(p.cost(*c) for c in band), rel=1e-12)
    assert not p.periodic and PriceBook().prices("deepseek-flash", "deepseek").periodic
    pairs = [("claude-sonnet-4-5", "anthropic"), ("gpt-4o", "openai"), ("mystery-x", None)]
    assert PriceBook().tier_starts(pairs) == [start]


def test_a_free_models_list_price_is_the_same_models():
    """`cline-free/glm-5.2` is GLM-5.2 (Cline offers it free): one name, and the vendor's price where one is asked."""
    book = PriceBook()
    assert book.key("cline-free/glm-5.2", "cline") == book.key("z-ai/glm-5.2", "cline")
    assert book.prices("cline-free/glm-5.2", "cline") == book.prices("z-ai/glm-5.2", "cline")


def test_a_routing_shortcut_is_the_same_model_and_a_free_variant_is_not():
    from trayburn.pricing import model_key

    assert model_key("anthropic/claude-sonnet-4.5:nitro") == model_key("anthropic/claude-sonnet-4.5")
    assert model_key("z-ai/glm-4.6:EXACTO") == model_key("glm-4.6")
    free = PriceBook().prices("deepseek/deepseek-chat-v3.1:free", "openrouter")  # not listed: no price
    assert free is None  # never the paid model's price for a free call
    listed = PriceBook().prices("meta-llama/llama-3.3-70b-instruct:free", "openrouter")  # listed, at 0
    assert listed is None or (listed.input, listed.output) == (0, 0)
