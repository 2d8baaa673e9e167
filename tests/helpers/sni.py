"""A StatusNotifierItem seen from the session bus, as a panel's watcher sees it (gdbus calls)."""

from __future__ import annotations

import re
import subprocess

from . import desktop as harness


def gdbus(desk: harness.Desktop, dest: str, path: str, method: str, *args: str) -> str:
    argv = ["gdbus", "call", "--session", "--dest", dest, "--object-path", path, "--method", method, *args]
    done = subprocess.run(argv, env=desk.env, capture_output=True, text=True, timeout=10)
    return done.stdout if done.returncode == 0 else ""


def items(desk: harness.Desktop) -> list[str]:
    """The registered items ("<bus name>/<object path>"), as the panel's watcher lists them."""
    watcher = "org.kde.StatusNotifierWatcher"
    get = "org.freedesktop.DBus.Properties.Get"
    out = gdbus(desk, watcher, "/StatusNotifierWatcher", get, watcher, "RegisteredStatusNotifierItems")
    return re.findall(r"'([^']+)'", out)


def item_property(desk: harness.Desktop, item: str, name: str) -> str:
    bus, _, path = item.partition("/")
    out = gdbus(desk, bus, "/" + path, "org.freedesktop.DBus.Properties.Get", "org.kde.StatusNotifierItem", name)
    found = re.search(r"<'(.*)'>", out)
    return found.group(1) if found else ""
