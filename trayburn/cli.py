"""The command line, `trayburn today|sessions|report|export|session|prices|doctor|config|summary|autostart|demo`:
its grammar (every command, its options and their help), each command run on the engine, and the one error
handler (`main`). Never imports a GUI toolkit at the top (only the commands that need one import it) and never
computes a figure.

Commands build data with the engine; render.py writes it as text, or it is printed as JSON. With no command,
the tray starts.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import logging
import os
import re
import sqlite3
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, NoReturn

from . import __version__, paths, render, settings
from .errors import CantWrite, Exit, NotFound, SettingsRefused, TrayburnError, UsageError
from .files import CONTROLS, clean
from .words import plural

if TYPE_CHECKING:
    from .figures.periods import Period


class _Formatter(argparse.HelpFormatter):
    """argparse's, its width found as `shutil.get_terminal_size` finds it ($COLUMNS, else the terminal's, else
    80) without importing shutil: argparse makes one for every option it is given, and shutil brings its three
    compressors (bz2, lzma, zlib) into every start."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)


def _columns() -> int:
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **{"formatter_class": _Formatter, **kwargs})

    def error(self, message: str) -> NoReturn:  # one line, and main() returns instead of the parser exiting
        raise UsageError(f"{_choice(message)} (see `{self.prog} --help`)")


def _choice(message: str) -> str:
    """argparse's "argument action: invalid choice: 'x' (choose from 'on', 'off')" in words: "'x' is not one of:
    on, off" (an option keeps its name: "--by: 'x' is not one of: …")."""
    found = re.fullmatch(r"argument (\S+): invalid choice: (.+) \(choose from (.+)\)", message)
    if found is None:
        return message
    name, given, choices = found.groups()
    listed = ", ".join(c.strip().strip("'") for c in choices.split(","))
    return f"{name + ': ' if name.startswith('-') else ''}{given} is not one of: {listed}"


def _named(text: str) -> Period:
    from .figures import periods

    try:
        return periods.named(text, datetime.now().date())
    except periods.BadPeriod as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _date(text: str) -> date:
    """One day: YYYY-MM-DD, today or yesterday."""
    named = _named(text)
    if named.since != named.until:
        raise argparse.ArgumentTypeError(f"'{text}' is more than a day (use YYYY-MM-DD, today or yesterday)")
    return named.since


def _first_day(text: str) -> date:
    """The first day of what `text` names (a date, today, 7d, week, last-month…), as `report --since` reads it."""
    return _named(text).since


def _last_day(text: str) -> date:
    return _named(text).until


def _common(suppress: bool) -> _Parser:
    """The options every command takes. A command's copy has no defaults, so that
    `trayburn --json today` keeps the --json given before the command."""
    unset = argparse.SUPPRESS if suppress else None
    common = _Parser(add_help=False)
    common.add_argument(
        "--config", metavar="FILE", default=unset, help="settings file (default: TRAYBURN_CONFIG or the platform's)"
    )
    common.add_argument(
        "--state-dir",
        metavar="DIR",
        default=unset,
        help="where the ledger lives (default: TRAYBURN_STATE_DIR or the platform's)",
    )
    common.add_argument(
        "--json", action="store_true", default=unset if suppress else False, help="print JSON instead of a table"
    )
    return common


