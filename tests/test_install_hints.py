"""What a person without the usual set-up is told: a read-only home names --state-dir and
TRAYBURN_STATE_DIR; a Python without Tk gets a message for the summary window, not a traceback.
The real trayburn, run as a person would, in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from trayburn.errors import Exit


def trayburn(tmp_path: Path, *args: str, code: str = "", env: dict[str, str] | None = None):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "SYSTEMROOT", "COVERAGE_FILE")}
    base |= {"HOME": str(home), "CLINE_DIR": str(tmp_path / "no-cline"), "TRAYBURN_CONFIG": str(tmp_path / "none.toml")}
    program = f"import sys\n{code}\nfrom trayburn.cli import main\nsys.exit(main({list(args)!r}))"
    return subprocess.run(
        [sys.executable, "-c", program],
        env=base | (env or {}),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_a_state_folder_that_cannot_be_made_names_the_way_out(tmp_path):
    blocker = tmp_path / "a-file"  # stands where the state folder's parent should be (as a read-only home does)
    blocker.write_text("not a folder")
    done = trayburn(tmp_path, "today", env={"TRAYBURN_STATE_DIR": str(blocker / "state")})
    assert done.returncode == Exit.CANT_WRITE, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("trayburn: ") and "--state-dir DIR" in line and "TRAYBURN_STATE_DIR" in line


def test_summary_without_tk_is_a_message_not_a_traceback(tmp_path):
    done = trayburn(tmp_path, "summary", code="sys.modules['tkinter'] = None  # this Python has no Tk")
    assert done.returncode == Exit.NOT_FOUND, done.stderr
    (line,) = done.stderr.splitlines()
    assert "needs Tk" in line and "python3-tk" in line and "Traceback" not in done.stderr
