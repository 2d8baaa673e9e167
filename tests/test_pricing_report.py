"""Prices through the ledger and the figures, end to end: hand-made calls on every route Cline users
send, priced in the day report within 1 % of the list price; a day's grouped estimate equals its calls
priced one by one (tiers, daily periods, plan calls, odd cache data) on random calls; one name per model
whatever ids were seen; plan-covered calls valued beside the spend; absurd token counts capped."""

from __future__ import annotations

import json
import tempfile
from datetime import date
from pathlib import Path

import pytest
from helpers.corpus import Ledger, assistant, isolated_env, make_session, ms, set_tz  # noqa: F401 (fixture)
from helpers.prices import NIGHT, NOON, ROUTED, USAGES, list_cost
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trayburn import billing, cli, render
from trayburn.engine import Engine
from trayburn.figures import export, history, periods
from trayburn.figures.day import day_report, hourly_costs, session_detail, sessions, sessions_report, totals_between
from trayburn.pricing import PriceBook
from trayburn.sources.base import MAX_COST

DAY = date(2026, 11, 30)
START = "2026-11-30T00:00:00.000Z"


def call(mid, ts, usage=(1000, 10, 0, 0), model="gpt-4o", route=None, **kw):
    """An assistant message whose call went by `route` (modelInfo.provider; None: none written)."""
    m = assistant(mid, ts, *usage, model=model, **kw)
    if route is None:
        m["modelInfo"].pop("provider")
    else:
        m["modelInfo"]["provider"] = route
    return m


def ledger_with(folder: Path, sessions: dict[str, tuple[str | None, list]]) -> Ledger:
    """A ledger over sessions {id: (session provider, messages)}."""
    root = folder / "sessions"
    for sid, (provider, messages) in sessions.items():
        make_session(root, sid, START, messages, provider=provider)
    led = Ledger(folder / "state" / "ledger.db")
    led.refresh(root)
    return led


@pytest.fixture(autouse=True)
def utc(set_tz):
    set_tz("UTC")


# ---- every route, through the report --------------------------------------------------------------


@pytest.mark.parametrize(("raw", "route", "provider", "ref"), ROUTED)
def test_each_route_in_the_day_report_at_its_list_price(tmp_path, raw, route, provider, ref):
    times = (NOON, NIGHT)
    messages = [call(f"m{i}{j}", t, u, raw, route) for i, u in enumerate(USAGES) for j, t in enumerate(times)]
    led = ledger_with(tmp_path, {"1796020000000_route": ("openai-compatible", messages)})
    r = day_report(led, PriceBook(), DAY)
    want = sum(list_cost(provider, ref, u, t) for u in USAGES for t in times)
    assert (r.calls, r.unpriced_calls) == (len(messages), 0)
    if billing.kind(route, raw) == billing.PLAN:  # a plan's calls: their list price is their API value, not spend
        assert (r.cost_usd, r.plan_calls) == (0.0, len(messages))
        assert r.plan_api_value_usd == pytest.approx(want, rel=0.01)
        return
    assert r.estimated_cost_usd == pytest.approx(want, rel=0.01)
    assert len(r.models) == 1 and r.models[0].cost_usd == pytest.approx(want, rel=0.01)
    led.close()


def test_the_session_provider_prices_calls_that_name_none(tmp_path):
    """z-ai/glm-4.6 through a session on openrouter: OpenRouter's price, not Z.AI's."""
    usage = (300_000, 2_000, 100_000, 0)
    led = ledger_with(tmp_path, {"1796020000000_sessp": ("openrouter", [call("a", NOON, usage, "z-ai/glm-4.6")])})
    r = day_report(led, PriceBook(), DAY)
    assert r.estimated_cost_usd == pytest.approx(list_cost("openrouter", "z-ai/glm-4.6", usage, NOON), rel=1e-9)
    led.close()