def command_of(argv: list[str]) -> str | None:
    """The command `argv` names, found as argparse would (the first word that is not an option or an
    option's value); None for none, `--help` or `--version` before it, or a word that is no command."""
    words = iter(argv)
    for word in words:
        if word in ("--config", "--state-dir"):
            next(words, None)
        elif word.startswith("-"):
            if word in ("-h", "--help", "--version") or not word.startswith("--"):
                return None
        else:
            return word if word in GRAMMAR else None
    return None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole grammar; `only`: with that command alone (what running it needs: every command's help
    costs 6 ms of each start)."""
    common = _common(suppress=True)
    p = _Parser(
        prog="trayburn",
        parents=[_common(suppress=False)],
        description="What the Cline CLI costs you. With no command, starts the tray app.",
    )
    p.add_argument("--version", action="version", version=f"trayburn {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name, (text, options) in GRAMMAR.items():
        if only is None or only == name:
            options(sub.add_parser(name, parents=[common], help=text, description=text[:1].upper() + text[1:] + "."))
    return p


def _today(s: argparse.ArgumentParser) -> None:
    s.add_argument("--date", type=_date, help="YYYY-MM-DD, today or yesterday")


def _sessions(s: argparse.ArgumentParser) -> None:
    s.add_argument("--since", type=_first_day, metavar="D", help=f"first day: {PERIOD_HELP}")
    s.add_argument("--until", type=_last_day, metavar="D", help="last day, same forms")
    s.add_argument("--all", action="store_true", help="every session ever seen")


def _report(s: argparse.ArgumentParser) -> None:
    _period_options(s)
    s.add_argument("--by", choices=BY + ATTRIBUTED, default="day", help="how rows are grouped (default: day)")
    s.add_argument("--reprice", metavar="MODEL", help="also what the period's calls would cost on MODEL (a what-if)")


def _export(s: argparse.ArgumentParser) -> None:
    _period_options(s)
    s.add_argument("--format", choices=("csv", "json"), help="default: csv, or json with --json")
    s.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of the standard output")


def _session(s: argparse.ArgumentParser) -> None:
    s.add_argument("id")


def _prices(s: argparse.ArgumentParser) -> None:
    s.add_argument(
        "models",
        nargs="*",
        metavar="MODEL",
        help="a model id as Cline writes it, e.g. z-ai/glm-4.6; none: every model seen",
    )
    s.add_argument(
        "--route",
        "--provider",
        dest="provider",
        help="the route it was called on (Cline's provider), e.g. openrouter, cline-pass: how such a call is billed",
    )


def _config(s: argparse.ArgumentParser) -> None:
    s.add_argument("action", choices=["path", "show", "set", "unset"])
    s.add_argument("key", nargs="?")
    s.add_argument("value", nargs="?")


def _summary(s: argparse.ArgumentParser) -> None:
    s.add_argument("session_id", nargs="?")
    s.add_argument("--date", type=_date)
    s.add_argument("--period", choices=("day", "week", "month"), help="the day, week or month holding --date")


def _status(s: argparse.ArgumentParser) -> None:
    s.add_argument("--format", choices=STATUS_FORMATS, help="default: plain, or json with --json")
    s.add_argument("--watch", action="store_true", help="keep running: a new line whenever the figure changes")
    s.add_argument("--project", metavar="P", help="measure against project P's budgets (as `report --by project`)")


def _budget(s: argparse.ArgumentParser) -> None:
    s.add_argument("action", choices=["check"])
    s.add_argument("--project", metavar="P", help="only project P's budgets (as `report --by project` names it)")


def _autostart(s: argparse.ArgumentParser) -> None:
    s.add_argument("action", choices=["on", "off", "status"])


def _demo(s: argparse.ArgumentParser) -> None:
    s.add_argument("--window", action="store_true", help="open the summary window instead of the tray")


def _none(s: argparse.ArgumentParser) -> None:
    pass


# Every command: its help line and its options, in the order `trayburn --help` lists them.
GRAMMAR: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "today": ("one day's spend (default: today)", _today),
    "sessions": ("per-session summaries (default: today's)", _sessions),
    "report": ("a period's spend by day, week, month, project, model…", _report),
    "export": ("a period's calls, one row each, as CSV or JSON", _export),
    "session": ("one session in full, with its calls", _session),
    "status": ("today's spend and pace in one line, for a status bar or a prompt", _status),
    "budget": ("budget check: exit 0 under, 1 from 80 %%, 2 over, and one line saying which", _budget),
    "doctor": ("where trayburn looks, what it found, what is wrong", _none),
    "prices": ("which price applies to a model id, and where it came from", _prices),
    "config": ("the settings file: path, show, set KEY VALUE, unset KEY", _config),
    "summary": ("open the summary window (a day, a period, one session)", _summary),
    "autostart": ("start the tray at login: on, off or status", _autostart),
    "demo": ("the tray (or --json figures) on recorded sessions, as if today", _demo),
    "tray": ("start the tray app (the default)", _none),
}


BY = ("day", "week", "month", "project", "model", "session", "source", "machine")
STATUS_FORMATS = ("plain", "json", "waybar", "polybar", "i3blocks")  # (status.FORMATS: imported only to run it)
ATTRIBUTED = ("tool", "agent")  # figures.attribution's: a call's cost by the tools it used, by the agent that made it
PERIOD_HELP = "YYYY-MM-DD, today, yesterday, 7d, 30d, week, last-week, month or last-month"


def _period_options(s: argparse.ArgumentParser) -> None:
    s.add_argument("--since", metavar="D", help=f"first day: {PERIOD_HELP} (default: the 1st of the month)")
    s.add_argument("--until", metavar="D", help="last day, same forms (default: today)")


def period_of(args: argparse.Namespace) -> Period:
    """The --since/--until of `report` and `export` as a period (a usage error if they do not parse)."""
    from .figures import periods

    try:
        return periods.between(args.since, args.until, datetime.now().date())
    except periods.BadPeriod as exc:
        raise UsageError(str(exc)) from None


def main(argv: list[str] | None = None) -> int:
    if argv is None:  # the program itself (not a caller in a longer process, as the tests are)
        # What is loaded by now (modules, classes, functions) lives as long as the process: out of the cyclic
        # collector's sight, so its passes over the command's many short-lived objects do not walk it again and
        # again (a warm `today` at 5,000 sessions: 2 % of its instructions, counted by callgrind). And a pass
        # once 20,000 objects are new rather than 700: a command makes many and keeps few (its cycles are
        # still collected, a few MB later; warm `today`: 1.6 % fewer instructions).
        gc.freeze()
        gc.set_threshold(20_000, 10, 10)
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["_dialog"]:  # the tray's dialogs, in a child process (the frozen app has no -m)
        from .tray import dialogs  # (a GUI toolkit: only for the tray's commands)

        return dialogs.main(argv[1:])
    as_json = "--json" in argv
    paths.absolute_env(os.environ)
    command = command_of(argv)
    warnings = _Warnings() if command not in GUI_COMMANDS else None
    failed = True  # until a command returns (an error, Ctrl-C, a --help)
    try:
        args = build_parser(only=command).parse_args(argv)
        as_json = args.json
        for option in ("config", "state_dir"):  # absolute, as the variables: children run in the home folder
            if getattr(args, option, None) and not str(getattr(args, option)).startswith("~"):
                setattr(args, option, os.path.abspath(getattr(args, option)))
        _settings_file_given(args)
        code = _run(args)
        failed = False
        return code
    except SystemExit as exc:  # --help and --version print and stop
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        return Exit.INTERRUPTED
    except BrokenPipeError:
        return Exit.OK
    except (TrayburnError, settings.SettingsError, OSError, sqlite3.Error) as exc:
        return _fail(as_error(exc), as_json)
    finally:
        if _OPENED:  # the figures out before the close (which may make the day's backup: ~0.35 s)
            with contextlib.suppress(OSError, ValueError):
                sys.stdout.flush()
        while _OPENED:  # the ledger closed when the command ends, not whenever its engine is collected
            _OPENED.pop().close()
        _NOTICES.clear()
        if warnings is not None:
            warnings.say(as_json, failed)


def _settings_file_given(args: argparse.Namespace) -> None:
    """A --config naming no file is a mistyped path (it was read as "no settings" without a word); `config`
    writes a new file where it is told, and `demo` makes its own."""
    given = getattr(args, "config", None)
    if given and args.command not in ("config", "demo") and not os.path.exists(os.path.expanduser(given)):
        raise UsageError(
            f"--config {given}: no such settings file (leave --config out for yours; "
            "`trayburn config set KEY VALUE --config FILE` makes a new one)"
        )


def _run(args: argparse.Namespace) -> int:
    """The command; when a query of it meets a damaged page of the ledger, the ledger is checked and rebuilt
    (its pages, its backups, then Cline's files) and the command runs once more on it, so the command that met
    the damage answers. Met again after the rebuild: LedgerDamaged, exit 70."""
    from .ledger import LedgerDamaged  # (imported with the engine anyway by every command that can meet it)

    try:
        return COMMANDS[args.command or "tray"](args)
    except LedgerDamaged as exc:
        if not _OPENED:
            raise
        log.warning("%s", exc)
        while _OPENED:
            engine = _OPENED.pop()
            try:
                engine.ledger.repair()
                if engine.ledger.notice and engine.ledger.notice not in _NOTICES:
                    _NOTICES.append(engine.ledger.notice)
                    _say(engine.ledger.notice, args.json, {"notice": engine.ledger.notice})
            finally:
                engine.close()
        try:
            return COMMANDS[args.command or "tray"](args)
        except LedgerDamaged as again:
            raise LedgerDamaged(f"{again}; it was still damaged after a rebuild (see `trayburn doctor`)") from None


log = logging.getLogger("trayburn.cli")

GUI_COMMANDS = (None, "tray", "summary", "demo")  # they log to trayburn's log file (logs.setup)
_SAID: set[str] = set()  # what this command said on stderr already (a fault, an error)


class _Warnings(logging.Handler):
    """The warnings trayburn's modules log during a command (a settings value refused, a ledger that cannot
    be written), each said once at its end, as trayburn says things: `trayburn: warning: …`, or with --json
    one JSON object a line. Without it they reached stderr raw, repeated, and as text under --json."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []
        self.logger = logging.getLogger("trayburn")
        self.logger.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message not in self.messages:
            self.messages.append(message)

    def say(self, as_json: bool, failed: bool) -> None:
        """Unless the command failed: its error is the one line that matters (a state folder that cannot be
        made also makes the prices cache unwritable, say)."""
        self.logger.removeHandler(self)
        for message in [] if failed else self.messages:
            if not any(message in said for said in _SAID):
                _say(f"warning: {message}", as_json, {"warning": message})
        _SAID.clear()


