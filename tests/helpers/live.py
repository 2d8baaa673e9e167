"""A live session, written as the Cline CLI writes it while it runs: one more call appended in place, stamped now."""

from __future__ import annotations

import json
import time
from pathlib import Path

from .corpus import assistant, dumps, user, write_in_place

SHOWN_WITHIN_S = 2.0  # a call written is on the tray within this


def now_ms() -> int:
    return int(time.time() * 1000)


def append_call(folder: Path, cost: float) -> None:
    """One more model call at the end of a session's messages file, rewritten in place as the CLI does."""
    path = folder / f"{folder.name}.messages.json"
    doc = json.loads(path.read_bytes())
    n = len(doc["messages"])
    doc["messages"] += [user(f"u-live{n}", now_ms()), assistant(f"msg_live{n:04d}", now_ms(), 1000, 10, cost=cost)]
    write_in_place(path, dumps(doc))


def started_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
