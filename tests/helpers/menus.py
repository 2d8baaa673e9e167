"""The tray's menu on pystray's dummy backend: its texts, an item by its text, what the tray would start; and the
days the menu tests write (calls routed through a provider, a plan's calls beside paid and unpriced ones)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from trayburn.figures import periods

from .corpus import assistant, iso, make_session


def texts(menu) -> list[str]:
    return [str(item.text) for item in menu.items]


def find(menu, prefix: str):
    for item in menu.items:
        if str(item.text).startswith(prefix):
            return item
    raise AssertionError(f"no menu item starting with {prefix!r} in {texts(menu)}")


class Spawned(list):
    """Records what the tray would start (argv and the options it starts it with)."""

    def __call__(self, argv, **options):
        self.append(argv)
        self.options = options


def a_minute_ago_ms() -> int:
    """A moment of today, a minute ago (or just after midnight, early in the day)."""
    midnight = periods.local_midnight_ms(periods.now_date())
    return max(int(time.time() * 1000) - 60_000, midnight + 1_000)


def routed(mid: str, ts: int, model: str, route: str, **kw) -> dict:
    m = assistant(mid, ts, model=model, **kw)
    m["modelInfo"]["provider"] = route
    return m


def plan_and_unpriced_day(sessions: Path) -> None:
    t = a_minute_ago_ms()
    plan = [
        routed(
            f"p{i}", t + i, "cline-pass/glm-5.2", "cline-pass", input=40_000, output=1_200, cache_read=30_000, cost=0
        )
        for i in range(3)
    ]
    paid = routed("paid", t + 5, "claude-sonnet-4-5", "cline", cost=0.25)
    unknown = routed("u1", t + 6, "acme-1", "openai-compatible")
    make_session(sessions, f"{t}_plan1", iso(t), plan + [paid, unknown], provider="cline-pass")


def add_session(sessions: Path, new_id: str) -> None:
    """A new session: the long recorded one, under a new id, with its own message ids."""
    src = next(p for p in sessions.iterdir() if p.name.endswith("_y8q37"))
    dst = sessions / new_id
    dst.mkdir()
    manifest = json.loads((src / f"{src.name}.json").read_text())
    manifest["session_id"] = new_id
    (dst / f"{new_id}.json").write_text(json.dumps(manifest, indent=2))
    doc = json.loads((src / f"{src.name}.messages.json").read_text())
    for m in doc["messages"]:
        m["id"] = f"{new_id}-{m.get('id')}"
        if "metrics" in m:
            m["metrics"]["cost"] = 1.25  # make the day's figure visibly bigger
    (dst / f"{new_id}.messages.json").write_text(json.dumps(doc, indent=2))
