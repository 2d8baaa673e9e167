"""Text for terminals: one renderer for every command's result (JSON is the result itself)."""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from .report import DayReport, ModelCost, SessionDetail, SessionSummary, priced_cost

if TYPE_CHECKING:
    from .engine import Health

# What to do, by Health.kind (the verdict says what is wrong; this says what to try).
HINTS = {
    "settings_broken": "fix that line by hand (`trayburn config path` shows the file); trayburn never overwrites it",
    "override_missing": "correct or remove that override, or create the folder",
    "not_installed": "install the Cline CLI (npm i -g cline), or set cline_dir if it lives elsewhere",
    "no_sessions_folder": "run one Cline task; the folder appears with its first session",
    "sessions_not_a_folder": "move that file away, or set sessions_dir to the real folder",
    "no_sessions": "run one Cline task, or check that sessions_dir is the folder Cline writes to",
    "ledger_disk_full": "free some space on that disk; the next refresh catches up (nothing is lost)",
    "ledger_read_only": "make the ledger and its folder writable by you (or use another --state-dir)",
    "ledger_io": "check the disk holding the ledger; trayburn left the file as it is",
    "file_problems": "each file above says why; it is read again when it changes",
}


def doctor(h: Health, settings_file_exists: bool) -> str:
    lines = ["Cline folders:"]
    for lv in h.levels:
        lines.append(f"  {lv.label:16} {lv.path}  [{lv.source()}]{'' if lv.exists else '  (missing)'}")
    lines.append(f"Settings file:   {h.config_path}" + ("" if settings_file_exists else "  (none; defaults)"))
    if h.settings_problem:
        where = f" (line {h.settings_problem.line})" if h.settings_problem.line else ""
        lines.append(f"  problem{where}: {h.settings_problem.message}")
    lines += [f"  warning: {w}" for w in h.config_warnings]
    lines.append(f"Ledger:          {h.ledger_path}")
    if h.ledger_notice:
        lines.append(f"  {h.ledger_notice}")
    if h.ledger_fault:
        lines.append(f"  problem: {h.ledger_fault}")
    lines.append(
        f"Sessions:        {h.sessions}"
        + (f" (+{h.removed_sessions} removed from disk, still counted)" if h.removed_sessions else "")
    )
    lines.append(f"Tray backend:    {h.extra.get('tray_backend', '-')}")
    if h.problems:
        lines.append(f"Unreadable files ({len(h.problems)}):")
        lines += [f"  {p}: {r}" for p, r in h.problems]
    if h.settling:
        lines.append(f"Changed in the last minute and not readable yet ({len(h.settling)}; retried at each refresh):")
        lines += [f"  {p}: {r}" for p, r in h.settling]
    lines += ["", h.verdict + (f". To fix: {HINTS[h.kind]}" if h.kind in HINTS else "")]
    return "\n".join(lines)


# What a terminal would obey rather than show: C0 controls but tab and newline (ESC, BEL, a lone CR…),
# DEL, C1 controls (0x9b is CSI on its own), and the bidirectional overrides that reorder a line.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def clean(text: str) -> str:
    """Text safe to print: titles, model names and paths come from files anyone could write, so an
    OSC 52 clipboard write or a screen clear in a title is removed, never sent to the terminal."""
    text = _CONTROLS.sub("", text)
    return text if text.isascii() else _escaped(text)


