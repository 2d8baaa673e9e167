"""packaging/: the menu launcher, the PyInstaller spec, and (on request) the built app itself."""

from __future__ import annotations

import ast
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGING = ROOT / "packaging"
CORPUS = ROOT / "tests" / "data" / "real-cline-v1"
EXE = "trayburn.exe" if sys.platform == "win32" else "trayburn"

needs_build = pytest.mark.skipif(
    os.environ.get("TRAYBURN_SKIP_PYINSTALLER") == "1",
    reason="TRAYBURN_SKIP_PYINSTALLER=1: the PyInstaller build (about 20 s, downloads PyInstaller) was skipped",
)


def test_menu_launcher_is_valid() -> None:
    path = PACKAGING / "trayburn.desktop"
    lines = path.read_text().splitlines()
    assert {"Type=Application", "Name=trayburn", "Exec=trayburn", "Icon=trayburn"} <= set(lines)
    tool = shutil.which("desktop-file-validate")
    if tool is None:
        pytest.skip("desktop-file-validate not installed (apt package desktop-file-utils)")
    result = subprocess.run([tool, str(path)], capture_output=True, text=True)
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr


def test_spec_and_entry_are_python() -> None:
    compile((PACKAGING / "trayburn.spec").read_text(), "trayburn.spec", "exec")
    entry = ast.parse((PACKAGING / "entry.py").read_text())
    imports = [n for n in ast.walk(entry) if isinstance(n, ast.ImportFrom)]
    assert any(n.module == "trayburn.cli" and [a.name for a in n.names] == ["main"] for n in imports)


@pytest.fixture(scope="module")
def built_app(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("pyinstaller")
    env = dict(os.environ, TRAYBURN_BUILD_DIR=str(out / "build"), TRAYBURN_DIST_DIR=str(out / "dist"))
    result = subprocess.run(
        ["bash", str(PACKAGING / "build.sh")], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    built = out / "dist" / "trayburn" / EXE
    assert built.is_file()
    return built


@pytest.mark.build  # builds the app with PyInstaller: `-m "not build"` leaves it out
@needs_build
def test_built_app_counts_todays_calls(built_app: Path, tmp_path: Path) -> None:
    expected = json.loads((CORPUS / "EXPECTED.json").read_text())
    day = corpus_day(expected)
    env = isolated_env(tmp_path) | {"CLINE_DIR": str(CORPUS), "TZ": "UTC"}
    (tmp_path / "none.toml").write_text("")  # an empty settings file: the defaults (--config must name a file)
    args = [str(built_app), "today", "--json", "--config", str(tmp_path / "none.toml")]
    args += ["--state-dir", str(tmp_path / "state")]
    if "--date" in run(built_app, ["today", "--help"], env).stdout:
        args += ["--date", day.isoformat()]
    elif dt.datetime.now(dt.UTC).date() != day:
        pytest.skip(f"the corpus was recorded on {day} and `today` takes no --date")
    result = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert calls_of(json.loads(result.stdout)) == expected["totals"]["calls"]


def corpus_day(expected: dict) -> dt.date:
    days = {dt.datetime.fromisoformat(s["started_at"]).date() for s in expected["sessions"]}
    assert len(days) == 1, days
    return days.pop()


def calls_of(report: dict) -> int:
    return report["calls"] if "calls" in report else report["totals"]["calls"]


def isolated_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "SYSTEMROOT")}
    return keep | {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
    }


def run(app: Path, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(app), *args], env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.build  # builds the app with PyInstaller: `-m "not build"` leaves it out
@needs_build
def test_built_app_replays_the_demo(built_app: Path, tmp_path: Path) -> None:
    env = isolated_env(tmp_path)
    result = subprocess.run([str(built_app), "demo", "--json"], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    expected = json.loads((CORPUS / "EXPECTED.json").read_text())
    assert json.loads(result.stdout)["calls"] == expected["totals"]["calls"]
