"""This machine's identity in shared figures: an id made once and kept in the state folder, a name
(the `machine_name` setting, else the host name), and a host fingerprint that tells a cloned home
folder (same id, another computer) from this one."""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from ..files import Refused, atomic_write, read_file
from . import host_name, machine_name

ID_PATTERN = re.compile(r"[0-9a-f]{16}")


@dataclass(frozen=True)
class Machine:
    id: str  # 16 hex digits, the machine file's name
    name: str  # for people
    host: str  # fingerprint of the computer (not of the home folder): differs on a cloned home


def host_fingerprint() -> str:
    """A hash of what names the computer itself: /etc/machine-id where there is one, and the host name.
    Never the home folder's contents, which a clone copies."""
    parts = [host_name()]
    for path in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
        try:
            parts.append(read_file(path, 4096).decode("ascii", "replace").strip())
            break
        except OSError:
            continue
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def this_machine(state: Path, name: str | None = None) -> Machine:
    """The id from the state folder, made (and saved, private) the first time."""
    path = paths.machine_file(state)
    machine_id = _read_id(path)
    if machine_id is None:
        machine_id = secrets.token_hex(8)
        atomic_write(path, json.dumps({"id": machine_id}).encode() + b"\n")
    return Machine(machine_id, machine_name(name), host_fingerprint())


def new_id(state: Path, name: str | None = None) -> Machine:
    """A new id for this machine (its old one was found in use by another computer)."""
    machine_id = secrets.token_hex(8)
    atomic_write(paths.machine_file(state), json.dumps({"id": machine_id}).encode() + b"\n")
    return Machine(machine_id, machine_name(name), host_fingerprint())


def _read_id(path: Path) -> str | None:
    try:
        doc = json.loads(read_file(path, 4096, follow=False))
    except (OSError, Refused, ValueError):
        return None
    value = doc.get("id") if isinstance(doc, dict) else None
    return value if isinstance(value, str) and ID_PATTERN.fullmatch(value) else None
