"""What the summary window shows, as plain rows and strings: no tkinter here.

Each function turns an engine report into display rows (`Row`: an id, the cell texts, and the
values to sort by), so the view only places text and the tests can check the figures without a
display. Every text from Cline's files (titles, prompts, paths, model names) passes through
`clean()`: one line, shortened, shown as text and never interpreted.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from ..render import UNPRICED_MARK, cost_cell, tokens, usd
from ..report import CallRow, DayReport, ModelCost, SessionDetail, SessionSummary, Subagent

TITLE_CHARS = 90  # in a table cell
HEADING_CHARS = 240  # a session's title above its figures
PATH_CHARS = 72
ESTIMATE_MARK = "*"
LEGEND = {
    ESTIMATE_MARK: "* includes an estimate from token counts (Cline reported no cost)",
    UNPRICED_MARK: "? some calls have no known price and are not counted",
}


class BadDay(ValueError):
    """A date the window cannot show; the message says what to type instead."""


@dataclass(frozen=True)
class Column:
    key: str
    heading: str
    chars: int  # width in average characters
    numeric: bool = False  # right-aligned, sorted by number, biggest first
    stretch: bool = False


@dataclass(frozen=True)
class Row:
    iid: str
    values: tuple[str, ...]
    keys: tuple[Any, ...]  # what each column sorts by
    tags: tuple[str, ...] = field(default=(), compare=True)


DAY_COLUMNS = (
    Column("start", "Start", 6),
    Column("title", "Session", 34, stretch=True),
    Column("project", "Project", 13),
    Column("models", "Model", 16),
    Column("status", "Status", 9),
    Column("calls", "Calls", 5, numeric=True),
    Column("tokens", "Tokens", 7, numeric=True),
    Column("cost", "Cost", 8, numeric=True),
)
MODEL_COLUMNS = (
    Column("model", "Model", 18, stretch=True),
    Column("calls", "Calls", 6, numeric=True),
    Column("tokens", "Tokens", 8, numeric=True),
    Column("cost", "Cost", 9, numeric=True),
)
CALL_COLUMNS = (
    Column("n", "#", 4, numeric=True),
    Column("time", "Time", 8),
    Column("agent", "Agent", 9),
    Column("model", "Model", 17),
    Column("input", "In", 8, numeric=True),
    Column("output", "Out", 7, numeric=True),
    Column("cache_read", "Cache read", 10, numeric=True),
    Column("cost", "Cost", 9, numeric=True),
    Column("tools", "Tools used", 18, stretch=True),
)
SUBAGENT_COLUMNS = (
    Column("name", "Agent", 24, stretch=True),
    Column("kind", "Kind", 10),
    Column("calls", "Calls", 6, numeric=True),
    Column("cost", "Cost", 9, numeric=True),
)


# ---- text ------------------------------------------------------------------------------------------


def clean(text: object, width: int = TITLE_CHARS) -> str:
    """One line of plain text, at most `width` characters (an ellipsis marks the cut)."""
    raw = str(text or "")
    raw = "".join(" " if unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp") else ch for ch in raw)
    line = " ".join(raw.split())
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"


def short_path(path: object, width: int = PATH_CHARS) -> str:
    """A path shortened in the middle, keeping its start and its last folders."""
    text = clean(path, 10**6)
    if len(text) <= width:
        return text
    keep = width - 1
    return text[: keep // 3].rstrip() + "…" + text[len(text) - (keep - keep // 3) :]


def cost_text(cost: float, estimated: float = 0.0, unpriced: int = 0, calls: int = 0) -> str:
    """A cost with its marks; when none of the calls has a price it is "unpriced", never $0."""
    return cost_cell(cost, estimated, unpriced, calls, compact=True)


def clock(iso: str | None, seconds: bool = False) -> str:
    if not iso:
        return "–"
    return datetime.fromisoformat(iso).strftime("%H:%M:%S" if seconds else "%H:%M")


def start_text(iso: str | None, day: date | None) -> str:
    """The start time; the start date instead for a session begun on another day."""
    if not iso:
        return "–"
    started = datetime.fromisoformat(iso)
    return clock(iso) if day is None or started.date() == day else f"{started.day} {started:%b}"


def when(iso: str | None) -> str:
    if not iso:
        return "–"
    return datetime.fromisoformat(iso).strftime("%Y-%m-%d %H:%M:%S")


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def day_heading(day: date) -> str:
    return f"{day:%A} {day.day} {day:%B %Y}"


def parse_day(value: object) -> date:
    """A date from the command line or the date field; BadDay with a plain message otherwise."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    text = str(value or "").strip()
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise BadDay(f"“{clean(text, 40)}” is not a date: type it as YYYY-MM-DD, e.g. 2026-11-30") from None


