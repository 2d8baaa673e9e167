"""The lines under today's in the menu: the spend across machines, the models with no price, what is
wrong with sharing (what a plan covered is `render.plan_text`, shared with the CLI and the window).
Each is None when there is nothing to say, so the menu shows only what applies."""

from __future__ import annotations

from typing import Any

from ..money import Money
from ..render import USD, plural, shorten

MODELS_SHOWN = 3  # unpriced models named in the line; the rest are counted


def unpriced_line(calls: int, models: list[str]) -> str | None:
    """ "2 calls unpriced: acme-1 — add a price in settings": which models, and what to do."""
    if calls <= 0:
        return None
    names = ", ".join(models[:MODELS_SHOWN])
    if len(models) > MODELS_SHOWN:
        names += f" +{len(models) - MODELS_SHOWN} more"
    return f"{plural(calls, 'call')} unpriced: {shorten(names or 'unknown model', 48)} — add a price in settings"


def machines_line(engine: Any, money: Money = USD) -> str | None:
    """ "Today $4.20 on 3 machines (this one $1.10)"; None while no other machine is held."""
    line: str | None = engine.machines().menu_line(money.text)
    return line


def sync_problem(engine: Any) -> str | None:
    """What is wrong with sharing through `sync_dir` (None: nothing, or not sharing)."""
    if not engine.settings.sync_dir:
        return None
    problem: str | None = engine.sync_health().problem_line
    return problem
