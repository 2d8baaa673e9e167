"""The figures: days in the local time zone (DST included), prices and estimates, model names,
the `today --json` contract. Estimates are checked against PriceBook.prices(), never constants."""

from __future__ import annotations

import json
from datetime import date

import pytest
from helpers.corpus import (
    CORPUS,
    TOKEN_FIELDS,
    assistant,
    cline_estimate,
    copy_corpus,
    expected,
    expected_sessions,
    isolated_env,
    make_session,
    ms,
    sessions_of,
    set_tz,  # noqa: F401 (fixture)
)

from trayburn import cli, render, settings
from trayburn.engine import Engine
from trayburn.figures import periods
from trayburn.figures.day import day_report, hourly_costs, session_detail, sessions_report
from trayburn.pricing import PriceBook

REAL = sessions_of(CORPUS)
DAY = date(2026, 11, 30)


@pytest.fixture
def sessions(tmp_path):
    path = tmp_path / "sessions"
    path.mkdir()
    return path


def one_session(sessions, ledger, calls, sid="1796020000000_rprt1", start=None, **fields):
    make_session(sessions, sid, start or "2026-11-29T00:00:00.000Z", calls, **fields)
    ledger.refresh(sessions)


NOON = ms("2026-11-29T12:00:00Z")  # when the hand-made calls below are made, unless they say otherwise


def estimate(model: str, i: int, o: int, cr: int, cw: int, book: PriceBook | None = None, at_ms: int = NOON) -> float:
    """Cline's formula, with the unit prices the PriceBook holds at the call's time (USD per million)."""
    return cline_estimate(book or PriceBook(), model, i, o, cr, cw, at_ms)


# ---- days and time zones --------------------------------------------------------------------------------


def test_a_call_belongs_to_the_local_day_of_its_own_time(ledger, sessions, set_tz):
    one_session(
        sessions,
        ledger,
        [
            assistant("early", ms("2026-11-30T03:00:00Z"), cost=0.25),
            assistant("later", ms("2026-11-30T15:00:00Z"), cost=0.5),
        ],
    )
    set_tz("America/New_York")
    book = PriceBook()
    assert day_report(ledger, book, date(2026, 11, 29)).calls == 1  # 22:00 the evening before
    assert day_report(ledger, book, DAY).cost_usd == 0.5
    set_tz("UTC")  # the time zone changed: same ledger, days recomputed
    assert day_report(ledger, book, DAY).calls == 2
    assert day_report(ledger, book, date(2026, 11, 29)).calls == 0
    set_tz("Asia/Tokyo")
    r = day_report(ledger, book, DAY)
    assert (r.calls, r.timezone) == (1, "Asia/Tokyo")  # 15:00Z is already Dec 1 in Tokyo
    assert day_report(ledger, book, date(2026, 12, 1)).cost_usd == 0.5


@pytest.mark.parametrize(
    "tz, day, inside, outside, hours",
    [
        (
            "America/New_York",
            date(2026, 3, 8),
            ["2026-03-08T05:00:00Z", "2026-03-09T03:59:59Z"],
            ["2026-03-08T04:59:59Z", "2026-03-09T04:00:00Z"],
            23,
        ),  # spring forward at 02:00
        (
            "America/New_York",
            date(2026, 11, 1),
            ["2026-11-01T04:00:00Z", "2026-11-02T04:59:59Z"],
            ["2026-11-01T03:59:59Z", "2026-11-02T05:00:00Z"],
            25,
        ),  # fall back at 02:00
        (
            "America/Santiago",
            date(2026, 9, 6),
            ["2026-09-06T04:00:00Z", "2026-09-07T02:59:59Z"],
            ["2026-09-06T03:59:59Z", "2026-09-07T03:00:00Z"],
            23,
        ),  # midnight itself is skipped: the day starts at 01:00
    ],
    ids=["ny-spring", "ny-fall", "santiago-no-midnight"],
)
def test_dst_days(ledger, sessions, set_tz, tz, day, inside, outside, hours):
    set_tz(tz)
    calls = [assistant(f"in{i}", ms(t), cost=1.0) for i, t in enumerate(inside)]
    calls += [assistant(f"out{i}", ms(t), cost=100.0) for i, t in enumerate(outside)]
    one_session(sessions, ledger, calls, start="2026-01-01T00:00:00.000Z")
    start, end = periods.day_bounds(day)
    assert (end - start) == hours * 3600_000
    r = day_report(ledger, PriceBook(), day)
    assert (r.calls, r.cost_usd) == (2, 2.0)
    hourly = hourly_costs(ledger, PriceBook(), day)
    assert len(hourly) == 24 and sum(hourly) == pytest.approx(2.0)


