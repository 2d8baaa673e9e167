"""The lines under today's in the menu: the spend across machines, the models with no price, what is
wrong with sharing (what a plan covered is `render.plan_text`, shared with the CLI and the window).
Each is None when there is nothing to say, so the menu shows only what applies."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .. import paths
from ..figures.money import Money
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


def sources_line(engine: Any, text: Callable[[float], str]) -> str | None:
    """ "CLI $1.20 · VS Code $3.40": today's spend by app, each amount as `text` writes it; None while one
    app has all of it."""
    from ..sources.task_places import menu_line

    return menu_line(engine.spend_by_source(), text)


def sync_problem(engine: Any, problems: Sequence[tuple[str, str]] = ()) -> str | None:
    """What is wrong with sharing through `sync_dir` (None: nothing, or not sharing), by the rule of
    `SyncHealth.problem_line`, from what the refreshes recorded: this machine's last write, each other
    machine's file as the ledger holds it, and `problems` (the health's (path, reason): a file refused
    before it was read, such as a symbolic link). `engine.sync_health()` (doctor's) reads every file's
    header, too slow for each rebuild of the menu."""
    sync_dir = engine.settings.sync_dir
    if not sync_dir:
        return None
    from ..sync.fileformat import EXT  # only when sharing: the sharing code stays unloaded otherwise
    from ..sync.share import MachineStatus, SyncHealth

    folder = paths.machines_dir(Path(sync_dir).expanduser())
    held = [MachineStatus(f.origin, f.name, f.path, False, problem=f.error) for f in engine.ledger.machine_files()]
    held += [
        MachineStatus(Path(p).name.removesuffix(EXT), None, p, False, problem=why)
        for p, why in problems
        if Path(p).parent == folder
    ]
    return SyncHealth(sync_dir, problem=engine.sharing.state().problem, machines=held).problem_line
