"""Money as the person pays it: a call on a plan route (ClinePass, a ChatGPT subscription, Claude Code) or of a
free model (`cline-free/…`, `…:free` on Cline's routes) is $0 of spend whatever its `metrics.cost` holds, valued
beside the spend at list price; budgets count spend only. Sessions shaped as the Cline CLI writes them: no cost
on plan and free calls (as 3.0.57 to 3.0.65 write them), a positive one there (the CLI's storage doc's example,
older builds), 0 (the editor extension). Today, the menu, the window, `session`, `report` and the export agree.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from helpers.corpus import age_all, assistant, iso, isolated_env, make_session
from helpers.menus import Spawned, a_minute_ago_ms, find, texts
from helpers.prices import list_cost

from trayburn import billing, cli, settings
from trayburn.engine import Engine
from trayburn.figures import periods
from trayburn.figures.day import day_report
from trayburn.pricing import PriceBook
from trayburn.tray import host
from trayburn.tray.app import TrayApp
from trayburn.window import detail_rows, models
from trayburn.words import plan_text

pystray = host.load_pystray("dummy")
CAPS = host.capabilities("dummy")
PAID_COSTS = (0.0123, 0.0456)  # what the two paid calls' files say: today's spend is exactly their sum
STORAGE_DOC_COST = 0.002108502  # the Cline CLI storage doc's example: a ClinePass call with a cost
PASS = (40_000, 1_200, 30_000, 0)
DOC = (12_000, 300, 0, 0)
ZERO = (8_000, 200, 0, 0)
CODEX = (20_000, 900, 4_000, 0)


def routed(mid: str, ts: int, model: str, route: str, usage=(1_000, 10, 0, 0), **kw) -> dict:
    """An assistant message as the CLI writes it: `modelInfo {id, provider}`, `metrics` with `cost` only if given."""
    m = assistant(mid, ts, *usage, model=model, **kw)
    m["modelInfo"]["provider"] = route
    return m


def a_day(cline: Path, t: int) -> None:
    """Three sessions of today: ClinePass; Cline's own route with free models and paid ones; subscriptions."""
    sessions = cline / "data" / "sessions"
    plan = [
        routed("p1", t, "z-ai/glm-5.2", "cline-pass", PASS),  # 3.0.57-3.0.65: no cost on a plan call
        routed("p2", t + 1, "z-ai/glm-5.2", "cline-pass", DOC, cost=STORAGE_DOC_COST),  # the storage doc's example
        routed("p3", t + 2, "z-ai/glm-5.2", "cline-pass", ZERO, cost=0),
    ]
    make_session(sessions, f"{t}_pass1", iso(t), plan, provider="cline-pass", model="z-ai/glm-5.2")
    own = [
        routed("f1", t + 3, "cline-free/glm-5.2", "cline", (30_000, 500, 0, 0)),
        routed("f2", t + 4, "cline-free/glm-5.2", "cline", (30_000, 500, 0, 0), cost=0.7),  # 3.0.55 wrote one
        routed("f3", t + 5, "arcee-ai/trinity-large-preview:free", "cline", (9_000, 90, 0, 0)),
        routed("b1", t + 6, "anthropic/claude-sonnet-4.5", "cline", (3_000, 80, 0, 0), cost=PAID_COSTS[0]),
        routed("b2", t + 7, "z-ai/glm-5.2", "cline", (20_000, 400, 0, 0), cost=PAID_COSTS[1]),
    ]
    make_session(sessions, f"{t}_own01", iso(t), own, provider="cline", source="vscode")
    subscriptions = [
        routed("c1", t + 8, "gpt-5", "openai-codex", CODEX),
        routed("c2", t + 9, "sonnet", "claude-code", (5_000, 60, 0, 0), cost=0.05),  # an older build's cost
    ]
    make_session(sessions, f"{t}_subs1", iso(t), subscriptions, provider="openai-codex", source="desktop")
    age_all(sessions)


def api_value(t: int) -> float:
    """The plan calls' list value from genai-prices itself; `sonnet` has no list price: the cost written."""
    glm = sum(list_cost("zai", "glm-5.2", u, t) for u in (PASS, DOC, ZERO))
    return glm + list_cost("openai", "gpt-5", CODEX, t) + 0.05


@pytest.fixture
def day(tmp_path, monkeypatch):
    t = a_minute_ago_ms()
    a_day(tmp_path / "cline", t)
    env = isolated_env(tmp_path, CLINE_DIR=str(tmp_path / "cline"))
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return t, env


