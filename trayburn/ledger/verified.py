"""When opening the ledger may skip SQLite's integrity check: a stamp beside it, `<ledger>.verified`.

`PRAGMA quick_check` reads every page: 40 ms on a 29 MB ledger (5,000 sessions), about 150 ms at 20,000, paid
by every `trayburn today` if it ran at each open. It is there for damage from outside (a disk, a crash of the
file system, another program): SQLite's own writes do not need it. So the stamp records the ledger file as
trayburn last left it (size, mtime, inode; written after the check passed and after each of trayburn's own
commits, checkpoints and closes), and the time of the last check. An open skips the check only while the
file is exactly as stamped and the check is less than RECHECK_S old. Anything else (no stamp, a stamp that
does not parse, a file changed by someone else, a damaged page met by a query: `distrust`) checks again.

The write-ahead log is not stamped: its frames carry checksums SQLite verifies as it reads them.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path

from .. import files as fsutil

log = logging.getLogger(__name__)

SUFFIX = ".verified"
RECHECK_S = 24 * 3600  # an integrity check at least this often, whatever the stamp says


def stamp_path(ledger: Path) -> Path:
    return ledger.with_name(ledger.name + SUFFIX)


def state(ledger: Path) -> list[int] | None:
    """The file's (size, mtime_ns, inode), as a stamp holds it; None when it cannot be stat-ed."""
    try:
        st = os.stat(ledger)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def _stamped(ledger: Path) -> tuple[list[int], float] | None:
    try:
        doc = json.loads(fsutil.read_file(stamp_path(ledger), 4096, follow=False))
        return doc["file"], float(doc["checked_at"])
    except (OSError, ValueError, TypeError, KeyError):  # (fsutil.Refused is an OSError)
        return None


def trusted(ledger: Path, now: float | None = None) -> float | None:
    """The time of the last integrity check if the file is as stamped since and that check is recent;
    None: check it now."""
    stamped = _stamped(ledger)
    if stamped is None:
        return None
    file, checked_at = stamped
    now = time.time() if now is None else now
    if file != state(ledger) or not 0 <= now - checked_at < RECHECK_S:
        return None
    return checked_at


def record(ledger: Path, checked_at: float, before: list[int] | None = None) -> None:
    """Stamp the file as it is now, with the latest check any process made (a tray open for days must not
    undo the check a newer process made). `before`: the file as it was just before trayburn's own write
    (a commit, a close); the stamp follows that write only if it still named that state, so a change made
    from outside meanwhile is never stamped as checked (the next open checks instead). Without `before`:
    trayburn just checked the file itself. Best effort: without a stamp the next open checks, which is
    only slower."""
    now = state(ledger)
    if now is None:
        return
    stamped = _stamped(ledger)
    if before is not None and (stamped is None or stamped[0] != before):
        return
    if stamped is not None and checked_at < stamped[1] <= time.time():
        checked_at = stamped[1]
    if stamped == (now, checked_at):  # (most closes: nothing written)
        return
    data = json.dumps({"file": now, "checked_at": checked_at}).encode()
    try:
        fsutil.atomic_write(stamp_path(ledger), data, durable=False)
    except OSError as exc:
        log.debug("could not stamp %s: %s", ledger, exc)


def distrust(ledger: Path) -> None:
    """The ledger was found damaged: the next open checks it (and rebuilds it if the check fails)."""
    try:
        stamp_path(ledger).unlink(missing_ok=True)
    except OSError as exc:
        log.debug("could not remove the stamp of %s: %s", ledger, exc)
