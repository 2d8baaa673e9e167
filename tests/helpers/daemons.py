"""Daemons for the test desktop: read the line a daemon writes once it is ready; stop a process group."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time

from .xwindows import DesktopError


def read_line(fd: int, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    data = b""
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0:
            raise DesktopError(f"no ready line within {timeout:g}s")
        readable, _, _ = select.select([fd], [], [], left)
        if readable:
            chunk = os.read(fd, 4096)
            if not chunk:  # writer gone: the process died
                break
            data += chunk
    return data.decode().strip()


def kill_group(proc: subprocess.Popen, timeout: float) -> int:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            return proc.wait(timeout)
        except subprocess.TimeoutExpired:
            continue
    return proc.wait()