# ---- the day ---------------------------------------------------------------------------------------


def session_rows(sessions: Sequence[SessionSummary], day: date | None = None) -> list[Row]:
    return [_session_row(s, day) for s in sessions]


def _session_row(s: SessionSummary, day: date | None) -> Row:
    status = s.state + (" (removed)" if s.removed else "")
    models = ", ".join(s.models) or "–"
    values = (
        start_text(s.started_at, day),
        clean(s.title),
        clean(s.project or "–", 40),
        clean(models, 60),
        status,
        f"{s.calls:,}",
        tokens(s.tokens.total),
        cost_text(s.cost_usd, s.estimated_cost_usd, s.unpriced_calls, s.calls),
    )
    started = datetime.fromisoformat(s.started_at).timestamp() if s.started_at else 0.0
    keys = (
        started,
        s.title.casefold(),
        (s.project or "").casefold(),
        models.casefold(),
        status,
        s.calls,
        s.tokens.total,
        s.cost_usd,
    )
    tags = tuple(t for t in (s.state, "removed" if s.removed else "") if t)
    return Row(s.id, values, keys, tags)


def day_totals(r: DayReport) -> tuple[str, ...]:
    plural = "" if r.sessions == 1 else "s"
    return (
        "Total",
        f"{r.sessions} session{plural}",
        "",
        "",
        "",
        f"{r.calls:,}",
        tokens(r.tokens.total),
        cost_text(r.cost_usd, r.estimated_cost_usd, r.unpriced_calls, r.calls),
    )


def model_rows(r: DayReport) -> list[Row]:
    return [_model_row(m) for m in r.models]


def _model_row(m: ModelCost) -> Row:
    values = (
        clean(m.name, 60),
        f"{m.calls:,}",
        tokens(m.tokens),
        cost_text(m.cost_usd, m.estimated_cost_usd, m.unpriced_calls, m.calls),
    )
    return Row(f"model:{m.name}", values, (m.name.casefold(), m.calls, m.tokens, m.cost_usd))


def day_cards(r: DayReport, sessions: Sequence[SessionSummary]) -> list[tuple[str, str, str]]:
    """(caption, figure, note) for the strip above the table."""
    t = r.tokens
    estimated = f"{usd(r.estimated_cost_usd)} estimated" if r.estimated_cost_usd else "all reported by Cline"
    if r.unpriced_calls:
        estimated += f" · {r.unpriced_calls} unpriced"
    per_session = f"{r.calls / r.sessions:.1f} per session" if r.sessions else "no sessions"
    return [
        ("Cost", usd(r.cost_usd), estimated),
        ("Sessions", f"{len(sessions):,}", _states(sessions)),
        ("Calls", f"{r.calls:,}", per_session),
        ("Tokens", tokens(t.total), f"{tokens(t.cache_read)} cache read · {tokens(t.output)} out"),
    ]


def _states(sessions: Sequence[SessionSummary]) -> str:
    """The sessions that did not simply complete: "1 running · 4 failed"."""
    counts: dict[str, int] = {}
    for s in sessions:
        counts[s.state] = counts.get(s.state, 0) + 1
    if not sessions:
        return "none"
    if set(counts) == {"completed"}:
        return "all completed"
    order = ("running", "failed", "cancelled", "stale")
    others = sorted(k for k in counts if k not in order and k != "completed")
    return " · ".join(f"{counts[k]} {k}" for k in (*order, *others) if k in counts)