def _say(line: str, as_json: bool, doc: dict[str, Any]) -> None:
    _SAID.add(line)
    if as_json:
        print(render.as_json({**doc, "version": __version__}, indent=None), file=sys.stderr)
    else:
        print(clean(f"trayburn: {line}"), file=sys.stderr)


def as_error(exc: Exception) -> TrayburnError:
    """Errors from outside trayburn's own base (the settings module, the OS, SQLite) as one of its kinds."""
    if isinstance(exc, TrayburnError):
        return exc
    if isinstance(exc, settings.SettingsError):
        return SettingsRefused(str(exc))
    if isinstance(exc, PermissionError | FileExistsError | NotADirectoryError | IsADirectoryError):
        return CantWrite(str(exc))
    return TrayburnError(str(exc))  # an unwritable disk, a ledger SQLite cannot open


def _fail(err: TrayburnError, as_json: bool) -> int:
    """One line on stderr; with --json, one JSON object (kind, message, exit code, trayburn's version)."""
    _say(str(err), as_json, {"error": err.kind, "message": str(err), "exit_code": int(err.code)})
    return int(err.code)


# A command that needs the figures from one day on reads the sessions that changed since first, then the
# rest of a cold ledger's history for this long (the next command continues it).
HISTORY_SLICE_S = 0.1
_OPENED: list[Any] = []  # engines a command opened, closed when it ends (`main`)