def _escaped(text: str) -> str:
    """A name that is not UTF-8 (a surrogate escape, as Python reads it) shown as its escape: `sess\\udcff`."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def one_line(text: str) -> str:
    """`clean`, and on one line (for a table cell)."""
    return clean(text).replace("\n", " ").replace("\t", " ")


def as_json(data: Any, indent: int | None = 2) -> str:
    """The one JSON writer for results: strict JSON (NaN or Infinity is a bug, raised as ValueError)."""
    out = json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False)
    try:
        out.encode("utf-8")
    except UnicodeEncodeError:  # a name that is not UTF-8: JSON's own escapes (\udcff), printable anywhere
        out = json.dumps(data, indent=indent, ensure_ascii=True, allow_nan=False)
    return out


def usd(value: float | None, estimated: bool = False) -> str:
    if value is None:
        return "unpriced"
    text = f"${value:,.2f}" if value >= 0.01 or value == 0 else f"${value:.4f}"
    return text + ("*" if estimated else "")


def tokens(n: int) -> str:
    for unit, size in (("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)


def table(headers: list[str], rows: list[list[str]], right: Collection[int] = frozenset()) -> str:
    rows = [[one_line(str(c)) for c in r] for r in rows]
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows, strict=True)]

    def line(cells):
        return "  ".join(
            str(c).rjust(w) if i in right else str(c).ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=False))
        ).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows])


def day(r: DayReport) -> str:
    cost = cost_cell(r.cost_usd, r.estimated_cost_usd, r.unpriced_calls, r.calls, compact=True)
    head = f"{r.date} ({r.timezone}): {cost} over {plural(r.calls, 'call')} in {plural(r.sessions, 'session')}"
    lines = [head]
    if r.estimated_cost_usd:
        lines.append(f"  of which {usd(r.estimated_cost_usd)} estimated from tokens (no cost reported)")
    if r.unpriced_calls:
        lines.append(f"  {r.unpriced_calls} calls have no known price and are not in the total")
    t = r.tokens
    lines.append(
        f"  tokens: {tokens(t.input)} in ({tokens(t.cache_read)} cache read, "
        f"{tokens(t.cache_write)} cache write), {tokens(t.output)} out"
    )
    if r.models:
        lines += [
            "",
            table(["model", "calls", "cost"], [[m.name, str(m.calls), _model_cost(m)] for m in r.models], right={1, 2}),
        ]
    return "\n".join(lines)


def _model_cost(m: ModelCost) -> str:
    return cost_cell(m.cost_usd, m.estimated_cost_usd, m.unpriced_calls, m.calls)


UNPRICED_MARK = "?"


def cost_cell(cost: float, estimated: float, unpriced: int, calls: int, compact: bool = False) -> str:
    """A cost with its marks (* estimated; unpriced calls, as '?' when compact); calls none of
    which has a price are "unpriced", never $0."""
    if priced_cost(cost, calls, unpriced) is None:
        return "unpriced"
    tail = (UNPRICED_MARK if compact else f" (+{unpriced} unpriced)") if unpriced else ""
    return usd(cost, bool(estimated)) + tail


def sessions(items: list[SessionSummary]) -> str:
    if not items:
        return "No sessions."
    rows = [
        [
            (s.started_at or "")[:16].replace("T", " "),
            shorten(s.title, 48),
            s.state + (" (removed)" if s.removed else ""),
            ", ".join(s.models) or "-",
            str(s.calls),
            cost_cell(s.cost_usd, s.estimated_cost_usd, s.unpriced_calls, s.calls),
            s.id,
        ]
        for s in items
    ]
    return table(["started", "title", "status", "models", "calls", "cost", "id"], rows, right={4, 5})


def session(d: SessionDetail) -> str:
    s = d.summary
    lines = [
        one_line(s.title),
        f"  id {s.id}  ·  {s.state}{' (removed from disk)' if s.removed else ''}",
        f"  project {s.project or '-'}  ·  {s.cwd or '-'}",
        f"  started {s.started_at or '-'}  ended {s.ended_at or '-'}"
        + (f"  ({d.duration_s:.0f} s)" if d.duration_s is not None else ""),
        f"  {s.calls} calls, {cost_cell(s.cost_usd, 0.0, s.unpriced_calls, s.calls)}"
        + (f" ({usd(s.estimated_cost_usd)} estimated)" if s.estimated_cost_usd else ""),
    ]
    for sub in s.subagents:
        lines.append(f"  {sub.kind} {sub.name}: {sub.calls} calls, {usd(sub.cost_usd)}")
    rows = [
        [
            c.time[11:19],
            c.model,
            c.agent,
            tokens(c.tokens.input),
            tokens(c.tokens.output),
            usd(c.cost_usd, c.estimated),
            ", ".join(c.tools),
        ]
        for c in d.calls
    ]
    if rows:
        lines += ["", table(["time", "model", "agent", "in", "out", "cost", "tools"], rows, right={3, 4, 5})]
    return "\n".join(lines)


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