def test_long_context_tier_above_and_below_200k_through_the_report(tmp_path):
    """Issue 8: Sonnet 4.5 with 250k input and 1k output is $1.5225 (6 / 22.50 per million), not $0.765;
    at 200k it is still the base rate; a day of both is their sum, not a sum read as one long call."""
    big, small = (250_000, 1_000, 0, 0), (200_000, 1_000, 0, 0)
    messages = [call("big", NOON, big, "claude-sonnet-4-5", "anthropic")]
    messages += [call(f"s{i}", NOON + i, small, "claude-sonnet-4-5", "anthropic") for i in range(3)]
    led = ledger_with(tmp_path, {"1796020000000_tiers": ("anthropic", messages)})
    r = day_report(led, PriceBook(), DAY)
    assert r.estimated_cost_usd == pytest.approx(1.5225 + 3 * (0.6 + 0.015), rel=1e-9)
    detail = session_detail(led, PriceBook(), "1796020000000_tiers")
    assert [c.cost_usd for c in detail.calls] == pytest.approx([1.5225] + [0.615] * 3, rel=1e-9)
    assert detail.summary.cost_usd == pytest.approx(r.cost_usd, rel=1e-12)
    led.close()


# ---- a group's estimate is the sum of its calls ----------------------------------------------------

ROUTES = [  # (model id, route) pairs with tiers, daily periods, plans, no price, a session-provider fallback
    ("claude-sonnet-4-5", "anthropic"),
    ("gemini-2.5-pro", "gemini"),
    ("deepseek-flash", "deepseek"),
    ("gpt-4o", "openai-compatible"),
    ("cline-pass/glm-5.2", "cline-pass"),
    ("z-ai/glm-4.6", None),
    ("deepseek-flash", None),  # on the session's route: a plan's, with daily periods, when it is cline-pass
    ("mystery-model-x", "openai-compatible"),
    ("mystery-model-x", "claude-code"),  # a plan's call of a model with no price: the cost written is its value
    ("cline-free/glm-5.2", "cline"),
    ("arcee-ai/trinity-large-preview:free", "cline"),
]
TOKENS = st.one_of(st.integers(0, 5_000), st.integers(150_000, 450_000))
USAGE = st.tuples(TOKENS, st.integers(1, 20_000), TOKENS, st.integers(0, 30_000))  # all zero: not a call
CALL = st.tuples(st.sampled_from(ROUTES), USAGE, st.integers(0, 86_399_999), st.sampled_from([None, None, 0.0, 0.125]))