def run(capsys, *argv: str) -> str:
    assert cli.main(list(argv)) == 0
    return capsys.readouterr().out


def test_todays_spend_is_the_paid_calls_alone(day, capsys):
    t, _ = day
    out = json.loads(run(capsys, "today", "--json"))
    assert out["cost_usd"] == pytest.approx(sum(PAID_COSTS), abs=1e-12) and out["estimated_cost_usd"] == 0
    assert (out["calls"], out["plan_calls"], out["free_calls"], out["unpriced_calls"]) == (10, 5, 3, 0)
    assert out["plan_api_value_usd"] == pytest.approx(api_value(t), rel=1e-6)
    assert out["plans"] == ["ChatGPT subscription", "Claude Code", "ClinePass"]
    value = f"${out['plan_api_value_usd']:,.2f}"
    text = run(capsys, "today")
    line = f"ChatGPT subscription, Claude Code, ClinePass: 5 calls, {value} of API value included"
    assert f"{line} · free models: 3 calls (not in the total)" in text


def test_the_storage_docs_example_call_is_a_plans_and_costs_nothing(tmp_path):
    """`{"modelInfo": {"id": "z-ai/glm-5.2", "provider": "cline-pass"}, "cost": 0.002108502}`: plan, $0 spent."""
    t = a_minute_ago_ms()
    sessions = tmp_path / "sessions"
    make_session(
        sessions, f"{t}_doc01", iso(t), [routed("d", t, "z-ai/glm-5.2", "cline-pass", DOC, cost=STORAGE_DOC_COST)]
    )
    age_all(sessions)
    config = tmp_path / "settings.toml"
    config.write_text(f'sessions_dir = "{sessions}"\n')
    e = Engine(config, tmp_path / "state")
    e.refresh()
    d = e.day()
    assert (d.cost_usd, d.plan_calls, d.plans) == (0.0, 1, ["ClinePass"])
    assert d.plan_api_value_usd == pytest.approx(list_cost("zai", "glm-5.2", DOC, t), rel=1e-9)
    (call,) = e.session(f"{t}_doc01").calls
    assert (call.cost_usd, call.billing, call.estimated) == (0.0, "plan", False)
    e.close()


def test_each_call_is_plan_free_or_paid_in_the_session_and_the_export(day, capsys):
    t, _ = day
    s = json.loads(run(capsys, "session", f"{t}_own01", "--json"))
    assert [(c["billing"], c["cost_usd"]) for c in s["calls_detail"]] == [
        ("free", 0.0),
        ("free", 0.0),
        ("free", 0.0),
        ("paid", PAID_COSTS[0]),
        ("paid", PAID_COSTS[1]),
    ]
    assert all(c["plan_api_value_usd"] is None for c in s["calls_detail"]), "a free model's value is free, no price"
    assert (s["free_calls"], s["cost_usd"]) == (3, pytest.approx(sum(PAID_COSTS), abs=1e-12))
    text = run(capsys, "session", f"{t}_own01")
    assert [line.endswith(" free") for line in text.splitlines()].count(True) == 3 and "$0.00" not in text
    day = periods.now_date().isoformat()
    rows = json.loads(run(capsys, "export", "--since", day, "--until", day, "--format", "json"))
    by = {r["billing"]: [x for x in rows if x["billing"] == r["billing"]] for r in rows}
    assert {k: len(v) for k, v in by.items()} == {"plan": 5, "free": 3, "paid": 2}
    assert sum(r["cost_usd"] for r in rows) == pytest.approx(sum(PAID_COSTS), abs=1e-12)
    assert all(r["cost_usd"] == 0 and not r["estimated"] for r in by["plan"] + by["free"])
    assert sum(r["api_value_usd"] for r in by["plan"]) == pytest.approx(api_value(t), rel=1e-6)
    assert {r["app"] for r in rows} == {"Cline CLI", "Cline for VS Code", "Cline Desktop"}
    listed = run(capsys, "sessions", "--since", day, "--until", day)
    assert [line.split()[-2] for line in listed.splitlines() if line.endswith("_subs1")] == ["plan"]
    report = run(capsys, "report", "--since", day, "--until", day, "--by", "model")
    cells = {line.split()[0]: line.split()[-1] for line in report.splitlines()[4:]}
    assert (cells["GPT-5"], cells["sonnet"], cells["trinity-large-preview:free"]) == ("plan", "plan", "free")
    table = list(csv.DictReader(io.StringIO(run(capsys, "export", "--since", day, "--until", day))))
    assert [(r["billing"], r["app"]) for r in table] == [(r["billing"], r["app"]) for r in rows]
    assert table[0]["api_value_usd"] == repr(rows[0]["api_value_usd"])


