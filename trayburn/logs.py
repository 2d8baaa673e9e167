"""Logging to a rotating file in the platform log dir. Nothing is printed on the GUI path."""

from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path

from . import paths


def setup(level: int = logging.INFO, log_dir: Path | None = None) -> Path:
    folder = log_dir or paths.log_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "trayburn.log"
    handler = logging.handlers.RotatingFileHandler(path, maxBytes=1_000_000, backupCount=3, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for noisy in ("PIL", "genai_prices", "httpx2"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    return path
