"""One task found in several places (a storage folder copied or synced, the old CLI's two data folders): its
copies' calls as one set, the same whichever copy is newer and whichever the ledger read first (pitfall 9 of
docs/formats/editor-tasks.md). No I/O: `parse` has read each copy.

The union is by each call's own key (`<app>:<task>:<ts>`): a request one copy lacks is kept from another; a key
two copies hold is taken from the one that holds more of it (a final value over one in flight, then more
tokens, then the larger cost), never by file times. A request that only other copies hold, made in the stretch
a checkpoint restore of this copy removed, is that restore's (its sum stands for it), as in the copy holding
the restore.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..base import Call
from .parse import IN_FLIGHT, Parsed, Restore


def merged(copies: Sequence[Parsed]) -> Parsed:
    """The task's figures from all its copies (one copy: itself). What the session shows comes from the copy
    whose messages go furthest (then the first given: the caller passes them in a fixed order)."""
    if len(copies) == 1:
        return copies[0]
    best: dict[str, Call] = {}
    for p in copies:
        for c in p.calls:
            held = best.get(c.key)
            best[c.key] = c if held is None or _fuller(c) > _fuller(held) else held
    restores: dict[str, Restore] = {}
    for p in copies:
        for r in p.restores:
            held_r = restores.get(r.call.key)
            if held_r is None or _fuller(r.call) > _fuller(held_r.call):
                restores[r.call.key] = r
    removed = _removed_by_restores(copies)
    shown = max(copies, key=lambda p: p.ended_ms or 0)  # (max keeps the first of equals)
    out = Parsed(**{**vars(shown)})
    out.calls = sorted((c for k, c in best.items() if k not in removed), key=lambda c: (c.ts_ms or 0, c.key))
    out.restores = sorted(restores.values(), key=lambda r: r.call.key)
    out.started_ms = min((p.started_ms for p in copies if p.started_ms), default=None)
    out.ended_ms = max((p.ended_ms for p in copies if p.ended_ms), default=None)
    out.done = any(p.done for p in copies)
    out.in_flight = sum(1 for c in out.calls if c.note == IN_FLIGHT)
    out.written = max(p.written for p in copies)
    return out


def _fuller(c: Call) -> tuple:
    """How much of a call a copy holds: final before in flight, then its tokens, then its cost, then the rest
    of its values (so equal-looking copies still pick one by value, not by order)."""
    final = c.note != IN_FLIGHT
    return (final, c.input + c.output + c.cache_read + c.cache_write, c.cost or 0.0, repr(tuple(c)))


def _removed_by_restores(copies: Sequence[Parsed]) -> set[str]:
    """Keys of requests a restore removed: in another copy only, between the restore's point and the restore."""
    removed: set[str] = set()
    for p in copies:
        own = {c.key for c in p.calls}
        for r in p.restores:
            after, ts = r.after_ms, r.call.ts_ms or 0
            removed |= {c.key for q in copies for c in q.calls if c.key not in own and after < (c.ts_ms or 0) < ts}
    return removed
