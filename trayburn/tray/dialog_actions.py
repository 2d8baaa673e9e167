"""The tray's dialog actions: pick a Cline folder (recognising which level it is), a folder to share
through, a budget. Each runs in a thread of its own and a child process, so the menu never waits; a
failure is told to the person, with their choice, never raised (mixed into `TrayApp`)."""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import paths
from .. import platform as launch
from .. import settings as st
from . import folders, status

if TYPE_CHECKING:
    from ..engine import Engine
    from .children import Children

log = logging.getLogger(__name__)


class DialogActions:
    engine: Engine
    children: Children

    def _set(self, key: str, value: str | None) -> None:
        raise NotImplementedError

    def tell(self, message: str) -> None:
        raise NotImplementedError

    def do_choose_root(self, level: str) -> None:
        threading.Thread(target=self._ask, args=(level,), daemon=True).start()

    def do_set_budget(self, _: Any = None) -> None:
        threading.Thread(target=self._ask_budget, daemon=True).start()

    def do_choose_sync(self, _: Any = None) -> None:
        threading.Thread(target=self._ask_sync, daemon=True).start()

    def do_stop_sharing(self, _: Any = None) -> None:
        """This machine's file stops being written; what was merged from others stays counted."""
        self._set("sync_dir", None)

    def _pick_folder(self, title: str, start: Path) -> str | None:
        start = start if start.is_dir() else paths.home(os.environ)
        return self.children.ask(launch.command("_dialog", "folder", title, str(start)), "the folder dialog")

    def _ask(self, level: str) -> None:
        current = {lv.name: lv for lv in self.engine.levels}[level]
        chosen = self._pick_folder(f"trayburn: choose the {current.label.lower()}", current.path)
        if chosen:
            key, note = folders.level_for(Path(chosen), level)
            if self._set_safely(key, chosen) and note:
                self.tell(status.tilde(note))

    def _ask_sync(self) -> None:
        current = self.engine.settings.sync_dir
        start = Path(current).expanduser() if current else paths.home(os.environ)
        chosen = self._pick_folder("trayburn: choose a folder you sync between machines", start)
        if chosen and self._set_safely("sync_dir", chosen):
            self.tell(f"Sharing this machine's figures through {status.tilde(chosen)}")

    def _ask_budget(self) -> None:
        current = str(self.engine.settings.daily_budget or 0)
        value = self.children.ask(launch.command("_dialog", "budget", current), "the budget dialog")
        if value:
            self._set_safely("daily_budget", value)

    def _set_safely(self, key: str, value: str) -> bool:
        """From a dialog's thread: a failure is told (with the choice, so it is not lost), never raised."""
        try:
            self._set(key, value)
            return True
        except st.SettingsError as exc:
            self.tell(f"Not saved: {key} = {value}. {exc}")
        except Exception as exc:
            log.exception("could not set %s", key)
            self.tell(f"Not saved: {key} = {value} ({exc})")
        return False
