"""The resolved-prices cache: one small JSON file in trayburn's state folder.

    {"format": 1,
     "stamp": {"data": "<size>:<mtime_ns> of genai-prices' data module", "settings": {prices, aliases},
               "trayburn": "<its version>"},
     "models": {"<route>\\t<model id, lower case>": {"key": "glm-4-6", "price": {Price.to_json()} | null}},
     "names": {"glm-4-6": "GLM-4.6" | null}}

A different stamp (genai-prices or trayburn upgraded, the settings' prices or aliases edited) means the whole file
is ignored and rebuilt. Written atomically (a temp file in the same folder, then replace; mode 0600);
entries another process wrote meanwhile are kept. Reading it never imports genai-prices.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .price import Price

log = logging.getLogger(__name__)
FORMAT = 2


@dataclass(frozen=True)
class Entry:
    """A model id on a route: its canonical key, and the genai-prices price (None: unknown to it)."""

    key: str
    price: Price | None

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "price": None if self.price is None else self.price.to_json()}

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Entry:
        price = value.get("price")
        return cls(str(value["key"]), None if price is None else Price.from_json(price))


def data_stamp() -> str:
    """What identifies genai-prices' bundled data, found without importing it (nor importlib.util)."""
    for folder in sys.path:
        try:
            st = os.stat(os.path.join(folder or ".", "genai_prices", "data.py"))
        except OSError:
            continue
        return f"{st.st_size}:{st.st_mtime_ns}"
    try:  # a frozen app: its data changes only with the app itself
        st = os.stat(sys.executable)
    except OSError:
        return "unknown"
    return f"frozen:{st.st_size}:{st.st_mtime_ns}"


class PriceCache:
    """Entries and names in memory, backed by the file at `path` (None: memory only)."""

    def __init__(self, path: str | os.PathLike[str] | None, settings: dict[str, Any]):
        self.path = None if path is None else Path(path)
        from .. import __version__  # (how ids are routed to prices changes with trayburn: a new one resolves anew)

        self.stamp = {"data": data_stamp(), "settings": settings, "trayburn": __version__}
        self.models: dict[str, Entry] = {}
        self.names: dict[str, str | None] = {}
        self.unwritable = False  # a write failed: memory only from then on (said once, not at every price)
        self._load()

    def _load(self) -> None:
        data = self._read()
        if data is None:
            return
        try:
            self.models = {k: Entry.from_json(v) for k, v in data["models"].items()}
            self.names = {str(k): (None if v is None else str(v)) for k, v in data["names"].items()}
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            log.warning("ignoring the prices cache %s: %s", self.path, exc)
            self.models, self.names = {}, {}

    def _read(self, quiet: bool = False) -> dict[str, Any] | None:
        if self.path is None:
            return None
        try:
            data = json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            if not quiet:  # (said when loading; `save` reads it again)
                log.warning("ignoring the prices cache %s: %s", self.path, exc)
            return None
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("stamp") != self.stamp:
            return None
        return data

    def save(self) -> None:
        """Write the file, keeping what another process added since it was read. Once a write failed, the
        cache stays in memory for this process: each newly resolved price would fail (and say so) again."""
        if self.path is None or self.unwritable:
            return
        theirs = self._read(quiet=True) or {}
        models = {**(theirs.get("models") or {}), **{k: e.to_json() for k, e in self.models.items()}}
        names = {**(theirs.get("names") or {}), **self.names}
        text = json.dumps({"format": FORMAT, "stamp": self.stamp, "models": models, "names": names}, sort_keys=True)
        from ..fsutil import atomic_write  # only when a new price was resolved: never on a warm run

        try:
            atomic_write(self.path, text.encode("utf-8"))
        except OSError as exc:  # an unwritable state folder costs speed, never figures
            self.unwritable = True
            log.warning("could not write the prices cache %s (kept in memory for now): %s", self.path, exc)
