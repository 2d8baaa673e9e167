"""One tray per user: an exclusive lock on a file in the state dir, held for the process's life.

The lock file is private (0600) and never opened through a link: a link planted in its place is
refused (fsutil.Refused, an OSError with a message), never truncated.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import IO

from . import fsutil

EXIT_ALREADY_RUNNING = 3


class AlreadyRunning(Exception):
    def __init__(self, pid: str):
        super().__init__(
            f"the tray is already running (pid {pid or 'unknown'}); look for its icon, "
            "or use `trayburn today` in a terminal"
        )
        self.pid = pid


class InstanceLock:
    def __init__(self, path: Path):
        self.path = path
        self.fh: IO[str] | None = None

    def acquire(self) -> InstanceLock:
        fsutil.private_dir(self.path.parent)
        fd = fsutil.open_private(self.path, os.O_RDWR | os.O_CREAT)
        fh = os.fdopen(fd, "r+")  # held open while the lock lives
        try:
            _lock(fh)
        except OSError:
            fh.seek(0)
            pid = fh.read().strip()
            fh.close()
            raise AlreadyRunning(pid) from None
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        self.fh = fh
        return self

    def release(self) -> None:
        if self.fh:
            self.fh.close()
            self.fh = None


def _lock(fh: IO[str]) -> None:
    if sys.platform == "win32":
        import msvcrt

        fh.seek(0)
        msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)
    else:
        import fcntl

        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
