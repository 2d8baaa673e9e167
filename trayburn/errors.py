"""One error base for the whole of trayburn, each kind with its exit code (documented in the README). Never
printed here: the core raises these, and `cli.main` turns any of them into one line on stderr (or, with --json,
one JSON object on stderr) and its exit code.

Codes follow BSD's sysexits where one fits.
"""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    OK = 0
    PROBLEMS = 1  # the command ran and found something wrong (doctor's verdict); or an unexpected I/O error
    USAGE = 2  # the command line is wrong (unknown option, bad date, --until before --since)
    NOT_FOUND = 4  # what was asked for is not there (a session id the ledger does not have)
    CANNOT_SHOW = 4  # the tray or the window cannot be shown here (no display, no session bus): as not there
    LEDGER = 70  # the ledger cannot be used (written by a newer trayburn, …): EX_SOFTWARE
    CANT_WRITE = 73  # a state or settings folder that cannot be created or written: EX_CANTCREAT
    IO_ERROR = 74  # the disk holding the ledger is full, or failed a read or write: EX_IOERR
    BUSY = 75  # another process held the ledger's lock too long; try again: EX_TEMPFAIL
    SETTINGS = 78  # the settings file is broken, or a value given for it is refused: EX_CONFIG
    INTERRUPTED = 130  # Ctrl-C


class TrayburnError(Exception):
    """Something a person can act on; the message says what and what to do."""

    kind = "error"
    code = Exit.PROBLEMS


class UsageError(TrayburnError):
    kind, code = "usage", Exit.USAGE


class NotFound(TrayburnError):
    kind, code = "not_found", Exit.NOT_FOUND


class SettingsRefused(TrayburnError):
    """The settings file (or a value for it) cannot be used; wraps settings.SettingsError at the edge."""

    kind, code = "settings", Exit.SETTINGS


class CantWrite(TrayburnError):
    kind, code = "cant_write", Exit.CANT_WRITE