def _engine(args: argparse.Namespace, refresh: bool = True, since: date | None = None) -> Any:
    """The engine, refreshed completely, or (`since`) enough for the figures from that day on."""
    from .engine import Engine  # (--help, config and autostart never open the ledger: 30+ ms of imports)

    engine = Engine(args.config, args.state_dir)
    _OPENED.append(engine)
    if refresh and since is not None:
        engine.refresh_day(since, HISTORY_SLICE_S)
    elif refresh:
        engine.refresh()
    _rebuild_said(args, engine)
    engine.forget_listings()  # (one refresh per command: the figures then need none of it)
    return engine


def _rebuild_said(args: argparse.Namespace, engine: Any) -> None:
    """A ledger rebuilt by this command (at open, in its refresh, or after a query met damage): what came back
    and from where, then what is still missing after the refresh (said as warnings: the figures stand)."""
    notice = engine.ledger.notice
    if notice and notice not in _NOTICES:
        _NOTICES.append(notice)
        _say(notice, args.json, {"notice": notice})
    rebuilt = engine.ledger.rebuilt() if _NOTICES else None
    if rebuilt is not None and rebuilt.here:
        line = rebuilt.line()
        if line not in _NOTICES:
            _NOTICES.append(line)
            _say(line, args.json, {"notice": line, "lost_calls": rebuilt.lost, "lost_by_day": dict(rebuilt.days)})


_NOTICES: list[str] = []  # what this process said of a rebuild already


def _emit(args, data, text: str) -> int:
    if args.json:
        try:
            out = render.as_json(_cleaned(data))
        except ValueError as exc:  # a NaN or Infinity got through: refuse to print invalid JSON
            raise TrayburnError(f"a figure is not a finite number ({exc}); please report this") from None
        print(out)
    else:
        print(clean(text))  # names and paths from files never reach the terminal raw
    return 0


