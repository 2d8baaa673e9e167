"""The tray started as a person's desktop starts it, beside a notification service that records each Notify call
(notify_recorder.py): what the tests of the tray's notices share. Needs a desktop with a session bus
(`desktop.start_desktop`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .desktop import Desktop

RECORDER = Path(__file__).parent / "notify_recorder.py"


def record_notices(desk: Desktop, notices: Path) -> None:
    """Start the recorder on `desk`'s session bus (each Notify call a JSON line in `notices`); returns once it owns
    the notification service's name."""
    desk.spawn([sys.executable, str(RECORDER), str(notices)], log="recorder")
    ready = desk.logs / "recorder.log"
    desk.wait_for(lambda: ready.exists() and "ready" in ready.read_text(), 20, what="the notification service")


def notified(notices: Path) -> list[dict]:
    """What the recorder was told so far, in order."""
    return [json.loads(line) for line in notices.read_text().splitlines()] if notices.exists() else []


def spawn_tray(desk: Desktop, config: Path, state: Path, logs: Path, *, log: str = "tray") -> subprocess.Popen:
    """`trayburn` on `config` as a person's desktop starts it (the backend its own choice), its state in `state`, its
    log in `logs/trayburn.log` (`log_text`); its stdout and stderr in the desktop's `<log>.log`."""
    env = {"TRAYBURN_LOG_DIR": str(logs), "PYSTRAY_BACKEND": ""}
    argv = [sys.executable, "-P", "-m", "trayburn", "--config", str(config), "--state-dir", str(state)]
    return desk.spawn(argv, log=log, env=env)


def log_text(logs: Path) -> str:
    """The tray's log so far ("" before it writes one)."""
    path = logs / "trayburn.log"
    return path.read_text() if path.exists() else ""