def per_call(book, calls, session_provider):
    """The calls priced one by one with PriceBook.call_cost: (estimate, unpriced calls, plan value, reported
    spend). A plan's call is valued at list price whatever its cost (the cost written when there is none),
    a free model's is nothing, a paid one's is its cost, else its estimate."""
    est, unpriced, plan, reported = 0.0, 0, 0.0, 0.0
    for (model, route), usage, t, cost in calls:
        usd = book.call_cost(model, *usage, provider=route, session_provider=session_provider, at_ms=ms(START) + t)
        kind = billing.kind(route or session_provider, model)
        if kind == billing.PLAN:
            plan += min(usd, MAX_COST) if usd is not None else (cost or 0.0)
        elif kind == billing.FREE:
            continue
        elif cost is not None:
            reported += cost
        elif usd is None:
            unpriced += 1
        else:
            est += min(usd, MAX_COST)
    return est, unpriced, plan, reported


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=st.lists(CALL, min_size=1, max_size=25), session_provider=st.sampled_from(["openrouter", "cline-pass"]))
def test_grouped_estimates_equal_the_calls_priced_one_by_one(calls, session_provider):
    book = PriceBook()
    messages = [
        call(f"m{i}", ms(START) + t, usage, model, route, **({} if cost is None else {"cost": cost}))
        for i, ((model, route), usage, t, cost) in enumerate(calls)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        led = ledger_with(Path(tmp), {"1796020000000_prop1": (session_provider, messages)})
        est, unpriced, plan, reported = per_call(book, calls, session_provider)
        day = day_report(led, book, DAY)
        assert day.calls == len(calls)
        assert day.estimated_cost_usd == pytest.approx(est, rel=1e-9, abs=1e-12)
        assert day.cost_usd == pytest.approx(est + reported, rel=1e-9, abs=1e-12)  # the paid calls' alone
        assert day.unpriced_calls == unpriced
        assert day.plan_api_value_usd == pytest.approx(plan, rel=1e-9, abs=1e-12)
        assert sum(m.cost_usd for m in day.models) == pytest.approx(day.cost_usd, rel=1e-9, abs=1e-12)
        assert sum(hourly_costs(led, book, DAY)) == pytest.approx(day.cost_usd, rel=1e-9, abs=1e-12)
        start, end = periods.day_bounds(DAY)
        assert totals_between(led, book, start, end).cost_usd == pytest.approx(day.cost_usd, rel=1e-12)
        (s,) = sessions_report(led, book, DAY, DAY)
        assert (s.cost_usd, s.plan_api_value_usd) == pytest.approx((day.cost_usd, plan), rel=1e-9, abs=1e-12)
        detail = session_detail(led, book, "1796020000000_prop1")
        rows = [c.cost_usd for c in detail.calls if c.estimated]
        assert sum(rows) == pytest.approx(est, rel=1e-9, abs=1e-12)
        for by in history.BY:  # history's every grouping: the same groups, the same prices
            h = history.report(led, book, periods.day_of(DAY), by)
            t = h.total.totals
            assert (t.calls, t.unpriced_calls) == (len(calls), unpriced), by
            assert (t.estimated_usd, t.plan_api_value_usd) == pytest.approx((est, plan), rel=1e-9, abs=1e-12), by
            for f in ("reported_usd", "estimated_usd", "plan_api_value_usd"):  # the rows add up to the total
                # (approx: sum() compensates rounding since Python 3.12, a running total does not)
                assert sum(getattr(g.totals, f) for g in h.rows) == pytest.approx(getattr(t, f), rel=1e-12), (by, f)
        (listed,) = sessions(led, book, DAY, DAY)
        assert listed.to_json() == detail.summary.to_json()  # the whole span's groups, or the session's alone
        assert (listed.estimated_cost_usd, listed.unpriced_calls) == (pytest.approx(est, rel=1e-9, abs=1e-12), unpriced)
        exported = list(export.rows(led, book, periods.day_of(DAY)))  # each call as the session detail prices it
        shown = lambda c: (c.tokens.input, c.tokens.output, c.tokens.cache_read, c.tokens.cache_write)  # noqa: E731
        as_detail = sorted(
            (shown(c), c.cost_usd or -1.0, c.estimated, c.billing, c.plan_api_value_usd or -1.0) for c in detail.calls
        )
        as_export = sorted(
            (
                (r.input_tokens, r.output_tokens, r.cache_read_tokens, r.cache_write_tokens),
                r.cost_usd or -1.0,
                r.estimated,
                r.billing,
                r.api_value_usd or -1.0,
            )
            for r in exported
        )
        assert as_export == as_detail
        assert sum(r.cost_usd for r in exported if r.estimated) == pytest.approx(est, rel=1e-9, abs=1e-12)
        assert sum(r.cost_usd is None for r in exported) == unpriced
        led.close()


# calls of a few routes, most with a reported cost: sessions that share routes and costs
SHARED = st.tuples(
    st.sampled_from([*ROUTES[:4], ROUTES[6]]), USAGE, st.integers(0, 86_399_999), st.sampled_from([None, 0.125, 0.5])
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    days=st.lists(
        st.tuples(st.sampled_from(["openrouter", "cline-pass", "anthropic"]), st.lists(SHARED, max_size=8)),
        min_size=1,
        max_size=5,
    )
)
def test_a_day_of_several_sessions_equals_its_calls_priced_one_by_one(days):
    """The day's groups are summed per session, then across sessions (`Ledger.plain_cost_groups`): sessions
    on other providers, sharing routes and tiers, some without a call, give the day the sum of their calls
    priced one by one, and the number of sessions with calls."""
    book = PriceBook()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "sessions"
        for n, (provider, calls) in enumerate(days):
            messages = [
                call(f"s{n}m{i}", ms(START) + t, usage, model, route, **({} if cost is None else {"cost": cost}))
                for i, ((model, route), usage, t, cost) in enumerate(calls)
            ]
            make_session(root, f"17960200000{n:02d}_day{n}", START, messages, provider=provider)
        engine = Engine(Path(tmp) / "settings.toml", Path(tmp) / "state", env={"CLINE_SESSION_DATA_DIR": str(root)})
        engine.refresh()
        parts = [per_call(book, calls, provider) for provider, calls in days]
        est, unpriced, plan, reported = (sum(p[i] for p in parts) for i in range(4))
        day, machines = engine.day_and_machines(DAY)
        assert (day.calls, day.sessions) == (sum(len(c) for _, c in days), sum(bool(c) for _, c in days))
        assert day.unpriced_calls == unpriced
        assert day.estimated_cost_usd == pytest.approx(est, rel=1e-9, abs=1e-12)
        assert day.cost_usd == pytest.approx(est + reported, rel=1e-9, abs=1e-12)
        assert day.plan_api_value_usd == pytest.approx(plan, rel=1e-9, abs=1e-12)
        assert [m.cost_usd for m in machines.machines] == [pytest.approx(day.cost_usd, rel=1e-12, abs=1e-12)]
        listed = sessions(engine.ledger, book, DAY, DAY)
        assert sum(s.cost_usd for s in listed) == pytest.approx(day.cost_usd, rel=1e-9, abs=1e-12)
        # and each model's sums as the calls' rows add them up, whatever sessions they are spread over
        start, end = periods.day_bounds(DAY)
        summed: dict = {}
        for g in engine.ledger.plain_cost_groups(start, end).groups:
            was = summed.get(g.route.model, (0,) * len(g.sums))
            summed[g.route.model] = tuple(a + b for a, b in zip(was, g.sums, strict=True))
        rows = engine.ledger.query(
            "SELECT model, COUNT(*), SUM(input), SUM(output), SUM(cache_read), SUM(cache_write), TOTAL(cost),"
            " SUM(cost IS NULL) FROM calls WHERE counted=1 AND ts_ms>=? AND ts_ms<? GROUP BY model",
            (start, end),
        )
        assert {r[0]: (*r[1:6], pytest.approx(r[6], abs=1e-9), r[7]) for r in rows} == {
            m: v[:7] for m, v in summed.items()
        }
        engine.close()


# ---- names ------------------------------------------------------------------------------------------


def test_one_name_per_model_whatever_ids_a_day_saw(tmp_path):
    """GLM-4.6 one day, z-ai/glm-4.6 the next, both on a third: always one row named "GLM-4.6"."""
    day2 = ms("2026-12-01T12:00:00Z")
    messages = [call("a", NOON, model="GLM-4.6"), call("b", day2, model="z-ai/glm-4.6", route="openrouter")]
    messages += [call("c", day2 + 1, model="glm-4.6", route="zai")]
    led = ledger_with(tmp_path, {"1796020000000_names": ("cline", messages)})
    book = PriceBook()
    names = [[(m.name, m.calls) for m in day_report(led, book, d).models] for d in (DAY, date(2026, 12, 1))]
    assert names == [[("GLM-4.6", 1)], [("GLM-4.6", 2)]]
    (s,) = sessions_report(led, book, None, None)
    assert s.models == ["GLM-4.6"]
    assert {c.model for c in session_detail(led, book, "1796020000000_names").calls} == {"GLM-4.6"}
    led.close()


# ---- plan-covered calls ------------------------------------------------------------------------------


def plan_day(tmp_path):
    usage = (40_000, 1_200, 30_000, 0)
    messages = [call(f"p{i}", NOON + i, usage, "cline-pass/glm-5.2", "cline-pass", cost=0) for i in range(4)]
    messages.append(call("paid", NOON + 9, (1_000, 10, 0, 0), "claude-sonnet-4-5", "cline", cost=0.25))
    sessions = tmp_path / "cline" / "data" / "sessions"
    make_session(sessions, "1796020000000_plan1", START, messages, provider="cline-pass")
    return usage, 4 * list_cost("zai", "glm-5.2", usage, NOON)


def test_plan_calls_show_their_api_value_beside_the_spend_never_in_it(tmp_path, monkeypatch, capsys):
    _, value = plan_day(tmp_path)
    for k, v in isolated_env(tmp_path, CLINE_DIR=str(tmp_path / "cline")).items():
        monkeypatch.setenv(k, v)
    assert cli.main(["today", "--date", "2026-11-30", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["cost_usd"], out["estimated_cost_usd"], out["plan_calls"]) == (0.25, 0.0, 4)
    assert out["plan_api_value_usd"] == pytest.approx(value, rel=0.01)
    assert cli.main(["today", "--date", "2026-11-30"]) == 0
    assert f"ClinePass: 4 calls, ${value:,.2f} of API value included" in capsys.readouterr().out
    assert cli.main(["session", "1796020000000_plan1", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["plan_api_value_usd"] == pytest.approx(value, rel=0.01) and s["cost_usd"] == 0.25
    planned = [c for c in s["calls_detail"] if c["plan_api_value_usd"] is not None]
    assert len(planned) == 4 and all(c["cost_usd"] == 0 and not c["estimated"] for c in planned)
    assert sum(c["plan_api_value_usd"] for c in planned) == pytest.approx(value, rel=1e-9)


def test_a_zero_cost_off_plan_is_zero_with_no_plan_value(tmp_path):
    led = ledger_with(
        tmp_path, {"1796020000000_free1": ("cline", [call("f", NOON, model="gpt-4o", route="cline", cost=0)])}
    )
    r = day_report(led, PriceBook(), DAY)
    assert (r.cost_usd, r.plan_calls, r.plan_api_value_usd) == (0.0, 0, 0.0)
    led.close()


# ---- bounds ----------------------------------------------------------------------------------------------


def test_an_absurd_token_count_is_capped_and_marked(tmp_path):
    absurd = (2**50, 2**40, 0, 0)  # the parser keeps counts up to 2**53: this would be ~$10^10
    messages = [call("x", NOON, absurd, "claude-sonnet-4-5", "anthropic"), call("ok", NOON + 1, model="gpt-4o")]
    led = ledger_with(tmp_path, {"1796020000000_huge1": ("anthropic", messages)})
    book = PriceBook()
    r = day_report(led, book, DAY)
    normal = book.call_cost("gpt-4o", 1000, 10, 0, 0)
    assert r.capped_calls == 1 and r.estimated_cost_usd == pytest.approx(MAX_COST + normal, rel=1e-12)
    assert "held at $10,000" in render.day(r)
    rows = session_detail(led, book, "1796020000000_huge1").calls
    assert [(c.cost_usd, c.capped) for c in rows] == [(MAX_COST, True), (pytest.approx(normal), False)]
    total = history.report(led, book, periods.day_of(DAY), "model").to_json()["total"]
    assert (total["capped_calls"], total["estimated_cost_usd"]) == (1, pytest.approx(MAX_COST + normal, rel=1e-12))
    (listed,) = sessions(led, book, None, None)
    assert listed.capped_calls == 1
    led.close()


def test_an_absurd_call_is_capped_alone_beside_normal_calls_of_its_model(tmp_path):
    """The day is read in one pass when its calls need no tier band and none is priced alone: a call past the
    cap must still be priced alone, not summed with the normal calls of its route (capped together)."""
    absurd = (2**50, 2**40, 0, 0)
    messages = [call(f"n{i}", NOON + i, model="gpt-4o") for i in range(3)]
    messages.append(call("x", NOON + 9, absurd, "gpt-4o", "openai"))
    led = ledger_with(tmp_path, {"1796020000000_huge2": ("openai", messages)})
    book = PriceBook()
    normal = book.call_cost("gpt-4o", 1000, 10, 0, 0)
    r = day_report(led, book, DAY)
    assert r.capped_calls == 1 and r.estimated_cost_usd == pytest.approx(MAX_COST + 3 * normal, rel=1e-12)
    total = history.report(led, book, periods.day_of(DAY), "model").to_json()["total"]
    assert total["estimated_cost_usd"] == pytest.approx(MAX_COST + 3 * normal, rel=1e-12)
    led.close()


def test_unknown_models_stay_unpriced_with_their_tokens(tmp_path):
    messages = [call("u", NOON, (5_000, 50, 0, 0), "mystery-model-x", "openai-compatible")]
    led = ledger_with(tmp_path, {"1796020000000_unkn1": ("openai-compatible", messages)})
    r = day_report(led, PriceBook(), DAY)
    assert (r.unpriced_calls, r.unpriced_models, r.tokens.input, r.cost_usd) == (1, ["mystery-model-x"], 5_000, 0)
    assert r.to_json()["models"] == [{"name": "mystery-model-x", "cost_usd": None, "calls": 1}]
    led.close()


def test_new_price_data_reprices_old_calls(tmp_path):
    """Estimates are computed when read: a price added in the settings applies to calls already counted."""
    sessions = tmp_path / "cline" / "data" / "sessions"
    make_session(sessions, "1796020000000_later", START, [call("u", NOON, (1_000_000, 0, 0, 0), "acme-9")])
    env = isolated_env(tmp_path, CLINE_DIR=str(tmp_path / "cline"))
    engine = Engine(tmp_path / "settings.toml", tmp_path / "state", env)
    engine.refresh()
    assert engine.day(DAY).unpriced_calls == 1
    (tmp_path / "settings.toml").write_text('[prices."acme-9"]\ninput = 2.0\noutput = 4.0\n')
    engine.reload_if_changed()
    r = engine.day(DAY)
    assert (r.unpriced_calls, r.estimated_cost_usd) == (0, pytest.approx(2.0))
    engine.close()