def test_hours_follow_the_local_clock(ledger, sessions, set_tz):
    set_tz("Asia/Kolkata")  # UTC+05:30
    one_session(
        sessions,
        ledger,
        [
            assistant("a", ms("2026-11-30T03:45:00Z"), cost=1.0),  # 09:15 local
            assistant("b", ms("2026-11-30T04:29:59Z"), cost=2.0),
        ],
    )  # 09:59:59 local
    hourly = hourly_costs(ledger, PriceBook(), DAY)
    assert hourly[9] == 3.0 and sum(hourly) == 3.0


def test_a_session_spanning_midnight_splits_across_days(ledger, sessions, set_tz):
    set_tz("Europe/Paris")
    sid = "1796020000000_midnt"
    one_session(
        sessions,
        ledger,
        [
            assistant("before", ms("2026-11-29T22:30:00Z"), 100, 1, cost=0.1),
            assistant("after", ms("2026-11-29T23:30:00Z"), 200, 2, cost=0.2),
        ],
        sid=sid,
        start="2026-11-29T22:00:00.000Z",
    )  # 23:00 and 00:30 in Paris
    book = PriceBook()
    d1, d2 = day_report(ledger, book, date(2026, 11, 29)), day_report(ledger, book, DAY)
    assert (d1.calls, d1.sessions, d1.tokens.input, d1.cost_usd) == (1, 1, 100, 0.1)
    assert (d2.calls, d2.sessions, d2.tokens.input, d2.cost_usd) == (1, 1, 200, 0.2)
    (s1,) = sessions_report(ledger, book, date(2026, 11, 29), date(2026, 11, 29))
    (s2,) = sessions_report(ledger, book, DAY, DAY)
    assert (s1.id, s1.calls, s2.id, s2.calls) == (sid, 1, sid, 1)
    assert session_detail(ledger, book, sid).summary.calls == 2


# ---- the recorded corpus ----------------------------------------------------------------------------


def independent_estimate() -> tuple[float, int]:
    """Straight from the files: every call without a reported cost, priced one by one on its route at
    its time by the PriceBook (the report groups them; the sums must agree)."""
    book, total, unpriced = PriceBook(), 0.0, 0
    for path in REAL.rglob("*.messages.json"):
        for m in json.loads(path.read_text())["messages"]:
            metrics = m.get("metrics")
            if m.get("role") != "assistant" or not metrics or "cost" in metrics:
                continue
            info = m.get("modelInfo") or {}
            usd = book.call_cost(
                info.get("id"), *(metrics[k] for k in TOKEN_FIELDS), info.get("provider"), at_ms=m["ts"]
            )
            if usd is None:
                unpriced += 1
            else:
                total += usd
    return total, unpriced


def test_corpus_day_equals_expected_plus_estimates(ledger, set_tz):
    set_tz("UTC")
    ledger.refresh(REAL)
    r = day_report(ledger, PriceBook(), DAY)
    totals = expected()["totals"]
    est, unpriced = independent_estimate()
    assert est > 0  # the corpus has unpriced routes (openai-compatible gpt-4o)
    assert (r.calls, r.sessions, r.unpriced_calls) == (totals["calls"], expected()["session_count"], unpriced)
    assert [r.tokens.input, r.tokens.output, r.tokens.cache_read, r.tokens.cache_write] == [
        totals[k] for k in TOKEN_FIELDS
    ]
    assert r.estimated_cost_usd == pytest.approx(est, abs=1e-9)
    assert r.cost_usd == pytest.approx(totals["cost"] + est, abs=1e-9)
    assert sum(m.calls for m in r.models) == totals["calls"]
    assert sum(m.cost_usd for m in r.models) == pytest.approx(r.cost_usd, abs=1e-9)
    assert r.top_model == max(r.models, key=lambda m: m.cost_usd)


