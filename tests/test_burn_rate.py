"""The burn rate and where the day ends at that pace: the rate's rule on known calls (the expected values worked
out here, the weight's integral by numerical quadrature), and `trayburn today` run at a moved clock (libfaketime)
on a day of known calls, its text and its JSON."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from helpers.corpus import assistant, iso, make_session, user

from trayburn.figures import burn

ROOT = Path(__file__).resolve().parent.parent
TAU_H = 0.5  # the documented rule: a call weighs e^(-age / 30 min), nothing past the hour


def norm_h() -> float:
    """∫₀¹ e^(−t/τ) dt in hours, by the trapezoid rule (not the module's closed form)."""
    n = 20_000
    ys = [math.exp(-(i / n) / TAU_H) for i in range(n + 1)]
    return (sum(ys) - (ys[0] + ys[-1]) / 2) / n


def expected_rate(calls: list[tuple[float, float]]) -> float:
    """(age in hours, USD) → USD per hour, by the README's words."""
    return sum(usd * math.exp(-age / TAU_H) for age, usd in calls if 0 <= age <= 1) / norm_h()


def test_the_rate_of_known_calls():
    now = 1_800_000_000_000
    known = [(55 / 60, 0.40), (30 / 60, 0.30), (10 / 60, 0.20), (0.5 / 60, 0.10), (61 / 60, 5.0), (5.0, 9.0)]
    calls = [(now - int(age * 3600_000), usd) for age, usd in known]
    assert burn.rate(calls, now) == pytest.approx(expected_rate(known), rel=1e-6)
    assert burn.rate([], now) == 0.0


def test_a_steady_spend_reads_as_itself_and_one_big_call_moves_it_little():
    now = 1_800_000_000_000
    steady = [(now - k * 60_000 - 30_000, 0.05) for k in range(120)]  # $0.05 a minute for two hours: $3/h
    assert burn.rate(steady, now) == pytest.approx(3.0, rel=0.02)
    big = burn.rate([*steady, (now, 1.00)], now) - burn.rate(steady, now)
    assert big == pytest.approx(1.00 / norm_h(), rel=1e-4)  # $2.32/h for a $1 call: the last minute's pace says $60/h
    assert big < 2.4


def test_no_projection_before_six_hours_of_the_day():
    day = datetime(2026, 11, 16).date()
    midnight = int(datetime(2026, 11, 16).timestamp() * 1000)
    assert burn.projected(1.0, 2.0, midnight + 5 * 3600_000 + 59 * 60_000, day) is None
    at_six = burn.projected(1.0, 2.0, midnight + 6 * 3600_000, day)
    assert at_six == pytest.approx(1.0 + 2.0 * 18)


FAKE_NOW = "2026-11-16 14:00:00"  # UTC (TZ=UTC below): a Monday afternoon


def ms_at(hhmmss: str, day: str = "2026-11-16") -> int:
    return int(datetime.fromisoformat(f"{day}T{hhmmss}").replace(tzinfo=UTC).timestamp() * 1000)


def day_of_calls(sessions: Path) -> tuple[float, list[tuple[float, float]]]:
    """Two sessions: one of the morning and one of the last hour, and a call of yesterday evening. Returns today's
    spend and the (age in hours at 14:00, USD) of today's calls."""
    calls = {"09:00:00": 1.00, "13:05:00": 0.40, "13:30:00": 0.30, "13:50:00": 0.20, "13:59:30": 0.10}
    morning = [user("u0", ms_at("08:59:00")), assistant("m0", ms_at("09:00:00"), cost=calls["09:00:00"])]
    make_session(sessions, f"{ms_at('08:59:00')}_morn1", iso(ms_at("08:59:00")), morning)
    late = [user("u1", ms_at("13:04:00"))] + [
        assistant(f"m{i}", ms_at(t), cost=c) for i, (t, c) in enumerate(calls.items()) if t != "09:00:00"
    ]
    make_session(sessions, f"{ms_at('13:04:00')}_late1", iso(ms_at("13:04:00")), late, status="running")
    eve = [user("u2", ms_at("23:00:00", "2026-11-15")), assistant("e0", ms_at("23:30:00", "2026-11-15"), cost=5.0)]
    make_session(sessions, f"{ms_at('23:00:00', '2026-11-15')}_eve01", iso(ms_at("23:00:00", "2026-11-15")), eve)
    written = ms_at("13:59:40") * 10**6  # each file as Cline left it, before the moved clock's now
    for f in sessions.rglob("*.json"):
        os.utime(f, ns=(written, written))
    end = ms_at("14:00:00")
    return sum(calls.values()), [((end - ms_at(t)) / 3600_000, c) for t, c in calls.items()]


def today_at(tmp_path: Path, when: str, *args: str) -> subprocess.CompletedProcess:
    config = tmp_path / "settings.toml"
    config.write_text(f'sessions_dir = "{tmp_path / "sessions"}"\n')
    env = {**os.environ, "TZ": "UTC", "PYTHONPATH": str(ROOT)}
    argv = ["faketime", when, sys.executable, "-m", "trayburn", "today", "--config", str(config)]
    argv += ["--state-dir", str(tmp_path / f"state-{when[-8:-6]}"), *args]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.skipif(shutil.which("faketime") is None, reason="apt-get install faketime")
def test_today_says_the_pace_and_the_day_end_at_a_moved_clock(tmp_path):
    spent, calls = day_of_calls(tmp_path / "sessions")
    run = today_at(tmp_path, FAKE_NOW, "--json")
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert data["date"] == "2026-11-16" and data["cost_usd"] == pytest.approx(spent)
    rate = expected_rate(calls)  # (the figure is worked out as of 14:00:00, the minute the command ran in)
    assert data["burn_usd_per_hour"] == pytest.approx(rate, rel=1e-4)
    assert data["projected_day_usd"] == pytest.approx(spent + rate * 10, rel=1e-4)  # ten hours left
    text = today_at(tmp_path, FAKE_NOW)
    assert text.returncode == 0, text.stderr
    assert f"${rate:,.2f}/h now · at this pace about ${spent + rate * 10:,.2f} by midnight" in text.stdout


@pytest.mark.skipif(shutil.which("faketime") is None, reason="apt-get install faketime")
def test_early_in_the_day_the_rate_alone_and_no_projection(tmp_path):
    spent, _ = day_of_calls(tmp_path / "sessions")
    run = today_at(tmp_path, "2026-11-16 05:00:00", "--json")  # no call in the hour before 05:00
    data = json.loads(run.stdout)
    assert data["projected_day_usd"] is None and data["burn_usd_per_hour"] == 0.0
    text = today_at(tmp_path, "2026-11-16 05:00:00")
    assert "$0.00/h now\n" in text.stdout and "by midnight" not in text.stdout
    other = today_at(tmp_path, FAKE_NOW, "--json", "--date", "2026-11-15")  # another day has no pace
    data = json.loads(other.stdout)
    assert data["burn_usd_per_hour"] is None and data["projected_day_usd"] is None and data["cost_usd"] == 5.0
