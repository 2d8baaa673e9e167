"""The command line's grammar: every command, its options and their help (`cli.main` runs them)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import date, datetime
from typing import TYPE_CHECKING, NoReturn

from . import __version__
from .errors import UsageError

if TYPE_CHECKING:
    from .period import Period


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, and main() returns instead of the parser exiting
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def _named(text: str) -> Period:
    from . import period

    try:
        return period.named(text, datetime.now().date())
    except period.BadPeriod as exc:
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
            options(sub.add_parser(name, parents=[common], help=text))
    return p


def _today(s: argparse.ArgumentParser) -> None:
    s.add_argument("--date", type=_date, help="YYYY-MM-DD, today or yesterday")


def _sessions(s: argparse.ArgumentParser) -> None:
    s.add_argument("--since", type=_first_day, metavar="D", help=f"first day: {PERIOD_HELP}")
    s.add_argument("--until", type=_last_day, metavar="D", help="last day, same forms")
    s.add_argument("--all", action="store_true", help="every session ever seen")


def _report(s: argparse.ArgumentParser) -> None:
    _period_options(s)
    s.add_argument("--by", choices=BY, default="day", help="how rows are grouped (default: day)")


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
    s.add_argument("--provider", help="the route it was called on (Cline's provider), e.g. openrouter, cline-pass")


def _config(s: argparse.ArgumentParser) -> None:
    s.add_argument("action", choices=["path", "show", "set", "unset"])
    s.add_argument("key", nargs="?")
    s.add_argument("value", nargs="?")


def _summary(s: argparse.ArgumentParser) -> None:
    s.add_argument("session_id", nargs="?")
    s.add_argument("--date", type=_date)
    s.add_argument("--period", choices=("day", "week", "month"), help="the day, week or month holding --date")


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
    "doctor": ("where trayburn looks, what it found, what is wrong", _none),
    "prices": ("which price applies to a model id, and where it came from", _prices),
    "config": ("the settings file: path, show, set KEY VALUE, unset KEY", _config),
    "summary": ("open the summary window (a day, a period, one session)", _summary),
    "autostart": ("start the tray at login: on, off or status", _autostart),
    "demo": ("the tray (or --json figures) on recorded sessions, as if today", _demo),
    "tray": ("start the tray app (the default)", _none),
}


BY = ("day", "week", "month", "project", "model", "session", "source", "machine")
PERIOD_HELP = "YYYY-MM-DD, today, yesterday, 7d, 30d, week, last-week, month or last-month"


def _period_options(s: argparse.ArgumentParser) -> None:
    s.add_argument("--since", metavar="D", help=f"first day: {PERIOD_HELP} (default: the 1st of the month)")
    s.add_argument("--until", metavar="D", help="last day, same forms (default: today)")


def period_of(args: argparse.Namespace) -> Period:
    """The --since/--until of `report` and `export` as a period (a usage error if they do not parse)."""
    from . import period

    try:
        return period.between(args.since, args.until, datetime.now().date())
    except period.BadPeriod as exc:
        raise UsageError(str(exc)) from None