def test_corpus_sessions_and_subagents(ledger, set_tz):
    set_tz("UTC")
    ledger.refresh(REAL)
    book = PriceBook()
    later = ms("2026-11-30T12:00:00Z")  # hours after the recording
    items = {s.id: s for s in sessions_report(ledger, book, DAY, DAY, now_ms=later)}
    assert set(items) == set(expected_sessions())
    for sid, want in expected_sessions().items():
        s = items[sid]
        assert s.calls == want["totals"]["calls"] and s.tokens.input == want["totals"]["inputTokens"]
        kinds = sorted(f["agent"] for f in want["message_files"] if f["agent"] != "lead")
        assert sorted(a.kind for a in s.subagents) == kinds
        assert sum(a.calls for a in s.subagents) == sum(
            f["calls"] for f in want["message_files"] if f["agent"] != "lead"
        )
    assert items["1796026882505_9kqtu"].status == "failed"
    assert items["1796026927416_jd244"].state == "stale"  # left "running" by a SIGHUP, silent since
    soon = sessions_report(ledger, book, DAY, DAY, now_ms=ms("2026-11-30T08:23:00Z"))
    assert {s.id: s.state for s in soon}["1796026927416_jd244"] == "running"


def test_session_detail_marks_estimates(ledger):
    ledger.refresh(REAL)
    sid = "1796026740928_n4h5j"  # openai-compatible gpt-4o: no cost reported
    d = session_detail(ledger, PriceBook(), sid)
    assert len(d.calls) == expected_sessions()[sid]["totals"]["calls"]
    assert all(c.estimated for c in d.calls)
    raw = [m for m in json.loads((REAL / sid / f"{sid}.messages.json").read_text())["messages"] if m.get("metrics")]
    for call, m in zip(d.calls, raw, strict=False):
        assert call.cost_usd == pytest.approx(
            estimate("gpt-4o", *(m["metrics"][k] for k in TOKEN_FIELDS), at_ms=m["ts"])
        )
    assert d.summary.estimated_cost_usd == pytest.approx(sum(c.cost_usd for c in d.calls))
    assert d.calls[0].tools == ["read", "shell"]
    priced = session_detail(ledger, PriceBook(), "1796026745477_z1cga")
    assert not any(c.estimated for c in priced.calls)
    assert session_detail(ledger, PriceBook(), "no-such-session") is None


# ---- prices -----------------------------------------------------------------------------------------


def test_estimate_uses_cline_formula_with_pricebook_prices(ledger, sessions):
    calls = [
        ("gpt-4o", 10_000, 500, 4_000, 0),
        ("claude-sonnet-4-5", 20_000, 800, 5_000, 3_000),
        ("deepseek-chat", 3_000, 100, 0, 0),
    ]
    one_session(
        sessions,
        ledger,
        [
            assistant(f"m{i}", ms("2026-11-29T12:00:00Z"), i_, o, cr, cw, model=model)
            for i, (model, i_, o, cr, cw) in enumerate(calls)
        ],
    )
    r = day_report(ledger, PriceBook(), date(2026, 11, 29))
    want = {m: estimate(m, *t) for m, *t in calls}
    assert r.estimated_cost_usd == pytest.approx(sum(want.values()), rel=1e-12)
    assert r.cost_usd == r.estimated_cost_usd and r.unpriced_calls == 0
    book = PriceBook()
    for m in r.models:
        assert m.cost_usd == pytest.approx(want[next(k for k in want if book.display(k) == m.name)], rel=1e-12)


def test_cache_tokens_are_not_charged_twice(ledger, sessions):
    p = PriceBook().prices("gpt-4o")
    assert p.cache_read < p.input
    one_session(sessions, ledger, [assistant("m", ms("2026-11-29T12:00:00Z"), 1_000_000, 0, 1_000_000, 0)])
    r = day_report(ledger, PriceBook(), date(2026, 11, 29))
    assert r.estimated_cost_usd == pytest.approx(p.cache_read)  # all input was cache reads


def test_day_estimate_equals_the_sum_of_its_calls(ledger, sessions):
    """A call whose cache tokens exceed its input (odd data) costs its cache tokens, and does not
    make the other calls' input cheaper."""
    sid = "1796020000000_oddca"
    one_session(
        sessions,
        ledger,
        [
            assistant("odd", ms("2026-11-29T12:00:00Z"), 100, 10, 5_000, 0),
            assistant("normal", ms("2026-11-29T12:01:00Z"), 50_000, 10, 0, 0),
        ],
        sid=sid,
    )
    book = PriceBook()
    day = day_report(ledger, book, date(2026, 11, 29))
    per_call = [c.cost_usd for c in session_detail(ledger, book, sid).calls]
    assert all(c >= 0 for c in per_call)
    assert day.estimated_cost_usd == pytest.approx(sum(per_call), rel=1e-12)


