"""What a glance keeps between two (`figures.glance.Basis`): after each change made the way the apps make them (a
call appended in place, a call of yesterday, a session folder removed, another process's refresh, midnight), the
glance built from the one before and what the ledger says changed (`Engine.changes`) is the glance read afresh,
figure by figure and line by line, and both are the sums of the calls the test wrote. The engine, the ledger and
the files are real."""

from __future__ import annotations

import dataclasses
import shutil
import time
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest
from helpers.corpus import age_all, assistant, dumps, iso, make_session, manifest, messages_doc, user, write_in_place
from helpers.menus import Spawned

from trayburn.engine import Engine
from trayburn.figures import burn, glance, periods
from trayburn.figures.glance import Glance
from trayburn.ledger.changes import NOTHING
from trayburn.tray import host
from trayburn.tray.app import TrayApp
from trayburn.tray.view import build_view

pystray = host.load_pystray("dummy")
CAPS = host.capabilities("dummy")
CLOCK_FIELDS = {"built_ms", "stale_at_ms", "at_ms"}  # when each was made: two glances differ by the clock alone


@pytest.fixture
def env(tmp_path, monkeypatch):
    for var in ("CLINE_DIR", "CLINE_DATA_DIR", "CLINE_SESSION_DATA_DIR", "TRAYBURN_CONFIG", "TRAYBURN_STATE_DIR"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path


def now_ms() -> int:
    return int(time.time() * 1000)


def noon(day: date) -> int:
    return int(datetime(day.year, day.month, day.day, 12).timestamp() * 1000)


class Day:
    """Sessions written as the Cline CLI writes them, and every call's (epoch ms, USD, project) as written."""

    def __init__(self, root: Path):
        self.sessions = root / "sessions"
        self.calls: dict[str, list[tuple[int, float]]] = {}  # by session id
        self.started: dict[str, int] = {}

    def session(self, name: str, started_ms: int, costs: list[tuple[int, float]], **fields) -> str:
        sid = f"{started_ms}_{name}"
        self.started[sid], self.calls[sid] = started_ms, list(costs)
        make_session(self.sessions, sid, iso(started_ms), self._messages(sid), **fields)
        return sid

    def _messages(self, sid: str) -> list[dict]:
        msgs = [user(f"{sid}-u", self.started[sid])]  # (a call is known by its message's id: unique, as the API's)
        return msgs + [assistant(f"{sid}-m{i}", ts, cost=usd) for i, (ts, usd) in enumerate(self.calls[sid])]

    def add(self, sid: str, ts: int, usd: float) -> None:
        """One more call, the messages file rewritten in place (as the CLI does after each call)."""
        self.calls[sid].append((ts, usd))
        path = self.sessions / sid / f"{sid}.messages.json"
        write_in_place(path, dumps(messages_doc(sid, self._messages(sid))))

    def remove(self, sid: str) -> None:
        shutil.rmtree(self.sessions / sid)

    def spent(self, start_ms: int, end_ms: int, sids: list[str] | None = None) -> float:
        return sum(
            usd
            for s, cs in self.calls.items()
            if sids is None or s in sids
            for ts, usd in cs
            if start_ms <= ts < end_ms
        )


def bounds() -> tuple[date, int, int, int, int]:
    """Today, its midnight and the next, this week's and this month's first midnight."""
    today = periods.now_date()
    start, end = periods.day_bounds(today)
    week = periods.local_midnight_ms(today - timedelta(days=today.weekday()))
    return today, start, end, week, periods.local_midnight_ms(today.replace(day=1))


def a_busy_day(env: Path, **settings: str) -> tuple[Day, Path, dict[str, str]]:
    """Two sessions of today (one running), one of yesterday and one of the 1st of the month (when those are before
    today), each of its own project; the settings' project budgets name two of them."""
    today, start, _, _, _ = bounds()
    day, now = Day(env), now_ms()
    early = start + min(60_000, (now - start) // 3)  # (of today, whatever the hour)
    run = [(now - 39 * 60_000, 0.25), (now - 20 * 60_000, 0.5)]
    sids = {
        "run": day.session("run01", now - 40 * 60_000, run, status="running"),
        "done": day.session("done1", early, [(early + min(30_000, (now - early) // 2), 1.25)]),
    }
    yesterday, first = today - timedelta(days=1), today.replace(day=1)
    sids["yday"] = day.session("yday1", noon(yesterday) - 60_000, [(noon(yesterday), 2.0)])
    if first < today:
        sids["first"] = day.session("first", noon(first) - 60_000, [(noon(first), 4.0)])
    age_all(env / "sessions")  # as Cline left them (a refresh then trusts their checkpoints at once)
    budgets = "\n".join(
        f'[project_budgets."{sid}"]\nmonthly = 100.0\ndaily = 10.0' for sid in (sids["run"], sids["yday"])
    )
    extra = "".join(f"{k} = {v}\n" for k, v in settings.items())
    config = env / "settings.toml"
    config.write_text(f'sessions_dir = "{day.sessions}"\n{extra}{budgets}\n')
    return day, config, sids


def started(config: Path, env: Path) -> tuple[Engine, Glance]:
    """An engine whose ledger holds the files, the ledger's first look taken, and its first glance."""
    engine = Engine(config, env / "state")
    engine.refresh()
    engine.changes()
    return engine, engine.glance(engine.health(), changes=None)


def fresh_and_kept(engine: Engine, since: Glance) -> tuple[Glance, Glance, object]:
    """The glance from `since` and what the ledger says changed since it, and one read afresh, in the same minute
    (the pace is worked out as of a minute: a pair made across a minute's turn is made again)."""
    news = engine.changes()
    health = engine.health()
    while True:
        kept = engine.glance(health, since=since, changes=news)
        fresh = engine.glance(health, changes=None)
        if kept.day.burn.at_ms == fresh.day.burn.at_ms:
            return kept, fresh, news


def assert_same(kept: object, fresh: object, path: str = "glance") -> None:
    """Figure by figure (amounts to a nano-dollar: the same sums, added in another order), the clock's aside."""
    if dataclasses.is_dataclass(kept) and not isinstance(kept, type):
        for f in dataclasses.fields(kept):
            if f.compare and f.name not in CLOCK_FIELDS:
                assert_same(getattr(kept, f.name), getattr(fresh, f.name), f"{path}.{f.name}")
    elif isinstance(kept, list | tuple) and not hasattr(kept, "_fields"):
        assert len(kept) == len(fresh), path  # type: ignore[arg-type]
        for i, (a, b) in enumerate(zip(kept, fresh, strict=True)):  # type: ignore[call-overload]
            assert_same(a, b, f"{path}[{i}]")
    elif isinstance(kept, float):
        assert kept == pytest.approx(fresh, abs=1e-9), path
    else:
        assert kept == fresh, path


def assert_as_read_afresh(engine: Engine, kept: Glance, fresh: Glance) -> None:
    """Kept as read afresh, and as the command line's figures (read by their own queries) say them."""
    assert_same(kept, fresh)
    assert_same(kept.day.report, engine.day())
    assert_same((kept.week, kept.month), (engine.period(), engine.period(month=True)))
    assert_same(list(kept.by_source), engine.spend_by_source())
    health = engine.health()
    assert build_view(kept, engine.settings, health) == build_view(fresh, engine.settings, health)


def test_a_call_of_today_reads_again_its_session_alone_and_every_figure_is_as_read_afresh(env):
    day, config, sids = a_busy_day(env, session_alert_usd="0.5")
    engine = Engine(config, env / "state")
    engine.refresh()
    assert engine.changes() is None  # the first look: nothing was tracked before it
    first = engine.glance(engine.health(), changes=None)
    today, start, end, week, month = bounds()
    day.add(sids["run"], now_ms(), 0.125)
    engine.refresh()
    kept, fresh, news = fresh_and_kept(engine, first)
    assert news.sessions == {sids["run"]} and news.earliest_ms >= start  # (a call of today: what was kept stands)
    assert kept.basis.week_before is first.basis.week_before and kept.basis.month_before is first.basis.month_before
    assert_as_read_afresh(engine, kept, fresh)
    assert kept.day.report.cost_usd == pytest.approx(day.spent(start, end)) != first.day.report.cost_usd
    assert kept.week.cost_usd == pytest.approx(day.spent(week, end))
    assert kept.month.cost_usd == pytest.approx(day.spent(month, end))
    run = [sids["run"]]
    running = next(s for s in kept.day.sessions if s.id == sids["run"])
    assert running.running and running.cost_usd == pytest.approx(day.spent(start, end, run))
    assert running.calls == sum(start <= ts < end for ts, _ in day.calls[sids["run"]])
    assert {r.id: r.spend_usd for r in kept.runaways}[sids["run"]] == pytest.approx(
        0.875
    )  # its whole spend, read again
    project = {(b.project, b.which): b.spent_usd for b in kept.budgets}
    assert project[sids["run"], "daily"] == pytest.approx(day.spent(start, end, run))
    assert project[sids["run"], "monthly"] == pytest.approx(day.spent(month, end, run))
    assert project[sids["yday"], "monthly"] == pytest.approx(day.spent(month, end, [sids["yday"]]))


def test_a_call_before_today_in_the_week_or_the_month_reads_everything_again(env):
    """A session of yesterday written again with one more call of yesterday: the week's, the month's and the
    project's spend before today were kept, and are read again (on a Monday the week has no day before today, on
    the 1st the month: the call then lands only where it belongs)."""
    day, config, sids = a_busy_day(env)
    engine, first = started(config, env)
    today, start, end, week, month = bounds()
    yesterday = noon(today - timedelta(days=1)) + 60_000
    day.add(sids["yday"], yesterday, 8.0)
    engine.refresh()
    kept, fresh, news = fresh_and_kept(engine, first)
    assert news.sessions == {sids["yday"]} and news.earliest_ms < start
    assert_as_read_afresh(engine, kept, fresh)
    assert (
        kept.week.cost_usd
        == pytest.approx(day.spent(week, end))
        == pytest.approx(first.week.cost_usd + 8.0 * (yesterday >= week))
    )
    assert kept.month.cost_usd == pytest.approx(day.spent(month, end))
    assert kept.day.report.cost_usd == pytest.approx(first.day.report.cost_usd)
    spent = {(b.project, b.which): b.spent_usd for b in kept.budgets}
    assert spent[sids["yday"], "monthly"] == pytest.approx(day.spent(month, end, [sids["yday"]]))


def test_yesterday_shown_while_today_has_no_call_follows_a_call_of_yesterday(env):
    today = periods.now_date()
    day = Day(env)
    yesterday = today - timedelta(days=1)
    sid = day.session("yday1", noon(yesterday) - 60_000, [(noon(yesterday), 2.0)])
    age_all(env / "sessions")
    config = env / "settings.toml"
    config.write_text(f'sessions_dir = "{day.sessions}"\n')
    engine, first = started(config, env)
    assert first.yesterday is not None and first.yesterday.cost_usd == pytest.approx(2.0)
    day.add(sid, noon(yesterday) + 60_000, 0.5)
    engine.refresh()
    kept, fresh, _ = fresh_and_kept(engine, first)
    assert_as_read_afresh(engine, kept, fresh)
    assert kept.yesterday is not None and kept.yesterday.cost_usd == pytest.approx(2.5)
    assert build_view(kept, engine.settings, engine.health()).yesterday == "Yesterday: $2.50"


def test_a_session_folder_removed_keeps_its_calls_and_is_shown_removed(env):
    day, config, sids = a_busy_day(env)
    engine, first = started(config, env)
    day.remove(sids["done"])
    engine.refresh()
    kept, fresh, news = fresh_and_kept(engine, first)
    assert sids["done"] in news.sessions and news.earliest_ms is None  # (a removed session's calls still count)
    assert_as_read_afresh(engine, kept, fresh)
    assert next(s for s in kept.day.sessions if s.id == sids["done"]).removed
    assert kept.day.report.cost_usd == pytest.approx(first.day.report.cost_usd)


def test_a_session_started_today_is_listed_before_its_first_call_and_its_call_then_counts(env):
    day, config, _ = a_busy_day(env)
    engine, first = started(config, env)
    now = now_ms()
    new = f"{now - 1000}_new01"
    make_session(day.sessions, new, iso(now - 1000), None, status="running")  # its manifest alone, so far
    engine.refresh()
    kept, fresh, news = fresh_and_kept(engine, first)
    assert news.sessions == {new} and news.earliest_ms is None
    assert_as_read_afresh(engine, kept, fresh)
    assert kept.day.sessions[0].id == new and kept.day.sessions[0].calls == 0
    day.started[new], day.calls[new] = now - 1000, []
    day.add(new, now_ms(), 0.75)
    engine.refresh()
    again, fresh, _ = fresh_and_kept(engine, kept)
    assert_as_read_afresh(engine, again, fresh)
    assert again.day.sessions[0].id == new and again.day.sessions[0].cost_usd == pytest.approx(0.75)
    _, start, end, _, _ = bounds()
    assert again.day.report.cost_usd == pytest.approx(day.spent(start, end))


def test_a_change_another_process_made_is_read_whole_and_shown(env):
    """Another process (a `trayburn today`) read the new call first: the tray's own refresh then reads nothing,
    and the ledger cannot say what changed (None), so the tray reads everything again and shows it."""
    day, config, sids = a_busy_day(env)
    app = TrayApp(Engine(config, env / "state"), pystray, CAPS, spawn=Spawned())
    app.tick()
    app.tick()
    before = app.view.today
    day.add(sids["done"], now_ms(), 3.0)
    age_all(env / "sessions")  # (read once and trusted: the tray's refresh has nothing left to read)
    other = Engine(config, env / "state")
    assert other.refresh().calls_upserted
    other.close()
    assert app.tick() is True
    assert not app.engine.last_refresh.changed
    today, start, end, _, _ = bounds()
    assert app.glance.day.report.cost_usd == pytest.approx(day.spent(start, end))
    assert app.view.today != before and f"${day.spent(start, end):,.2f}" in app.view.today


def test_the_tray_shows_each_call_written_and_its_figures_are_those_read_afresh(env):
    """At the tray: each call written in place is shown at the next tick, from the glance kept before."""
    day, config, sids = a_busy_day(env)
    app = TrayApp(Engine(config, env / "state"), pystray, CAPS, spawn=Spawned())
    app.tick()
    for usd in (0.5, 0.25, 1.0):
        day.add(sids["run"], now_ms(), usd)
        assert app.tick() is True
        _, start, end, _, _ = bounds()
        assert app.glance.day.report.cost_usd == pytest.approx(day.spent(start, end))
        assert f"${day.spent(start, end):,.2f}" in app.view.today
    fresh = app.engine.glance(app.engine.health(), changes=None)
    assert app.glance.basis is not None and app.glance.basis.week_before is not None
    assert build_view(fresh, app.engine.settings, app.engine.health()).today == app.view.today


def test_midnight_reads_the_new_day_whole_whatever_was_kept(env):
    """A basis kept for yesterday is never today's, even when nothing changed since (`changes` empty)."""
    today = periods.now_date()
    yesterday = today - timedelta(days=1)
    day = Day(env)
    now = now_ms()
    start = periods.day_bounds(today)[0]
    day.session("span1", noon(yesterday), [(noon(yesterday) + 1000, 1.0), (start + (now - start) // 2, 0.5)])
    age_all(env / "sessions")
    config = env / "settings.toml"
    config.write_text(f'sessions_dir = "{day.sessions}"\n')
    engine = Engine(config, env / "state")
    engine.refresh()
    old = glance.basis(engine.ledger, engine.book, yesterday, frozenset())
    new = glance.basis(engine.ledger, engine.book, today, frozenset(), kept=old, changes=NOTHING)
    read = glance.basis(engine.ledger, engine.book, today, frozenset())
    assert new is not old
    got, want = (glance.today_figures(b, engine.ledger, "here", now) for b in (new, read))
    assert_same(got, want)
    assert got.report.cost_usd == pytest.approx(0.5) and got.report.calls == 1
    assert new.week_before.cost_usd == pytest.approx(1.0 if yesterday >= today - timedelta(days=today.weekday()) else 0)


def test_a_session_whose_route_changed_counts_as_a_change_of_all_its_calls(env):
    """Its provider prices its calls that name none: every call of it may have another price, back to its first."""
    day, config, sids = a_busy_day(env)
    engine = Engine(config, env / "state")
    engine.refresh()
    engine.changes()
    sid = sids["yday"]
    doc = manifest(sid, iso(day.started[sid]), provider="anthropic")
    write_in_place(day.sessions / sid / f"{sid}.json", dumps(doc))
    engine.refresh()
    news = engine.changes()
    assert news is not None and sid in news.sessions and news.earliest_ms == day.calls[sid][0][0]


def test_the_pace_from_kept_calls_is_the_pace_read_afresh_a_minute_on(env):
    """Calls read at one minute and kept give, minutes later, the very figure read then (a call stamped ahead of
    the clock counted once its time comes, a call leaving the hour no longer); the rate's rule itself:
    test_burn_rate.py."""
    day = Day(env)
    t0 = now_ms()
    calls = [(t0 - 50 * 60_000, 0.4), (t0 - 20 * 60_000, 0.3), (t0 - 1000, 0.2), (t0 + 3 * 60_000, 0.1)]
    day.session("hour1", t0 - 55 * 60_000, calls)
    estimated = [user("u0", t0 - 30 * 60_000), assistant("e0", t0 - 10 * 60_000, 20000, 2000)]  # no cost: priced
    make_session(day.sessions, f"{t0 - 30 * 60_000}_est01", iso(t0 - 30 * 60_000), estimated)
    config = env / "settings.toml"
    config.write_text(f'sessions_dir = "{day.sessions}"\n')
    engine = Engine(config, env / "state")
    engine.refresh()
    ledger, book = engine.ledger, engine.book
    kept = burn.hour_calls(ledger, book, burn.minute_of(t0) - burn.WINDOW_MS)
    seen = []
    for later in (0, 60_000, 4 * 60_000, 31 * 60_000, 61 * 60_000):
        now = t0 + later
        today = date.fromtimestamp(now / 1000)
        got = burn.burn(ledger, book, now, today, 1.0, kept)
        assert got == burn.burn(ledger, book, now, today, 1.0)
        seen.append(dict(got.by_session))
    assert len(seen[0]) == 2 and seen[0] != seen[2]  # the call stamped ahead counts from its minute on


def test_the_health_kept_while_only_the_clock_moves_is_taken_again_when_a_folder_goes(env):
    """A rebuild only the clock asked for (the last hour's calls leaving it) keeps the health it had, unless a
    file is settling or one of the folders it looks at came or went: the sessions folder removed is said then."""
    day = Day(env)
    now = now_ms()
    day.session("hour1", now - 10 * 60_000, [(now - 9 * 60_000, 0.5)])
    age_all(day.sessions)
    config = env / "settings.toml"
    config.write_text(f'sessions_dir = "{day.sessions}"\n')
    wall = [time.time()]
    app = TrayApp(Engine(config, env / "state"), pystray, CAPS, spawn=Spawned(), wall=lambda: wall[0])
    app.tick()
    assert app.view.hour_live and app.view.problem is None
    wall[0] += 61  # a minute on: the glance is built again, the health kept
    app.tick()
    assert app.view.problem is None
    shutil.rmtree(day.sessions)
    wall[0] += 61
    app.tick()
    assert app.view.problem is not None and str(day.sessions.name) in app.view.problem, app.view.problem