def test_budgets_count_spend_only(day, tmp_path):
    """A daily budget at 90 % of the paid calls: the plan's API value (several times that) is not in it."""
    _, env = day
    config = Path(env["TRAYBURN_CONFIG"])
    config.write_text(f"daily_budget = {sum(PAID_COSTS) / 0.9}\n")
    app = TrayApp(Engine(config, Path(env["TRAYBURN_STATE_DIR"]), env=env), pystray, CAPS, spawn=Spawned())
    app.tick()
    e, money = app.engine, app.engine.money()
    d = e.day()
    assert d.plan_api_value_usd > sum(PAID_COSTS)
    assert [n[0] for n in app.icon.notified] == [
        f"{money.text(d.cost_usd)} today: reached 80 % of your {money.text(sum(PAID_COSTS) / 0.9)} daily budget (90 %)"
    ]
    menu = app.icon.menu
    assert str(find(menu, "Today: ").text).startswith(f"Today: {money.text(d.cost_usd)} of ")
    assert plan_text(d, money.text) in texts(menu)
    window = models.day_cards(d, list(e.sessions(periods.now_date(), periods.now_date())), money, today=True)
    cost_card = window[0]
    assert cost_card[1] == money.cents(d.cost_usd) and plan_text(d, money.cents) in cost_card[2].splitlines()
    listed = {s.id[-5:]: s for s in e.sessions(None, None)}
    assert [r.values[-1] for r in models.session_rows([listed["subs1"], listed["own01"]], money=money)] == [
        "plan",
        money.cents(sum(PAID_COSTS)),
    ]
    detail = e.session(listed["subs1"].id)
    assert [r.values[8] for r in detail_rows.call_rows(detail, money)] == ["plan", "plan"]
    assert plan_text(detail.summary, money.cents) in detail_rows.session_cards(detail, money)[0][2].splitlines()
    e.close()


def test_a_plan_we_do_not_know_and_a_plan_a_team_pays_per_call(day, tmp_path, capsys):
    t, env = day
    make_session(
        Path(env["CLINE_DIR"]) / "data" / "sessions",
        f"{t}_gate1",
        iso(t),
        [routed("g1", t + 20, "gpt-4o", "acme-gateway", (10_000, 100, 0, 0), cost=0.3)],
        provider="acme-gateway",
    )
    run(capsys, "config", "set", "billing.acme-gateway", "plan")
    run(capsys, "config", "set", "billing.openai-codex", "paid")
    assert cli.main(["config", "set", "billing.x", "maybe"]) != 0
    assert "billing.x must be plan or paid" in capsys.readouterr().err
    out = json.loads(run(capsys, "today", "--json"))
    codex = list_cost("openai", "gpt-5", CODEX, t)  # now paid, no cost written: estimated at list price
    assert out["cost_usd"] == pytest.approx(sum(PAID_COSTS) + codex, rel=1e-9)
    assert out["estimated_cost_usd"] == pytest.approx(codex, rel=1e-9)
    gateway = list_cost("openai", "gpt-4o", (10_000, 100, 0, 0), t)
    assert out["plan_api_value_usd"] == pytest.approx(api_value(t) - codex + gateway, rel=1e-6)
    assert out["plans"] == ["Claude Code", "ClinePass", "acme-gateway"]
    shown = run(capsys, "prices", "gpt-5", "--route", "openai-codex")
    assert "a call is paid" in shown


def test_prices_says_how_a_call_on_a_route_is_billed(day, capsys):
    items = json.loads(
        run(capsys, "prices", "z-ai/glm-5.2", "cline-free/glm-5.2", "gpt-5", "--route", "cline-pass", "--json")
    )
    assert [(i["billing"], i["plan"]) for i in items] == [("plan", "ClinePass"), ("free", None), ("plan", "ClinePass")]
    text = run(capsys, "prices", "cline-free/glm-5.2", "--route", "cline")
    assert "a call is a free model: $0 of spend, never priced" in text and "USD per million" not in text
    text = run(capsys, "prices", "z-ai/glm-5.2", "--route", "cline-pass")
    assert "covered by ClinePass: $0 of spend whatever cost Cline wrote" in text and "USD per million" in text
    assert "a call is paid" in run(capsys, "prices", "z-ai/glm-5.2", "--provider", "cline")


