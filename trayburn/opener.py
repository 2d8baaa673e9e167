"""Open a file or folder with the desktop's own program (a local program; nothing leaves the machine)."""

from __future__ import annotations

import os
import subprocess
import sys


def open_path(path: str | os.PathLike) -> None:
    if sys.platform == "win32":
        os.startfile(path)  # type: ignore[attr-defined]  # noqa: S606
        return
    opener = "open" if sys.platform == "darwin" else "xdg-open"
    subprocess.Popen(
        [opener, str(path)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