def legend(texts: Sequence[str]) -> str:
    return "    ".join(line for mark, line in LEGEND.items() if any(mark in t for t in texts))


def hour_label(hour: int) -> str:
    return f"{hour:02d}:00–{(hour + 1) % 24:02d}:00"


# ---- one session -----------------------------------------------------------------------------------


def call_rows(d: SessionDetail) -> list[Row]:
    return [_call_row(n, c) for n, c in enumerate(d.calls, 1)]


def _call_row(n: int, c: CallRow) -> Row:
    t = c.tokens
    cost = usd(c.cost_usd, c.estimated)
    tools = ", ".join(c.tools) or "–"
    values = (
        str(n),
        clock(c.time, seconds=True),
        c.agent,
        clean(c.model, 60),
        f"{t.input:,}",
        f"{t.output:,}",
        f"{t.cache_read:,}",
        cost,
        clean(tools, 80),
    )
    keys = (
        n,
        c.ts_ms,
        c.agent,
        c.model.casefold(),
        t.input,
        t.output,
        t.cache_read,
        -1.0 if c.cost_usd is None else c.cost_usd,
        tools,
    )
    return Row(f"call:{n}", values, keys, (c.agent,) if c.agent != "lead" else ())


def subagent_rows(s: SessionSummary) -> list[Row]:
    return [_subagent_row(a) for a in s.subagents]


def _subagent_row(a: Subagent) -> Row:
    values = (clean(a.name, 60), a.kind, f"{a.calls:,}", usd(a.cost_usd))
    return Row(f"agent:{a.name}", values, (a.name.casefold(), a.kind, a.calls, a.cost_usd))


FACT_LABELS = ("Status", "Project", "Folder", "Models", "Started", "Ended", "Duration", "Session id")


def session_facts(d: SessionDetail) -> list[tuple[str, str]]:
    """(label, value) pairs in FACT_LABELS order (the view reads them down, then across)."""
    s = d.summary
    status = s.state + ("  (removed from disk; still counted)" if s.removed else "")
    return [
        ("Status", status),
        ("Project", clean(s.project or "–", 60)),
        ("Folder", short_path(s.cwd or "–")),
        ("Models", clean(", ".join(s.models) or "–", PATH_CHARS)),
        ("Started", when(s.started_at)),
        ("Ended", when(s.ended_at) if s.ended_at else ("still running" if s.running else "–")),
        ("Duration", duration(d.duration_s)),
        ("Session id", s.id),
    ]


def session_cards(d: SessionDetail) -> list[tuple[str, str, str]]:
    s, t = d.summary, d.summary.tokens
    reported = s.cost_usd - s.estimated_cost_usd
    note = f"reported {usd(reported)} · estimated {usd(s.estimated_cost_usd)}"
    if s.unpriced_calls:
        note += f" · {s.unpriced_calls} unpriced"
    return [
        ("Cost", usd(s.cost_usd), note),
        ("Calls", f"{s.calls:,}", _agents_note(s)),
        ("Tokens in", tokens(t.input), f"{t.input:,}"),
        ("Tokens out", tokens(t.output), f"{t.output:,}"),
        ("Cache read", tokens(t.cache_read), f"{t.cache_read:,}"),
        ("Cache write", tokens(t.cache_write), f"{t.cache_write:,}"),
    ]


def _agents_note(s: SessionSummary) -> str:
    if not s.subagents:
        return "lead agent only"
    kinds = {a.kind for a in s.subagents}
    word = "helpers" if len(kinds) > 1 else f"{kinds.pop()}s"
    return f"with {len(s.subagents)} {word}" if len(s.subagents) > 1 else f"with 1 {word[:-1]}"


# ---- sorting ---------------------------------------------------------------------------------------


def sort_rows(rows: Sequence[Row], column: int, descending: bool) -> list[Row]:
    """Stable sort by one column; the row id breaks ties so the order never flickers."""
    return sorted(rows, key=lambda r: (_sortable(r.keys[column]), r.iid), reverse=descending)


def _sortable(value: Any) -> tuple:
    if value is None:
        return (0, 0)
    if isinstance(value, (int, float)):
        return (1, value)
    return (2, str(value))