def test_reported_zero_is_zero_not_an_estimate(ledger, sessions):
    one_session(sessions, ledger, [assistant("free", ms("2026-11-29T12:00:00Z"), 10_000, 100, cost=0)])
    r = day_report(ledger, PriceBook(), date(2026, 11, 29))
    assert (r.calls, r.cost_usd, r.estimated_cost_usd, r.unpriced_calls) == (1, 0.0, 0.0, 0)


def test_unpriced_model_is_counted_never_as_zero(ledger, sessions):
    one_session(
        sessions,
        ledger,
        [
            assistant("a", ms("2026-11-29T12:00:00Z"), 1000, 10, model="mystery-model-x"),
            assistant("b", ms("2026-11-29T12:01:00Z"), 2000, 20, model="mystery-model-x"),
            assistant("c", ms("2026-11-29T12:02:00Z"), 100, 1, model="gpt-4o", cost=0.5),
            assistant("d", ms("2026-11-29T12:03:00Z"), 100, 1, model="other-mystery", cost=0.25),  # reported: priced
        ],
    )
    r = day_report(ledger, PriceBook(), date(2026, 11, 29))
    assert (r.calls, r.unpriced_calls, r.cost_usd, r.tokens.input) == (4, 2, 0.75, 3200)
    models = {m["name"]: m for m in r.to_json()["models"]}
    assert models["mystery-model-x"] == {"name": "mystery-model-x", "cost_usd": None, "calls": 2}
    assert models["other-mystery"]["cost_usd"] == 0.25
    text = render.day(r)
    assert "2 calls have no known price" in text
    (row,) = [line for line in text.splitlines() if line.startswith("mystery-model-x")]
    assert "unpriced" in row and "$0" not in row


def test_unpriced_only_day_has_no_zero_top_model(ledger, sessions):
    one_session(sessions, ledger, [assistant("a", ms("2026-11-29T12:00:00Z"), 1000, 10, model="mystery-model-x")])
    out = day_report(ledger, PriceBook(), date(2026, 11, 29)).to_json()
    assert out["unpriced_calls"] == 1 and out["top_model"]["cost_usd"] is None


def test_one_model_under_three_names(ledger, sessions):
    one_session(
        sessions,
        ledger,
        [
            assistant(f"m{i}", ms("2026-11-29T12:00:00Z"), 1000, 10, model=name)
            for i, name in enumerate(["z-ai/glm-5.2", "cline-pass/glm-5.2", "GLM-5.2"])
        ],
    )
    r = day_report(ledger, PriceBook(), date(2026, 11, 29))
    assert [(m.name, m.calls) for m in r.models] == [("GLM-5.2", 3)]
    book = PriceBook()
    assert len({book.key(n) for n in ["z-ai/glm-5.2", "cline-pass/glm-5.2", "GLM-5.2"]}) == 1
    if book.prices("glm-5.2") is not None:
        assert r.estimated_cost_usd == pytest.approx(3 * estimate("GLM-5.2", 1000, 10, 0, 0))


