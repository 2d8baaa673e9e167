"""The command line's grammar: every command, its options and their help (`cli.main` runs them)."""

from __future__ import annotations

import argparse
from datetime import date, datetime
from typing import TYPE_CHECKING, NoReturn

from . import __version__
from .errors import UsageError

if TYPE_CHECKING:
    from .period import Period


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, and main() returns instead of the parser exiting
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def _date(text: str) -> date:
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a date (use YYYY-MM-DD)") from None
    if not 1970 <= day.year <= 9998:
        raise argparse.ArgumentTypeError(f"'{text}' is out of range (years 1970 to 9998)")
    return day


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


def build_parser() -> argparse.ArgumentParser:
    common = _common(suppress=True)
    p = _Parser(
        prog="trayburn",
        parents=[_common(suppress=False)],
        description="What the Cline CLI costs you. With no command, starts the tray app.",
    )
    p.add_argument("--version", action="version", version=f"trayburn {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    s = sub.add_parser("today", parents=[common], help="one day's spend (default: today)")
    s.add_argument("--date", type=_date, help="YYYY-MM-DD")

    s = sub.add_parser("sessions", parents=[common], help="per-session summaries (default: today's)")
    s.add_argument("--since", type=_date, help="first day, YYYY-MM-DD")
    s.add_argument("--until", type=_date, help="last day, YYYY-MM-DD")
    s.add_argument("--all", action="store_true", help="every session ever seen")

    s = sub.add_parser("report", parents=[common], help="a period's spend by day, week, month, project, model…")
    _period_options(s)
    s.add_argument("--by", choices=BY, default="day", help="how rows are grouped (default: day)")

    s = sub.add_parser("export", parents=[common], help="a period's calls, one row each, as CSV or JSON")
    _period_options(s)
    s.add_argument("--format", choices=("csv", "json"), default="csv", help="default: csv")
    s.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of the standard output")

    s = sub.add_parser("session", parents=[common], help="one session in full, with its calls")
    s.add_argument("id")

    sub.add_parser("doctor", parents=[common], help="where trayburn looks, what it found, what is wrong")

    s = sub.add_parser("prices", parents=[common], help="which price applies to a model id, and where it came from")
    s.add_argument(
        "models",
        nargs="*",
        metavar="MODEL",
        help="a model id as Cline writes it, e.g. z-ai/glm-4.6; none: every model seen",
    )
    s.add_argument("--provider", help="the route it was called on (Cline's provider), e.g. openrouter, cline-pass")

    s = sub.add_parser("config", parents=[common], help="the settings file: path, show, set KEY VALUE, unset KEY")
    s.add_argument("action", choices=["path", "show", "set", "unset"])
    s.add_argument("key", nargs="?")
    s.add_argument("value", nargs="?")

    s = sub.add_parser("summary", parents=[common], help="open the summary window (a day, a period, one session)")
    s.add_argument("session_id", nargs="?")
    s.add_argument("--date", type=_date)
    s.add_argument("--period", choices=("day", "week", "month"), help="the day, week or month holding --date")

    s = sub.add_parser("autostart", parents=[common], help="start the tray at login: on, off or status")
    s.add_argument("action", choices=["on", "off", "status"])

    s = sub.add_parser("demo", parents=[common], help="the tray (or --json figures) on recorded sessions, as if today")
    s.add_argument("--window", action="store_true", help="open the summary window instead of the tray")

    sub.add_parser("tray", parents=[common], help="start the tray app (the default)")
    return p


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
