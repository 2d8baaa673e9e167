"""`trayburn status` and `trayburn budget check`: the one line for bars and prompts, Waybar's custom-module JSON
checked against the fields Waybar documents, a project's budgets at 79, 80 and 100 %, `--watch` printing a new
line within a second of a Cline write, and the polybar format in a real polybar on a real X server (read back
by tesseract)."""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers import desktop as harness
from helpers.corpus import assistant, make_session, user
from helpers.live import append_call, now_ms, started_now

from trayburn import cli
from trayburn.engine import Engine
from trayburn.tray.alerts import Alerts
from trayburn.tray.view import IconState, build_view

ROOT = Path(__file__).resolve().parent.parent
# Waybar's custom module, `"return-type": "json"` (man waybar-custom, RETURN-TYPE; src/modules/custom.cpp reads
# one line, and the keys text, alt, tooltip as strings, class as a string or a list of strings, percentage
# as a number)
WAYBAR_FIELDS = {"text": str, "alt": str, "tooltip": str, "class": (str, list), "percentage": (int, float)}


def project_day(tmp_path: Path, spent: float, **settings: str) -> Path:
    """A running session of project `web` that spent `spent` today over two calls in the last half hour, and
    the settings file (`settings`: more lines). Returns the settings file."""
    sessions = tmp_path / "sessions"
    t = now_ms()
    calls = [user("u0", t - 1_800_000), assistant("m1", t - 1_200_000, cost=spent / 2)]
    calls.append(assistant("m2", t - 600_000, cost=spent - spent / 2))
    make_session(sessions, f"{t - 1_800_000}_web01", started_now(), calls, status="running", workspace_root="/w/web")
    config = tmp_path / "settings.toml"
    extra = "".join(f"{k} = {v}\n" for k, v in settings.items())
    config.write_text(f'sessions_dir = "{sessions}"\n{extra}[project_budgets.web]\ndaily = 10.0\n')
    return config


def run(capsys, config: Path, *argv: str) -> tuple[int, str]:
    code = cli.main([*argv, "--config", str(config)])
    return code, capsys.readouterr().out


def test_the_waybar_line_has_only_the_fields_waybar_reads(tmp_path, capsys):
    config = project_day(tmp_path, 4.0, session_alert_usd="3.0")
    code, out = run(capsys, config, "status", "--format", "waybar")
    assert code == 0 and out.count("\n") == 1, out  # one line: Waybar parses the first and stops
    doc = json.loads(out)
    assert set(doc) <= set(WAYBAR_FIELDS) and {"text", "tooltip", "class", "percentage"} <= set(doc)
    for key, kind in WAYBAR_FIELDS.items():
        assert isinstance(doc[key], kind), (key, doc[key])
    assert all(isinstance(c, str) for c in doc["class"]) and doc["class"] == ["ok", "runaway"]
    assert doc["text"].startswith("$4.00 · $") and doc["text"].endswith("/h !") and doc["percentage"] == 40
    assert "Runaway: $4.00 in " in doc["tooltip"] and "(web)" in doc["tooltip"]
    code, plain = run(capsys, config, "status")
    assert plain.strip() == doc["text"]


@pytest.mark.parametrize(("spent", "level", "exit_code", "word"), [(7.9, 0, 0, "under"), (8.0, 80, 1, "warning"),
                                                                   (10.0, 100, 2, "over")])  # fmt: skip
def test_a_project_budget_at_79_80_and_100_percent(tmp_path, capsys, spent, level, exit_code, word):
    config = project_day(tmp_path, spent)
    code, out = run(capsys, config, "budget", "check", "--project", "web")
    pct = round(spent * 10)
    assert (code, out.strip()) == (exit_code, f"{word}: project web's daily budget, ${spent:.2f} of $10.00 ({pct} %)")
    code, out = run(capsys, config, "budget", "check")  # every budget: the project's is the only one set
    assert code == exit_code
    code, out = run(capsys, config, "status", "--format", "waybar")
    doc = json.loads(out)
    assert doc["class"] == [{0: "ok", 80: "warn", 100: "over"}[level]] and doc["percentage"] == pct
    code, out = run(capsys, config, "status", "--format", "polybar")
    colour = {0: None, 80: "#FFB300", 100: "#D62828"}[level]
    assert out.startswith(f"%{{F{colour}}}$") if colour else out.startswith("$")
    code, out = run(capsys, config, "report", "--by", "project", "--since", "today", "--json")
    (row,) = json.loads(out)["rows"]
    assert row["key"] == "web" and row["budget"] == {"which": "daily", "budget_usd": 10.0, "share": spent / 10}
    code, out = run(capsys, config, "report", "--by", "project", "--since", "today")
    assert f"$10.00 daily, {pct} %" in out

    engine = Engine(config, tmp_path / "state")  # the tray: the icon's mark, the menu's line, the notice once
    engine.refresh()
    glance = engine.glance(engine.health())
    view = build_view(glance, engine.settings, engine.health())
    assert view.state == {0: IconState.OK, 80: IconState.WARN, 100: IconState.OVER}[level]
    assert view.projects == ((("⚠ " if level else "") + f"Project web: ${spent:.2f} of $10.00 daily budget ({pct} %)"),)
    alerts = Alerts(tmp_path / "alerts.json")
    told: list[str] = []
    alerts.tell(glance, engine.settings, glance.day.day, lambda m: told.append(m) or True, up=True)
    alerts.tell(glance, engine.settings, glance.day.day, lambda m: told.append(m) or True, up=True)
    again = Alerts(tmp_path / "alerts.json")  # a tray started again
    again.tell(glance, engine.settings, glance.day.day, lambda m: told.append(m) or True, up=True)
    what = {80: "reached 80 % of", 100: "passed"}.get(level)
    assert told == ([f"${spent:.2f} today on web: {what} its $10.00 daily budget ({pct} %)"] if what else [])
    engine.close()


