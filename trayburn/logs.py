"""Logging to a rotating file in the platform log dir. Nothing is printed on the GUI path.

The log (it names folders and sessions) is private: its folder 0700, its files 0600, never opened
through a symbolic link. Where it cannot be written, logging goes to stderr (or nowhere) and the
reason is the first thing logged: a log problem never stops the app.
"""

from __future__ import annotations

import io
import logging
import logging.handlers
import os
import sys
from pathlib import Path

from . import fsutil, paths

FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """RotatingFileHandler whose files are opened through fsutil (0600, no link followed)."""

    def _open(self) -> io.TextIOWrapper:  # the base class's hook for each (re)open
        fd = fsutil.open_private(self.baseFilename, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        return open(fd, "a", encoding=self.encoding, errors=self.errors)  # noqa: SIM115 (the handler closes it)


def setup(level: int = logging.INFO, log_dir: Path | None = None) -> Path:
    path = (log_dir or paths.log_dir()) / "trayburn.log"
    handler: logging.Handler
    problem = None
    try:
        fsutil.private_dir(path.parent)
        handler = PrivateRotatingFileHandler(path, maxBytes=1_000_000, backupCount=3, encoding="utf-8")
    except OSError as exc:
        problem = f"cannot write the log {path}: {exc}"
        handler = logging.StreamHandler(sys.stderr) if sys.stderr is not None else logging.NullHandler()
    handler.setFormatter(logging.Formatter(FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for noisy in ("PIL", "genai_prices", "httpx2"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    if problem:
        logging.getLogger(__name__).warning("%s", problem)
    return path
