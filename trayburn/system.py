"""The operating system around trayburn, for the tray and the window: the private log file, opening a
file or folder with the desktop's program, one tray per user, and the one way trayburn starts itself.
Never imports a GUI toolkit, never prints (the GUI path logs).

The log (it names folders and sessions) goes to a rotating file in the platform log dir, private: its folder
0700, its files 0600, never opened through a symbolic link. Where it cannot be written, logging goes to stderr
(or nowhere) and the reason is the first thing logged: a log problem never stops the app.

A file or folder opens with the desktop's own program (a local program; nothing leaves the machine), run in
the home folder; if it fails, its exit code and stderr are logged.

One tray per user: an exclusive lock on a file in the state dir, held for the process's life. The lock file
is private (0600) and never opened through a link: a link planted in its place is refused (files.Refused, an
OSError with a message), never truncated.

trayburn starts itself at login and as the tray's child processes, always through `command()`. `python -m
trayburn` run from a folder that holds a `trayburn/` folder (a clone in `$HOME`, say) imports that folder
instead of the installed package. So a command never relies on the current folder: the frozen app is its
own executable; an installed entry point beside the interpreter is used as it is (its folder, not the
current one, comes first on sys.path); otherwise Python runs with `-P` (3.11+: the current folder is not
put on sys.path). `child_options()` also gives an explicit working folder, so the child's relative paths
never depend on where the tray started.
"""

from __future__ import annotations

import io
import logging
import logging.handlers
import os
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from . import files, paths

FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """RotatingFileHandler whose files are opened through files.py (0600, no link followed)."""

    def _open(self) -> io.TextIOWrapper:  # the base class's hook for each (re)open
        fd = files.open_private(self.baseFilename, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        return open(fd, "a", encoding=self.encoding, errors=self.errors)  # noqa: SIM115 (the handler closes it)


def setup(level: int = logging.INFO, log_dir: Path | None = None) -> Path:
    path = (log_dir or paths.log_dir()) / "trayburn.log"
    handler: logging.Handler
    problem = None
    try:
        files.private_dir(path.parent)
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


log = logging.getLogger(__name__)


def open_path(path: str | os.PathLike[str]) -> None:
    if sys.platform == "win32":
        os.startfile(path)  # type: ignore[attr-defined,unused-ignore]  # noqa: S606
        return
    argv = ["open" if sys.platform == "darwin" else "xdg-open", str(path)]
    proc = subprocess.Popen(
        argv,
        cwd=working_folder(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    threading.Thread(target=_watch, args=(proc, argv), daemon=True).start()


def _watch(proc: subprocess.Popen[bytes], argv: list[str]) -> None:
    err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
    code = proc.wait()
    if code:
        log.error("%s exited with %d: %s", describe(argv), code, err.strip()[-600:])


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
        files.private_dir(self.path.parent)
        fd = files.open_private(self.path, os.O_RDWR | os.O_CREAT)
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
        import msvcrt  # (Windows only)

        fh.seek(0)
        msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)
    else:
        import fcntl  # (POSIX only)

        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)


APP_NAME = "trayburn"


def command(*args: str, entry_point: bool = False) -> list[str]:
    """The argv that runs `trayburn ARGS...` in a new process, whatever the current folder.

    `entry_point`: prefer the installed console script beside the interpreter (what a login
    entry should name: it reads as "trayburn" and survives a Python upgrade in place). Children
    of a running trayburn use the interpreter that runs it, with -P.
    """
    if getattr(sys, "frozen", False):
        return [sys.executable, *args]
    script = _console_script() if entry_point else None
    if script:
        return [script, *args]
    return [sys.executable, "-P", "-m", APP_NAME, *args]


def _console_script() -> str | None:
    # Not resolved: a venv's python is a symlink, and the script sits beside the link.
    # On Windows the gui-script (trayburn-tray.exe) first: a console script opens a console window.
    bin_dir = Path(sys.executable).parent
    names = (f"{APP_NAME}-tray.exe",) if sys.platform == "win32" else ()
    for name in (*names, APP_NAME, f"{APP_NAME}.exe"):
        candidate = bin_dir / name
        if candidate.is_file():
            return str(candidate)
    return None  # not one found on PATH: that may be another install


def working_folder(env: Mapping[str, str] | None = None) -> str:
    """Where children run: the home folder (never a folder that could shadow the package)."""
    env = os.environ if env is None else env
    home = env.get("HOME") or env.get("USERPROFILE") or os.path.expanduser("~")
    return home if home and os.path.isdir(home) else os.path.abspath(os.sep)


def child_options(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Keyword arguments for subprocess: an explicit cwd, no console window on Windows."""
    options: dict[str, Any] = {"cwd": working_folder(env), "stdin": subprocess.DEVNULL}
    if sys.platform == "win32":
        options["creationflags"] = getattr(subprocess, "CREATE_NO_WINDOW", 0)
    return options


def describe(argv: Sequence[str]) -> str:
    """An argv as one line for the log."""
    return subprocess.list2cmdline(list(argv))