def test_budget_check_of_a_project_without_a_budget_is_refused(tmp_path, capsys):
    config = project_day(tmp_path, 1.0)
    assert cli.main(["budget", "check", "--project", "wbe", "--config", str(config)]) == 4
    assert "no budget is set for project 'wbe' (projects with one: web)" in capsys.readouterr().err


def watch_process(config: Path, state: Path, fmt: str = "plain") -> tuple[subprocess.Popen, queue.Queue]:
    argv = [sys.executable, "-m", "trayburn", "status", "--watch", "--format", fmt, "--config", str(config)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([*argv, "--state-dir", str(state)], stdout=subprocess.PIPE, text=True, env=env)
    lines: queue.Queue = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put((time.monotonic(), line.rstrip("\n")))

    threading.Thread(target=read, daemon=True).start()
    return proc, lines


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the watch is woken by inotify on Linux")
def test_watch_prints_a_new_line_within_a_second_of_a_cline_write(tmp_path):
    config = project_day(tmp_path, 1.0)
    config.write_text(config.read_text().replace("sessions_dir", "refresh_seconds = 3600\nsessions_dir"))
    folder = next((tmp_path / "sessions").iterdir())
    proc, lines = watch_process(config, tmp_path / "state")
    try:
        _, first = lines.get(timeout=60)
        assert first.startswith("$1.00 · $")
        time.sleep(1.5)  # nothing changed: nothing printed (the poll is an hour away; the rate moves by the minute)
        assert lines.empty() or lines.queue[0][1] != first
        written = time.monotonic()
        append_call(folder, 0.50)
        at, line = lines.get(timeout=10)
        assert line.startswith("$1.50 · $") and at - written < 1.0, (line, at - written)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


POLYBAR = """[bar/trayburn]
width = 100%
height = 48
background = #202020
foreground = #f0f0f0
font-0 = DejaVu Sans:size=20;4
modules-left = burn
padding-left = 2

[module/burn]
type = custom/script
exec = {exec}
tail = true
"""


@pytest.mark.desktop
@pytest.mark.skipif(bool(harness.missing_tools()), reason=f"apt-get install {' '.join(harness.missing_tools())}")
@pytest.mark.skipif(
    shutil.which("polybar") is None or shutil.which("tesseract") is None, reason="apt-get install polybar tesseract-ocr"
)
def test_the_polybar_format_in_a_real_polybar(tmp_path, artifacts):
    """The line in polybar's own custom/script module (`tail = true`: `--watch`) on a real X server: tesseract
    reads the figure back, the red of an over budget is on the bar, and a Cline write changes what it shows."""
    config = project_day(tmp_path, 12.0)  # 120 % of the project's budget: red
    folder = next((tmp_path / "sessions").iterdir())
    trayburn = f"env PYTHONPATH={ROOT} {sys.executable} -m trayburn status --format polybar --watch"
    bar = tmp_path / "polybar.ini"
    bar.write_text(POLYBAR.format(exec=f"{trayburn} --config {config} --state-dir {tmp_path / 'state'}"))
    desk = harness.start_desktop(tmp_path / "desk", tray=None, bus=False)
    try:
        desk.spawn(["polybar", "--config=" + str(bar), "trayburn"], log="polybar")
        shot = artifacts / "status-polybar.png"

        def reads(text: str) -> str | None:
            desk.screenshot(shot, harness.Rect(0, 0, 640, 48))
            words = ocr(shot)
            return words if text in words else None

        words = desk.wait_for(lambda: reads("12.00"), 60, what="polybar showing $12.00")
        assert "/h" in words
        assert red_pixels(shot) > 50, "an over budget is drawn in red"
        append_call(folder, 1.00)
        desk.wait_for(lambda: reads("13.00"), 30, what="polybar showing the new call")
    finally:
        desk.close()


def ocr(path: Path) -> str:
    big = path.with_suffix(".ocr.png")
    subprocess.run(["convert", str(path), "-resize", "300%", "-colorspace", "Gray", "-negate", str(big)], check=True)
    done = subprocess.run(["tesseract", str(big), "-", "--psm", "7"], capture_output=True, text=True, timeout=60)
    return done.stdout


def red_pixels(path: Path) -> int:
    """Pixels near the tray icon's red (#D62828) in the screenshot."""
    from PIL import Image

    with Image.open(path) as img:
        data = img.convert("RGB").tobytes()
    return sum(1 for i in range(0, len(data), 3) if data[i] > 170 and data[i + 1] < 90 and data[i + 2] < 90)