def _emit_list(items: Iterable[dict], doc: dict | None = None, key: str = "") -> int:
    """A JSON list printed as it is made (`render.json_list`), each item cleaned as `_emit` cleans; with `doc`,
    as its `key`."""
    rows = (_cleaned(item) for item in items)
    try:
        for chunk in render.json_list(rows) if doc is None else render.json_with_list(_cleaned(doc), key, rows):
            sys.stdout.write(chunk)
    except ValueError as exc:  # a NaN or Infinity got through: the list stops there, and says why
        raise TrayburnError(f"a figure is not a finite number ({exc}); please report this") from None
    print()
    return 0


def _cleaned(data: Any) -> Any:
    """JSON's strings cleaned as the text outputs are (`files.CONTROLS`: a C1 control such as U+009B, a
    bidirectional override such as U+202E), keys and values, at any depth; everything else as it is."""
    if isinstance(data, str):
        return CONTROLS.sub("", data)
    if isinstance(data, dict):
        return {_cleaned(k): _cleaned(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_cleaned(v) for v in data]
    return data


def _stale(args: argparse.Namespace, engine: Any, code: int, what: str = "the figures above are") -> int:
    """After the figures: a ledger that could not be written (a full disk…) is said, with its exit code."""
    fault = engine.fault
    if fault is None:
        return code
    line = f"{fault}; {what} as of the last refresh"
    _say(line, args.json, {"error": fault.kind, "message": line, "exit_code": int(fault.code), "stale": True})
    return int(fault.code)


def cmd_today(args) -> int:
    engine = _engine(args, since=args.date or datetime.now().date())
    (r, machines), money = engine.day_and_machines(args.date), engine.money()
    today = args.date in (None, datetime.now().date())
    pace = engine.pace(r.cost_usd) if today else None  # the pace is today's only
    text = render.day(r, money, pace) + render.machines_line(machines, args.date is None, money)
    data = {**r.to_json(), "machines": machines.to_json(), **_completeness(engine)}
    data.update(pace.to_json() if pace else {"burn_usd_per_hour": None, "projected_day_usd": None})
    text += render.incomplete_line(engine.progress)
    if not r.calls:  # (a day with no call: worth saying when trayburn has found no data at all)
        text += render.no_data_line(engine.health())
    return _stale(args, engine, _emit(args, _converted(data, money), text))


def _completeness(engine: Any) -> dict:
    """`complete`: every session's files were read (False while history is still being read: the figure
    covers the sessions read so far; a session whose files carry an older time may still hold calls of the
    day); `sessions_read`: [read, in all] meanwhile."""
    progress = engine.progress
    return {"complete": progress is None, "sessions_read": list(progress) if progress else None}


def cmd_sessions(args) -> int:
    today = datetime.now().date()
    if args.all and (args.since or args.until):
        raise UsageError("--all lists every session; leave out --since and --until, or --all")
    if args.all:
        since = until = None
    else:
        since = args.since or args.until or today
        until = args.until or max(since, today)
        if until < since:
            raise UsageError(f"--until {until} is before --since {since}")
    engine = _engine(args, since=since)
    money = engine.money()
    items = engine.sessions_listed(since, until)  # made one at a time (20,000 sessions: 60 MB as a list)
    if args.json:  # each row's JSON only when it is printed, and printed at once
        return _stale(args, engine, _emit_list(_converted(s.to_json(), money) for s in items))
    return _stale(args, engine, _emit(args, None, render.sessions(items, money)))


def cmd_report(args) -> int:
    period = period_of(args)
    engine = _engine(args, since=period.since)  # the period's files first; older history later
    period = _bounded(args, engine, period)
    money = engine.money()
    budgets: dict[str, dict] = {}
    rows: Iterable[dict] | None = None  # a history's rows, printed as they are made (20,000 sessions: 40 MB as dicts)
    if args.by in ATTRIBUTED:
        a = engine.attribution(period, args.by)
        data, text = a.to_json(), render.attribution(a, money)
    else:
        r = engine.history(period, args.by)
        budgets = _project_budgets(engine, r) if args.by == "project" else {}
        data, rows = replace(r, rows=[]).to_json(money), _history_rows(r, money, budgets)
        text = "" if args.json else render.history(r, money, budgets)
    cache = engine.cache_saved(period)
    data["cache"], line = cache.to_json(), render.cache_line(cache, money)
    text += f"\n{line}" if line else ""
    if args.reprice:
        what_if = engine.reprice(period, args.reprice)
        data["what_if"] = what_if.to_json()
        text += "\n" + render.what_if_line(what_if, money)
    if args.json and rows is not None:
        return _stale(args, engine, _emit_list(rows, data, "rows"))
    return _stale(args, engine, _emit(args, data, text))


def _history_rows(r: Any, money: Any, budgets: dict[str, dict]) -> Iterator[dict]:
    """A history's rows as JSON, each with its budget when some project has one."""
    for g in r.rows:
        row = g.to_json(money)
        if budgets:
            row["budget"] = budgets.get(row["key"])
        yield row


def _project_budgets(engine: Any, r: Any) -> dict[str, dict]:
    """Each project row's budget for the report's period (a day: its daily one; a month from its 1st: its
    monthly one), with the share of it spent; none for another period."""
    from .figures import budgets

    out = {}
    for g in r.rows:
        found = budgets.for_period(engine.settings.project_budgets.get(g.key, {}), r.period)
        if found is not None:
            which, usd = found
            out[g.key] = {"which": which, "budget_usd": usd, "share": round(g.totals.cost_usd / usd, 6)}
    return out


MAX_ROWS = 20_000  # rows of a report by day, week or month (55 years of days): a wider period is cut to its calls
_PER_ROW = {"day": 1, "week": 7, "month": 30}


def _bounded(args: argparse.Namespace, engine: Any, period: Period) -> Period:
    """A report by day, week or month lists every part of the period, those without calls too: over MAX_ROWS of
    them (1970 to 9998 by day is 2.9 million), the period is cut to the days that hold calls, and said; still
    over: a usage error (in time and memory, such a report is bounded either way)."""
    from .figures import periods

    per = _PER_ROW.get(args.by)
    if per is None or period.days // per <= MAX_ROWS:
        return period
    span = engine.ledger.counted_span()
    if span is not None:
        first, last = (datetime.fromtimestamp(ms / 1000).date() for ms in span)
        since, until = max(period.since, first), min(period.until, last)
        if since <= until and (until - since).days // per <= MAX_ROWS:
            line = f"{period.since} to {period.until} is over {MAX_ROWS:,} {args.by}s: the report covers {since} to"
            line += f" {until}, the {args.by}s that hold calls"
            _say(line, args.json, {"notice": line})
            return periods.Period(since, until)
    raise UsageError(
        f"{period.since} to {period.until} by {args.by} is over {MAX_ROWS:,} rows; narrow --since/--until or use"
        " --by month"
    )


def cmd_export(args) -> int:
    from .figures import export

    period = period_of(args)
    fmt = args.format or ("json" if args.json else "csv")
    engine = _engine(args, since=period.since)  # the period's files first; older history later
    if args.output and _inside(args.output, engine.state_dir):
        raise CantWrite(
            f"{args.output} is in trayburn's own folder {engine.state_dir} (its ledger lives there);"
            " export to a file elsewhere"
        )
    rows = engine.export_rows(period)
    if not args.output:
        export.write(rows, sys.stdout, fmt, engine.money())
        return _stale(args, engine, 0, "the calls exported are")
    n = export.to_file(rows, args.output, fmt, engine.money())
    print(
        f"trayburn: wrote {plural(n, 'call')} ({period.since} to {period.until}) to {args.output}",
        file=sys.stderr,
    )
    return _stale(args, engine, 0, "the calls exported are")


def cmd_status(args) -> int:
    from . import status  # (only this command draws a status line)

    fmt = args.format or ("json" if args.json else "plain")
    engine = _engine(args, since=datetime.now().date())
    if args.project is not None:
        _budgeted(engine, args.project)
    if args.watch:
        status.watch_lines(engine, fmt, args.project)
        return 0
    line = status.render(status.build(engine, args.project), fmt)
    print(line if fmt in ("json", "waybar") else clean(line))  # (JSON escapes what a terminal would obey)
    return _stale(args, engine, 0, "the figure above is")


BUDGET_EXITS = {0: 0, 80: 1, 100: 2}  # under, past the warning level (80 %), over (100 %)


def cmd_budget(args) -> int:
    """`budget check`: the budget nearest its end (or past it), one line, exit 0, 1 or 2."""
    from . import status
    from .figures import budgets

    engine = _engine(args, since=datetime.now().date())
    if args.project is not None:
        _budgeted(engine, args.project)
    today, money = datetime.now().date(), engine.money()
    spent = engine.totals(today, today).cost_usd
    worst = budgets.worst(status.states(engine, today, spent, args.project))
    if worst is None:
        data = {"state": "none", "budget": None, "exit_code": 0}
        _emit(args, data, "no budget set (daily_budget, monthly_budget or project_budgets in the settings)")
        return _stale(args, engine, 0, "the figure above is")
    word = {0: "under", 80: "warning", 100: "over"}[worst.level]
    pct = "over 10×" if worst.share > 10 else f"{worst.share * 100:.0f} %"
    line = f"{word}: {worst.name}, {money.cents(worst.spent_usd)} of {money.cents(worst.budget_usd)} ({pct})"
    code = BUDGET_EXITS[worst.level]
    _emit(args, {"state": word, "budget": worst.to_json(), "exit_code": code}, line)
    return _stale(args, engine, code, "the figure above is")


def _budgeted(engine: Any, project: str) -> None:
    """A project named for its budgets must have one: a typo never passes a check silently."""
    if not engine.settings.project_budgets.get(project):
        named = ", ".join(sorted(engine.settings.project_budgets)) or "none"
        raise NotFound(f"no budget is set for project '{project}' (projects with one: {named})")


def _inside(path: str, folder: Any) -> bool:
    """Whether `path` (followed through links) is in `folder`, trayburn's state folder."""
    target, home = os.path.realpath(path), os.path.realpath(folder)
    return target == home or target.startswith(home.rstrip(os.sep) + os.sep)


def cmd_session(args) -> int:
    engine = _engine(args)
    d = engine.session(args.id)
    if d is None:
        raise NotFound(f"no session '{args.id}' in the ledger (try `trayburn sessions --all`)")
    money = engine.money()
    return _stale(args, engine, _emit(args, _converted(d.to_json(), money), render.session(d, money)))


def _converted(data: dict, money) -> dict:
    """JSON keeps its USD figures; in another currency it adds `cost` and `currency` beside `cost_usd`."""
    if money.currency != "USD":
        data.update(money.to_json(data.get("cost_usd")))
    return data


def cmd_doctor(args: argparse.Namespace) -> int:
    engine = _engine(args)
    engine.check_integrity()  # the full check an ordinary open skips
    h = engine.health()
    h.extra["tray"] = _tray_check()  # never part of the verdict: doctor over SSH is about the data
    h.extra["tray_backend"] = h.extra["tray"]["backend"]
    unpriced = engine.unpriced_models()
    h.extra["unpriced_models"] = [
        {"name": m.name, "key": m.key, "ids": m.ids, "calls": m.unpriced_calls, "input": m.input, "output": m.output}
        for m in unpriced
    ]
    sync = engine.sync_health()
    h.extra["sync"] = sync.to_json()
    h.extra["task_places"] = engine.task_places_json()
    h.extra["kilo"] = engine.kilo_json()
    if h.kind == "ok" and sync.problem_line:  # every sync problem is a problem (its figures may be short)
        h.kind, h.ok, h.verdict = "sync_problems", False, f"Sharing has a problem: {sync.problem_line}"
    h.extra["backups"] = engine.ledger.backups()
    rebuilt = engine.ledger.rebuilt()
    h.extra["rebuilt"] = rebuilt.to_json() if rebuilt is not None else None
    if rebuilt is not None and not rebuilt.seen and h.kind in ("ok", "ledger_damaged"):  # said until shown once
        h.kind, h.ok = "ledger_rebuilt", False
        h.verdict = f"The ledger was rebuilt: {rebuilt.notice}; {rebuilt.line()}"
    _emit(args, h.to_json(), render.doctor(h, engine.loaded.exists, unpriced))
    if rebuilt is not None and not rebuilt.seen:
        engine.ledger.rebuild_seen()
    return Exit.OK if h.kind == "ok" else Exit.PROBLEMS


def cmd_prices(args) -> int:
    from .pricing import show

    if not args.models:  # every model the ledger has seen, the unpriced first
        if args.provider:
            raise UsageError("--route applies to the models named: give one, e.g. `trayburn prices z-ai/glm-4.6`")
        engine = _engine(args)
        models = engine.models_seen()
        return _stale(args, engine, _emit(args, {"models": [m.to_json() for m in models]}, render.models_seen(models)))
    if not all(m.strip() for m in args.models):
        raise UsageError("a model id cannot be empty: give one as Cline writes it, e.g. `trayburn prices z-ai/glm-4.6`")
    items = [show.describe(_engine(args, refresh=False).book, m, args.provider) for m in args.models]
    return _emit(args, items, show.render(items))


def _tray_check() -> dict[str, Any]:
    """Whether the tray can start here (`tray.host.can_start`, stdlib only, never hangs) and, if it
    can, the backend that would really run. Nothing imports gi or pystray without a display."""
    try:
        from .tray import host  # (a GUI toolkit: only for the tray's commands)
    except ImportError as exc:  # pragma: no cover - the tray package ships with trayburn
        return {"can_start": False, "kind": "unavailable", "message": str(exc), "backend": None}
    check = host.can_start()
    out: dict[str, Any] = {"can_start": not check.fatal, "kind": check.kind, "message": check.message, "backend": None}
    from .window import tk_missing

    out["window"] = tk_missing()  # None, or the line naming python3-tk
    if not check.fatal:
        try:
            out["backend"] = host.describe(host.choose_backend(sni=check.sni))
        except Exception as exc:  # a broken GUI stack must not break doctor
            out["backend"] = f"unavailable ({exc})"
    return out


def cmd_config(args) -> int:
    path = paths.config_file(args.config)
    if args.action == "path":
        return _emit(args, {"path": str(path)}, str(path))
    if args.action == "show":
        loaded = settings.load(path)
        if loaded.error:
            raise SettingsRefused(loaded.error)
        data = {k: getattr(loaded.settings, k) for k in settings.KEYS}
        text = _as_toml(data)
        text += "".join(f"\nwarning: {w}" for w in loaded.warnings)
        return _emit(args, {"path": str(path), "settings": data, "warnings": loaded.warnings}, f"# {path}\n{text}")
    if not args.key or (args.action == "set" and args.value is None):
        raise UsageError(f"usage: trayburn config {args.action} KEY{' VALUE' if args.action == 'set' else ''}")
    settings.update(path, args.key, args.value if args.action == "set" else None)
    return _emit(args, {"path": str(path), "ok": True}, f"{args.action} {args.key} in {path}")


def _as_toml(data: dict) -> str:
    """Settings as TOML a person could paste back; unset keys as comments (tables come last)."""
    import tomli_w  # (only `config` writes TOML)

    lines = []
    for key, value in data.items():
        if value is None or value == {}:
            lines.append(f"# {key} is unset")
        else:
            lines.append(tomli_w.dumps({key: value}).strip())
    return "\n".join(lines)


def cmd_summary(args) -> int:
    from . import window  # (the window's process: only for this command)

    return window.main(args)


def cmd_autostart(args) -> int:
    from .autostart import AutostartError, autostart_for

    a = autostart_for()
    try:
        if args.action == "on":
            a.enable()
        elif args.action == "off":
            a.disable()
    except AutostartError as exc:
        raise TrayburnError(str(exc)) from None
    s = a.status()
    data = {"enabled": s.enabled, "location": s.location, "detail": s.detail}
    return _emit(args, data, f"start at login: {'on' if s.enabled else 'off'} ({s.location})")


def cmd_demo(args) -> int:
    from . import demo

    with demo.prepared(args):
        if args.json:
            from .engine import Engine

            engine = Engine(args.config, args.state_dir, env={})
            engine.refresh()
            print(render.as_json(engine.day().to_json()))
            return 0
        if getattr(args, "window", False):
            args.session_id, args.date, args.period = None, None, None
            return cmd_summary(args)
        args.demo = True  # (what to suggest where it cannot be shown)
        return cmd_tray(args)


def cmd_tray(args) -> int:
    from .tray import start  # (a GUI toolkit: only for the tray's commands)

    return start.main(args)


def tray_main() -> int:
    """The gui-script entry point: the tray, with whatever options were given."""
    return main(["tray", *sys.argv[1:]])


COMMANDS = {
    "today": cmd_today,
    "sessions": cmd_sessions,
    "report": cmd_report,
    "export": cmd_export,
    "session": cmd_session,
    "status": cmd_status,
    "budget": cmd_budget,
    "doctor": cmd_doctor,
    "prices": cmd_prices,
    "config": cmd_config,
    "summary": cmd_summary,
    "autostart": cmd_autostart,
    "demo": cmd_demo,
    "tray": cmd_tray,
}