@pytest.mark.parametrize(
    ("provider", "model", "kind"),
    [
        ("cline-pass", "z-ai/glm-5.2", billing.PLAN),
        ("Cline-Pass ", "cline-pass/glm-5.2", billing.PLAN),
        ("openai-codex", "gpt-5.4", billing.PLAN),
        ("openai-codex-cli", "gpt-5.6-sol", billing.PLAN),
        ("claude-code", "sonnet", billing.PLAN),
        ("cline", "cline-free/glm-5.2", billing.FREE),
        ("cline-pass", "cline-free/glm-5.2", billing.FREE),  # a free model is free even on a plan
        ("openrouter", "cline-free/glm-5.2", billing.FREE),
        ("cline", "arcee-ai/trinity-large-preview:free", billing.FREE),
        ("cline-pass", "x/y:FREE", billing.FREE),
        ("openrouter", "deepseek/deepseek-chat-v3.1:free", billing.PAID),  # OpenRouter prices its own
        ("cline", "z-ai/glm-5.2", billing.PAID),
        ("anthropic", "claude-sonnet-4-5", billing.PAID),
        (None, "free-model", billing.PAID),
        ("unknown", "cline-pass/glm-5.2", billing.PAID),  # the id's route part names no route
    ],
)
def test_the_one_rule_every_source_asks(provider, model, kind):
    """`billing.kind(route, model id)`: what the CLI, the editor tasks and Kilo 7 sources ask."""
    assert billing.kind(provider, model) == kind
    assert PriceBook().billed(model, provider) == kind


def test_the_settings_change_the_rule_for_the_figures_only(tmp_path):
    book = PriceBook(billing={"Acme-Gateway": "plan", "cline-pass": "paid"})
    assert book.billed("gpt-4o", "acme-gateway") == billing.PLAN and book.billing.name("acme-gateway") == "Acme-Gateway"
    assert book.billed("z-ai/glm-5.2", "cline-pass") == billing.PAID
    assert book.billed("cline-free/glm-5.2", "cline-pass") == billing.FREE
    assert billing.kind("cline-pass", "z-ai/glm-5.2") == billing.PLAN, "the shipped rule is unchanged"
    path = tmp_path / "settings.toml"
    path.write_text('[billing]\n"acme" = "plan"\n"x" = "sometimes"\n')
    loaded = settings.load(path)
    assert loaded.settings.billing == {} and any('"x" must be "plan" or "paid"' in w for w in loaded.warnings)
    settings.save(path, loaded.settings)
    assert "sometimes" in path.read_text(), "a bad value is kept on save"


def test_an_editor_tasks_calls_follow_the_same_rule(tmp_path):
    """The Cline extension's tasks (before 4.0): a subscription's 0, a free model's 0 or positive cost, a paid call."""
    from helpers.taskfolders import TaskWriter, request, say

    from trayburn.ledger import Ledger
    from trayburn.sources.editor_tasks.places import BY_NAME, Place
    from trayburn.sources.editor_tasks.source import TaskSource

    t = a_minute_ago_ms()
    w = TaskWriter(tmp_path / "gs", "cline")
    ui = [
        say(t, "task", "go"),
        request(t + 1, 500, 20, 0, 0, 0, ("gpt-5", "openai-codex")),  # the subscription's 0
        request(t + 2, 4_000, 90, 0, 0, 0, ("cline-free/glm-5.2", "cline")),  # a free model's 0: not "no price"
        request(t + 3, 4_000, 90, 0, 0, 0.4, ("arcee-ai/trinity-large-preview:free", "cline")),
        request(t + 4, 1_000, 30, 0, 0, 0.02, ("anthropic/claude-sonnet-4.5", "cline")),
    ]
    w.write(str(t), ui)
    led = Ledger(tmp_path / "state" / "ledger.db")
    led.refresh(TaskSource(BY_NAME["cline"], [Place("cline", w.root, "test")]))
    stored = led.query("SELECT model, cost FROM calls ORDER BY ts_ms")  # a paid call's 0 would be None: estimated
    assert stored[:2] == [("gpt-5", 0.0), ("cline-free/glm-5.2", 0.0)]
    day = day_report(led, PriceBook(), periods.now_date())
    assert (day.cost_usd, day.plan_calls, day.free_calls, day.plans) == (0.02, 1, 2, ["ChatGPT subscription"])
    assert day.plan_api_value_usd == pytest.approx(list_cost("openai", "gpt-5", (500, 20, 0, 0), t), rel=1e-9)
    led.close()
