"""The tray's child processes: summary windows and dialogs, started so they always start.

Each child runs `trayburn` through `launch.command()` in an explicit working folder, so a
`trayburn/` folder where the tray was started cannot shadow the package. A child that fails is
logged with its exit code and the end of its stderr, and `on_failure` tells the person.

The summary window is one per tray: while it runs, another "open" writes a line to its stdin
(`raise`, or `session ID`) and the window lifts itself (see `window/summary.py`).
"""

from __future__ import annotations

import contextlib
import logging
import subprocess
import threading
from collections.abc import Callable, Sequence
from typing import IO, Any, Protocol

from .. import platform as launch

log = logging.getLogger(__name__)
STDERR_TAIL = 600  # characters of a failed child's stderr kept for the log
DIALOG_TIMEOUT_S = 3600


class Process(Protocol):
    pid: int
    stdin: IO[bytes] | None
    stderr: IO[bytes] | None

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def terminate(self) -> None: ...

    def kill(self) -> None: ...


Popen = Callable[..., "Process | None"]
Failure = Callable[[str], None]


def _popen(argv: Sequence[str], **options: Any) -> Process:
    return subprocess.Popen(list(argv), **options)


class Children:
    def __init__(self, popen: Popen | None = None, on_failure: Failure | None = None) -> None:
        self.popen = popen if popen is not None else _popen
        self.on_failure = on_failure if on_failure is not None else (lambda message: None)
        self._windows: dict[str, Process] = {}
        self._closed: set[int] = set()  # pids of the windows close_all ended
        self._lock = threading.Lock()

    def open_window(self, key: str, argv: Sequence[str], request: str = "raise") -> None:
        """Start the window `key`, or, if it is still open, send it `request` (it lifts itself)."""
        with self._lock:
            proc = self._windows.get(key)
            if proc is not None and proc.poll() is None and _send(proc, request):
                log.info("raised the open %s window (pid %d)", key, proc.pid)
                return
            options = {**launch.child_options(), "stdin": subprocess.PIPE, "stderr": subprocess.PIPE}
            started = self._start(argv, options, what=f"the {key} window")
            if started is not None:
                self._windows[key] = started

    def close_all(self, timeout: float = 3.0) -> None:
        """Close the windows this tray opened (Quit): asked to end (SIGTERM: Tk closes at once), killed if one
        is still there after `timeout`."""
        with self._lock:
            procs, self._windows = [p for p in self._windows.values() if p.poll() is None], {}
            self._closed.update(p.pid for p in procs)
        for proc in procs:
            try:
                proc.terminate()
            except OSError:
                continue
        for proc in procs:
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                with contextlib.suppress(subprocess.TimeoutExpired, OSError):
                    proc.wait(timeout)  # reaped: gone when Quit returns
            except OSError:
                pass
            log.info("closed a window the tray opened (pid %d)", proc.pid)

    def _start(self, argv: Sequence[str], options: dict[str, Any], what: str) -> Process | None:
        try:
            proc = self.popen(list(argv), stdout=subprocess.DEVNULL, **options)
        except OSError as exc:
            log.error("could not start %s (%s): %s", what, launch.describe(argv), exc)
            self.on_failure(f"Could not open {what}: {exc}")
            return None
        if proc is not None:
            threading.Thread(target=self._watch, args=(proc, argv, what), daemon=True).start()
        return proc

    def _watch(self, proc: Process, argv: Sequence[str], what: str) -> None:
        err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
        code = proc.wait()
        with self._lock:
            closed_by_us = proc.pid in self._closed  # ended by Quit's close_all: no failure to report
        if code and not closed_by_us:
            log.error("%s exited with %d (%s): %s", what, code, launch.describe(argv), err[-STDERR_TAIL:].strip())
            self.on_failure(f"Could not open {what} (exit {code}): {_last_line(err) or 'see the log'}")
        else:
            log.info("%s closed", what)

    def ask(self, argv: Sequence[str], what: str) -> str | None:
        """Run a dialog and return what it printed; None if it could not open (the person is told)."""
        try:
            done = subprocess.run(
                list(argv),
                capture_output=True,
                text=True,
                timeout=DIALOG_TIMEOUT_S,
                **_no_stdin(launch.child_options()),
            )
        except (OSError, subprocess.SubprocessError) as exc:
            log.error("could not open %s (%s): %s", what, launch.describe(argv), exc)
            self.on_failure(f"Could not open {what}: {exc}")
            return None
        if done.returncode != 0:
            log.error("%s exited with %d (%s): %s", what, done.returncode, launch.describe(argv), done.stderr[-600:])
            self.on_failure(f"Could not open {what}: {_last_line(done.stderr) or f'exit {done.returncode}'}")
            return None
        return str(done.stdout).strip()


def _no_stdin(options: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in options.items() if k != "stdin"} | {"stdin": subprocess.DEVNULL}


def _send(proc: Process, request: str) -> bool:
    if proc.stdin is None:
        return False
    try:
        proc.stdin.write((request + "\n").encode("utf-8"))
        proc.stdin.flush()
        return True
    except (OSError, ValueError):  # it is closing
        return False


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""
