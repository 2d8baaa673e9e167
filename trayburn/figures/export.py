"""`trayburn export`: a period's counted calls, one row each, as CSV or as a JSON array, streamed.
Never holds the whole export in memory and never speaks SQL (the ledger's `export_calls` does).

Rows are read from the ledger a few thousand at a time and written as they come, so 100,000 calls
take no more memory than 100. CSV is UTF-8 with a header and RFC 4180 quoting (csv.writer, "\\r\\n"
line ends): titles with commas, quotes or newlines come back whole. A text cell that a spreadsheet
would run as a formula (starting with = + - @, a tab or a carriage return) is written with a leading
apostrophe, which spreadsheets show as text; terminal controls in a cell (an OSC 52 clipboard write in a
title) are removed, as from everything trayburn prints.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import json
import os
import stat
import tempfile
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import NamedTuple, TextIO

from ..errors import CantWrite, TrayburnError
from ..files import CONTROLS, clean
from ..ledger import Ledger, queries
from ..pricing import PriceBook
from ..sources.editor_tasks.places import source_label
from .attribution import SHELLS, agent_of
from .costs import Pricer
from .day import _USER_INPUT
from .history import project_name
from .money import Money
from .periods import Period

FORMATS = ("csv", "json")
FORMULA_STARTS = frozenset("=+-@\t\r")


class ExportRow(NamedTuple):
    time: str  # local ISO 8601 with its UTC offset
    session_id: str
    title: str
    project: str
    source: str
    agent: str  # lead | subagent | teammate | subagents (an editor task's subagents, summed by the task)
    model: str
    provider: str
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_usd: float | None  # None: no reported cost and no known price; 0 for a plan's or a free model's call
    estimated: bool  # cost_usd is trayburn's estimate from the tokens
    agent_name: str = ""  # "lead", a subagent's id, a teammate's name (attribution.agent_of)
    tools: str = (
        ""  # the tools its reply called, space-separated; a shell tool's programs after it: run_commands(git npm)
    )
    billing: str = "paid"  # paid | plan | free (by the call's route and model id, never its cost field)
    api_value_usd: float | None = None  # a plan's call: its tokens at list price (never in cost_usd)
    app: str = ""  # the app that wrote the session, for people ("Cline CLI", "Cline for VS Code")


FIELDS = ExportRow._fields


def rows(ledger: Ledger, book: PriceBook, period: Period) -> Iterator[ExportRow]:
    """The counted calls of the period, oldest first, one at a time; each priced as the session detail
    prices it (`Pricer.call`: its route is its provider, else its session's)."""
    start, end = period.bounds_ms()
    pricer = Pricer(ledger, book)
    sessions: dict[str, tuple[str, str, str, str]] = {}  # id → title, project, source, app: once a session
    for c in ledger.export_calls(start, end):
        about = sessions.get(c.session_id)
        if about is None:
            about = sessions[c.session_id] = _about(c)
        yield _row(c, about, pricer)


def _about(c: queries.ExportCall) -> tuple[str, str, str, str]:
    source = c.source or "unknown"
    return title(c.title, c.prompt), project_name(c.workspace_root or c.cwd), source, source_label(source)


def _row(c: queries.ExportCall, about: tuple[str, str, str, str], pricer: Pricer) -> ExportRow:
    cost = pricer.call(c, c.session_provider)
    return ExportRow(
        time=datetime.fromtimestamp(c.ts_ms / 1000).astimezone().isoformat(timespec="milliseconds"),
        session_id=c.session_id,
        title=about[0],
        project=about[1],
        source=about[2],
        agent=c.agent or "lead",
        model=c.model or "",
        provider=c.provider or c.session_provider or "",
        input_tokens=c.input,
        output_tokens=c.output,
        cache_read_tokens=c.cache_read,
        cache_write_tokens=c.cache_write,
        cost_usd=cost.cost_usd,
        estimated=cost.estimated,
        agent_name=agent_of(c.agent, c.path)[1],
        tools=tools_cell(c.tools, c.commands),
        billing=cost.billing,
        api_value_usd=cost.plan_api_value_usd,
        app=about[3],
    )


def tools_cell(tools: str | None, commands: str | None) -> str:
    """`read_files run_commands(git npm)`: each tool its reply called, a shell tool with the programs it ran."""
    names = (tools or "").split(",") if tools else []
    words = iter((commands or "").split(",")) if commands is not None else None
    out = []
    for name in names:
        if name in SHELLS and words is not None:
            name += f"({next(words, '')})"
        out.append(name)
    return " ".join(out)


def title(title: str | None, prompt: str | None) -> str:
    """The session's title, else its first prompt without Cline's <user_input> wrapper, as written
    (newlines kept: the export is the record, not a table cell)."""
    text = title or prompt or ""
    m = _USER_INPUT.match(text)
    return (m.group(1) if m else text).strip()


def write(items: Iterator[ExportRow], stream: TextIO, fmt: str, money: Money | None = None) -> int:
    """Write the rows as `fmt` (csv | json); the number of rows written."""
    money = money or Money()
    if fmt == "csv":
        return write_csv(items, stream, money)
    if fmt == "json":
        return write_json(items, stream, money)
    raise ValueError(f"unknown format '{fmt}': use {' or '.join(FORMATS)}")


def to_file(items: Iterator[ExportRow], path: str | os.PathLike, fmt: str, money: Money | None = None) -> int:
    """Write to a temporary file beside `path`, then put it in place: a failed export leaves no half file
    (and an existing file as it was). A symbolic link at `path` is replaced itself, never followed to a
    regular file (a link planted in /tmp must not turn an export into "overwrite any file of yours"); a
    link to a device or pipe (/dev/stdout) is written through. What is not a regular file (a device, a
    pipe) is opened without blocking and written to as it is, never replaced: a pipe nobody reads is an
    error, not a hang. The number of rows written; a path that cannot be written raises a TrayburnError
    naming it."""
    target = Path(path)
    try:
        st = _stat(target)
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise CantWrite(f"cannot write {path}: it is a folder; give a file name (e.g. {Path(path) / ('calls.' + fmt)})")
    try:
        if st is not None and not stat.S_ISREG(st.st_mode):
            fd = _open_special(target, path)
            if fd is not None:
                with open(fd, "w", encoding="utf-8", newline="") as stream:
                    return write(items, stream, fmt, money)
        return _replace(items, target, fmt, money)
    except OSError as exc:
        raise _cannot_write(path, exc) from None


def _stat(target: Path) -> os.stat_result | None:
    """What `target` is: followed only when it is a link to something that is not a regular file (a
    device, a pipe); a link to a regular file, or a dangling one, is the link itself (None: nothing)."""
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return None
    if not stat.S_ISLNK(st.st_mode):
        return st
    try:
        followed = os.stat(target)
    except (FileNotFoundError, NotADirectoryError):
        return None  # dangling: the link itself is replaced, nothing is created where it points
    return None if stat.S_ISREG(followed.st_mode) else followed


def _open_special(target: Path, path: str | os.PathLike) -> int | None:
    """A device or pipe opened for writing without waiting for a reader (then blocking again, so a slow
    reader is waited for); None when it turned out a regular file (replaced as one)."""
    try:
        fd = os.open(target, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a pipe with no reader (or a device with nothing behind it)
            raise CantWrite(f"cannot write {path}: nothing is reading from it; start the reader first") from None
        raise
    if stat.S_ISREG(os.fstat(fd).st_mode):  # replaced by a file since the check: replaced as a file
        os.close(fd)
        return None
    os.set_blocking(fd, True)
    return fd


def _replace(items: Iterator[ExportRow], target: Path, fmt: str, money: Money | None) -> int:
    """The temp file renamed over `target` itself: rename never follows a link at the new name."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as stream:
            n = write(items, stream, fmt, money)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return n


def _cannot_write(path: str | os.PathLike, exc: OSError) -> TrayburnError:
    """The export's own words for an OS error: the path the person gave (never the temporary file's name),
    the reason, and what to do; the exit code of its kind (73 for a folder missing or not writable)."""
    folder = Path(path).parent
    if isinstance(exc, FileNotFoundError | NotADirectoryError) and not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        return CantWrite(f"cannot write {path}: {folder} {what}; create that folder or give another path")
    if isinstance(exc, PermissionError):
        return CantWrite(f"cannot write {path}: permission denied; give a path in a folder you can write")
    return TrayburnError(f"cannot write {path}: {exc.strerror or exc}")


def _extra(money: Money) -> bool:
    return money.currency != "USD"


def write_csv(items: Iterator[ExportRow], stream: TextIO, money: Money) -> int:
    out = csv.writer(stream)  # the excel dialect: RFC 4180 quoting, \r\n line ends
    out.writerow(FIELDS + (("cost", "currency") if _extra(money) else ()))
    n = 0
    safe = _safe
    for r in items:
        cells = [
            safe(r.time),
            safe(r.session_id),
            safe(r.title),
            safe(r.project),
            safe(r.source),
            safe(r.agent),  # read from the messages file: anyone's text
            safe(r.model),
            safe(r.provider),
            r.input_tokens,
            r.output_tokens,
            r.cache_read_tokens,
            r.cache_write_tokens,
            "" if r.cost_usd is None else repr(r.cost_usd),
            "true" if r.estimated else "false",
            safe(r.agent_name),
            safe(r.tools),
            r.billing,
            "" if r.api_value_usd is None else repr(r.api_value_usd),
            safe(r.app),
        ]
        if _extra(money):
            value = money.amount(r.cost_usd)
            cells += ["" if value is None else repr(value), safe(money.shown)]
        out.writerow(cells)
        n += 1
    return n


def _safe(text: str) -> str:
    """A cell a spreadsheet shows as text, never runs as a formula, and a terminal shows rather than obeys
    (`trayburn export` prints to one by default): what `files.clean` removes from every line trayburn
    prints (ESC, BEL, other controls but tab and newline, bidirectional overrides) is removed here too."""
    text = clean(text)
    return "'" + text if text[:1] in FORMULA_STARTS else text


def _json_line(obj: dict) -> str:
    """One object as JSON, with what a terminal would obey escaped (json.dumps escapes C0 controls but
    writes C1 controls, DEL and the bidirectional overrides as they are): the value is kept whole, as
    `\\u009b`, and never reaches a terminal raw."""
    return CONTROLS.sub(lambda m: f"\\u{ord(m[0]):04x}", json.dumps(obj, ensure_ascii=False))


def write_json(items: Iterator[ExportRow], stream: TextIO, money: Money) -> int:
    """A JSON array, one object per line, written as the rows come."""
    n = 0
    stream.write("[")
    for r in items:
        obj = r._asdict()
        if _extra(money):
            obj.update(money.to_json(r.cost_usd))
        stream.write(("\n" if n == 0 else ",\n") + _json_line(obj))
        n += 1
    stream.write("\n]\n" if n else "]\n")
    return n