def test_settings_aliases_and_prices_apply(tmp_path, set_tz):
    set_tz("UTC")
    (tmp_path / "settings.toml").write_text(
        '[aliases]\n"my-proxy" = "gpt-4o"\n"gpt-4o-mini" = "acme-1"\n'
        '[prices."acme-1"]\ninput = 1.0\noutput = 2.0\n'
        '[prices."half-known"]\noutput = 3.0\n'
    )
    sessions = tmp_path / "cline" / "data" / "sessions"
    sessions.mkdir(parents=True)
    t = ms("2026-11-30T12:00:00Z")
    make_session(
        sessions,
        "1796020000000_setts",
        "2026-11-30T11:00:00.000Z",
        [
            assistant("p1", t, 10_000, 100, 2_000, 0, model="my-proxy"),
            assistant("p2", t, 10_000, 100, 2_000, 0, model="openai/gpt-4o"),
            assistant("a1", t, 1_000_000, 1_000_000, model="acme-1"),
            assistant("a2", t, 1_000_000, 0, model="gpt-4o-mini"),  # known to genai-prices, but aliased
            assistant("h1", t, 1_000_000, 0, model="half-known"),  # a price without input: unpriced, not $0 input
        ],
    )
    engine = Engine(
        tmp_path / "settings.toml", tmp_path / "state", isolated_env(tmp_path, CLINE_DIR=str(tmp_path / "cline"))
    )
    engine.refresh()
    r = engine.day(DAY)
    rows = {m.name: m for m in r.models}
    assert rows[PriceBook().display("gpt-4o")].calls == 2
    assert rows[PriceBook().display("gpt-4o")].cost_usd == pytest.approx(
        2 * estimate("gpt-4o", 10_000, 100, 2_000, 0, at_ms=t)
    )
    assert rows["acme-1"].calls == 2 and rows["acme-1"].cost_usd == pytest.approx(1.0 + 2.0 + 1.0)
    assert r.unpriced_calls == 1 and rows["half-known"].unpriced_calls == 1
    shipped = PriceBook().prices("gpt-4o")
    settings.update(engine.config_path, "prices.gpt-4o.input", "100")  # the user's own rate wins, at the next read
    engine.reload_if_changed()
    mine = engine.book.prices("gpt-4o")
    assert (mine.input, mine.output, mine.cache_read) == (100.0, shipped.output, shipped.cache_read)
    after = {m.name: m for m in engine.day(DAY).models}[PriceBook().display("gpt-4o")]
    assert after.cost_usd == pytest.approx(2 * estimate("gpt-4o", 10_000, 100, 2_000, 0, engine.book, t))
    assert after.cost_usd > rows[PriceBook().display("gpt-4o")].cost_usd
    engine.close()


# ---- `today --json` ---------------------------------------------------------------------------------


def test_today_json_contract(tmp_path, monkeypatch, capsys, set_tz):
    set_tz("UTC")
    for k, v in isolated_env(tmp_path, CLINE_DIR=str(copy_corpus(tmp_path / "cline"))).items():
        monkeypatch.setenv(k, v)
    assert cli.main(["today", "--date", "2026-11-30", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {
        "date",
        "timezone",
        "cost_usd",
        "estimated_cost_usd",
        "calls",
        "sessions",
        "unpriced_calls",
        "tokens",
        "top_model",
        "models",
        "plan_calls",
        "plan_api_value_usd",
        "capped_calls",
        "unpriced_models",
        "machines",  # issue 13: the day by machine; this one alone while nothing is shared
        "complete",  # issue 19: false while history is still being read
        "sessions_read",  # [read, all] sessions while incomplete
        "burn_usd_per_hour",  # issue 31: today's pace (None on another day)
        "projected_day_usd",  # issue 31: today at that pace by midnight (None on another day, or too early)
        "free_calls",  # issue 27: calls of a free model ($0, never priced)
        "plans",  # issue 27: the plans that covered calls, by name
    }
    assert out["burn_usd_per_hour"] is None and out["projected_day_usd"] is None  # 2026-11-30 is not today
    assert [(m["this"], m["id"], m["calls"]) for m in out["machines"]] == [(True, None, out["calls"])]
    assert set(out["tokens"]) == {"input", "output", "cache_read", "cache_write"}
    assert set(out["top_model"]) == {"name", "cost_usd", "calls"}
    assert all(set(m) == {"name", "cost_usd", "calls"} for m in out["models"])
    totals = expected()["totals"]
    est, _ = independent_estimate()
    assert (out["date"], out["timezone"], out["calls"]) == ("2026-11-30", "UTC", totals["calls"])
    assert out["tokens"] == dict(
        zip(("input", "output", "cache_read", "cache_write"), (totals[k] for k in TOKEN_FIELDS), strict=False)
    )
    assert out["cost_usd"] == pytest.approx(totals["cost"] + est, abs=1e-9)
    assert out["estimated_cost_usd"] == pytest.approx(est, abs=1e-9)
    assert out["top_model"] == out["models"][0]
    assert cli.main(["today", "--date", "2026-11-29", "--json"]) == 0
    empty = json.loads(capsys.readouterr().out)
    assert (empty["calls"], empty["cost_usd"], empty["top_model"], empty["models"]) == (0, 0.0, None, [])
