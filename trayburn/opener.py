"""Open a file or folder with the desktop's own program (a local program; nothing leaves the machine).

The opener runs in the home folder; if it fails, its exit code and stderr are logged.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading

from . import launch

log = logging.getLogger(__name__)


def open_path(path: str | os.PathLike[str]) -> None:
    if sys.platform == "win32":
        os.startfile(path)  # type: ignore[attr-defined,unused-ignore]  # noqa: S606
        return
    argv = ["open" if sys.platform == "darwin" else "xdg-open", str(path)]
    proc = subprocess.Popen(
        argv,
        cwd=launch.working_folder(),
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
        log.error("%s exited with %d: %s", launch.describe(argv), code, err.strip()[-600:])
