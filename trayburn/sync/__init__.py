"""Several machines, one bill, through a folder the person already syncs (no network of our own). This module
holds only this computer's name (`host_name`, `machine_name`), all a process that does not share loads: it never
imports share.py.

share.py       this machine's part: its stable id (kept in the state folder), name and host fingerprint; writing
               its own file after a refresh that counted something not yet shared; what `doctor` says about
               each machine's file

The machine file's format (docs/SYNC-FORMAT.md) and reading other machines' files, a source like any other:
`sources/machine.py`.
"""

from __future__ import annotations

import os


def host_name() -> str:
    """This computer's name (cheap: no socket module where the OS tells it directly)."""
    if hasattr(os, "uname"):
        name = os.uname().nodename
    else:  # Windows
        import socket

        name = socket.gethostname()
    return name or "this machine"


def machine_name(setting: str | None) -> str:
    """This machine's name for people: the `machine_name` setting, else the host name."""
    return (setting or "").strip() or host_name()
