"""`trayburn demo`: the tray (or its figures) on sessions recorded from the real Cline CLI, replayed as if
they happened today, in a throwaway folder and ledger of their own. Never touches the person's own Cline
folders, settings or ledger.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from .. import files, paths, settings
from ..figures import periods

SOURCE = Path(__file__).parent / "sessions"
MARKER = "trayburn-demo"  # written beside the replayed Cline folder's data: the window says it shows a demo
MS_FIELDS = ("ts",)
ISO_FIELDS = ("started_at", "ended_at", "updated_at")


def latest_ms(sessions: Path) -> int:
    latest = 0
    for path in sessions.glob("*/*.messages.json"):
        for m in json.loads(path.read_text()).get("messages", []):
            latest = max(latest, m.get("ts") or 0)
    return latest


def shift_for_today(latest: int, earliest: int, now_ms: int) -> int:
    """How far to move the recording so its last call is a minute ago, all of it today."""
    midnight = periods.local_midnight_ms(date.fromtimestamp(now_ms / 1000))
    end = max(now_ms - 60_000, midnight + (latest - earliest) + 60_000)
    return end - latest


def _iso_shift(text: str, delta_ms: int) -> str:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00")) + timedelta(milliseconds=delta_ms)
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _shift(node, delta_ms: int):
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for k, v in node.items():
            if k in MS_FIELDS and isinstance(v, (int, float)) and v > 1e12:
                out[k] = int(v + delta_ms)
            elif k in ISO_FIELDS and isinstance(v, str):
                out[k] = _iso_shift(v, delta_ms)
            elif k == "messages_path":
                continue  # points at the recording machine
            else:
                out[k] = _shift(v, delta_ms)
        return out
    if isinstance(node, list):
        return [_shift(v, delta_ms) for v in node]
    return node


def prepare(root: Path, now_ms: int | None = None) -> Path:
    """Write the replayed sessions and a settings file under `root`; return the settings file."""
    now_ms = now_ms if now_ms is not None else int(time.time() * 1000)
    starts = [int(p.name.split("_")[0]) for p in SOURCE.iterdir() if p.is_dir()]
    delta = shift_for_today(latest_ms(SOURCE), min(starts), now_ms)
    target = root / "cline" / "data" / "sessions"
    for src in SOURCE.glob("*/*.json"):
        dst = target / src.parent.name / src.name
        dst.parent.mkdir(parents=True, exist_ok=True)
        doc = _shift(json.loads(src.read_text()), delta)
        dst.write_text(json.dumps(doc, indent=2) + "\n")
    config = root / "settings.toml"
    cline = root / "cline"
    (cline / MARKER).write_text(
        "sessions replayed by `trayburn demo`; deleted with this folder\n"
    )  # all three levels, so CLINE_DATA_DIR / CLINE_SESSION_DATA_DIR cannot leak in
    settings.save(
        config, settings.Settings(cline_dir=str(cline), data_dir=str(cline / "data"), sessions_dir=str(target))
    )
    return config


def is_demo(sessions: Path) -> bool:
    """Whether a sessions folder is one `prepare` wrote (<root>/cline/data/sessions beside the marker)."""
    return (Path(sessions).parent.parent / MARKER).is_file()


def _demo_home() -> Path:
    return files.private_dir(paths.demo_dir())


@contextmanager
def prepared(args) -> Iterator[None]:
    """`args.config` and `args.state_dir` pointed at a fresh copy of the demo, shifted to end today: in a
    temporary folder removed afterwards, or in `--state-dir` when given. `cli.cmd_demo` runs the rest."""
    if args.state_dir:
        _point(args, files.private_dir(args.state_dir))
        yield
        return
    with tempfile.TemporaryDirectory(prefix="demo-", dir=_demo_home()) as tmp:
        _point(args, Path(tmp))
        with _removed_on_sigterm(Path(tmp)):
            yield


@contextmanager
def _removed_on_sigterm(folder: Path) -> Iterator[None]:
    """SIGTERM (the session ending at logout, `kill`) ends the process without running a `finally`: the demo's
    copy (~700 KB) is removed first, then the process ends as SIGTERM ends it."""
    if threading.current_thread() is not threading.main_thread():  # only the main thread sets handlers
        yield
        return

    def ended(signum: int, _frame: Any) -> None:
        shutil.rmtree(folder, ignore_errors=True)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    previous = signal.signal(signal.SIGTERM, ended)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _point(args, root: Path) -> None:
    config = prepare(root)
    args.config, args.state_dir = str(config), str(config.parent / "state")
