"""The child processes beside the tray: the dialogs and the summary windows, and the tray's actions that start them.
Never blocks the tray.

- The tray's side (`DialogActions`, mixed into `TrayApp`): pick a Cline folder (recognising which of Cline's three
  folders it is, whatever it was picked for: `level_for`), a folder to share through, a budget. Each runs in a
  thread of its own and a child process, so the menu never waits; a failure is told to the person, with their
  choice, never raised.
- `Children` starts them so they always start: each child runs `trayburn` through `system.command()` in an
  explicit working folder, so a `trayburn/` folder where the tray was started cannot shadow the package. A child
  that fails is logged with its exit code and the end of its stderr, and `on_failure` tells the person. The
  summary window is one per tray: while it runs, another "open" writes a line to its stdin (`raise`, or
  `session ID`) and the window lifts itself (see `window.listen_for_requests`).
- The dialogs themselves, run as `trayburn _dialog ...` in that child, so they never fight the tray's event loop
  (`USAGE`): GTK's own choosers where PyGObject is installed (through the desktop portal where there is one),
  Tk's elsewhere.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from .. import paths, settings, system
from .view import tilde

if TYPE_CHECKING:
    from ..engine import Engine

log = logging.getLogger(__name__)


# ---- the tray's actions that open dialogs ------------------------------------------------------------------------


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
        return self.children.ask(system.command("_dialog", "folder", title, str(start)), "the folder dialog")

    def _ask(self, level: str) -> None:
        current = {lv.name: lv for lv in self.engine.levels}[level]
        chosen = self._pick_folder(f"trayburn: choose the {current.label.lower()}", current.path)
        if chosen:
            key, note = level_for(Path(chosen), level)
            if self._set_safely(key, chosen) and note:
                self.tell(tilde(note))

    def _ask_sync(self) -> None:
        current = self.engine.settings.sync_dir
        start = Path(current).expanduser() if current else paths.home(os.environ)
        chosen = self._pick_folder("trayburn: choose a folder you sync between machines", start)
        if chosen and self._set_safely("sync_dir", chosen):
            self.tell(f"Sharing this machine's figures through {tilde(chosen)}")

    def _ask_budget(self) -> None:
        current = str(self.engine.settings.daily_budget or 0)
        value = self.children.ask(system.command("_dialog", "budget", current), "the budget dialog")
        if value:
            self._set_safely("daily_budget", value)

    def _set_safely(self, key: str, value: str) -> bool:
        """From a dialog's thread: a failure is told (with the choice, so it is not lost), never raised."""
        try:
            self._set(key, value)
            return True
        except settings.SettingsError as exc:
            self.tell(f"Not saved: {key} = {value}. {exc}")
        except Exception as exc:
            log.exception("could not set %s", key)
            self.tell(f"Not saved: {key} = {value} ({exc})")
        return False


# ---- which of Cline's folders a picked folder is -----------------------------------------------------------------

LEVEL_LABELS = {"cline_dir": "Cline folder", "data_dir": "data folder", "sessions_dir": "sessions folder"}
LOOKED_AT = 200  # entries looked at in a big folder: enough to recognise, never a long scan


def recognise(folder: Path) -> str | None:
    """The level `folder` is, by what it holds; None if it holds none of Cline's layouts."""
    try:
        if (folder / "data" / "sessions").is_dir():
            return "cline_dir"
        if (folder / "sessions").is_dir():
            return "data_dir"
        return "sessions_dir" if _holds_sessions(folder) else None
    except OSError:
        return None


def _holds_sessions(folder: Path) -> bool:
    for i, entry in enumerate(folder.iterdir()):
        if i >= LOOKED_AT:
            return False
        name = entry.name
        if entry.is_dir() and ((entry / f"{name}.json").is_file() or (entry / f"{name}.messages.json").is_file()):
            return True
    return False


def level_for(folder: Path, asked: str) -> tuple[str, str | None]:
    """(the level to set, a note for the person when it is not the one asked for)."""
    found = recognise(folder)
    if found is None or found == asked:
        return asked, None
    return found, f"{folder} is a {LEVEL_LABELS[found]}: set as the {LEVEL_LABELS[found]}"


# ---- starting the children ---------------------------------------------------------------------------------------

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
            options = {**system.child_options(), "stdin": subprocess.PIPE, "stderr": subprocess.PIPE}
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
            log.error("could not start %s (%s): %s", what, system.describe(argv), exc)
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
            log.error("%s exited with %d (%s): %s", what, code, system.describe(argv), err[-STDERR_TAIL:].strip())
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
                **_no_stdin(system.child_options()),
            )
        except (OSError, subprocess.SubprocessError) as exc:
            log.error("could not open %s (%s): %s", what, system.describe(argv), exc)
            self.on_failure(f"Could not open {what}: {exc}")
            return None
        if done.returncode != 0:
            log.error("%s exited with %d (%s): %s", what, done.returncode, system.describe(argv), done.stderr[-600:])
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


# ---- the dialogs (in the child process) --------------------------------------------------------------------------

_MONEY = re.compile(r"^\s*(?:US)?\$?\s*(\d{1,3}(?:,\d{3})+|\d*)(\.\d+)?\s*(?:\$|USD|usd)?\s*$")


def parse_money(text: str) -> float | None:
    """A non-negative dollar amount typed by a person, or None if it is not one."""
    match = _MONEY.match(text)
    if match is None or not (match.group(1) or match.group(2)):
        return None
    return float((match.group(1) or "0").replace(",", "") + (match.group(2) or ""))


def _root() -> Any:
    import tkinter

    root = tkinter.Tk(className="trayburn")
    root.withdraw()
    root.title("trayburn")
    return root


def choose_folder(title: str, initial: str) -> str:
    if sys.platform.startswith("linux") and not os.environ.get("TRAYBURN_TK_DIALOGS"):
        chosen = _gtk_folder(title, initial)
        if chosen is not None:
            return chosen
    return _tk_folder(title, initial)


def _gtk() -> Any:
    """GTK 3, initialised, with trayburn's program name; None where it cannot be used (no PyGObject, no
    display)."""
    try:
        import gi

        gi.require_version("Gtk", "3.0")
        from gi.repository import GLib, Gtk
    except (ImportError, ValueError):
        return None
    if not Gtk.init_check()[0]:
        return None
    GLib.set_prgname("trayburn")
    return Gtk


def _gtk_folder(title: str, initial: str) -> str | None:
    """GTK's folder chooser; None where GTK cannot be used (then Tk's is)."""
    Gtk = _gtk()
    if Gtk is None:
        return None
    dialog = Gtk.FileChooserNative.new(title, None, Gtk.FileChooserAction.SELECT_FOLDER, "_Choose", "_Cancel")
    if initial and os.path.isdir(initial):
        dialog.set_current_folder(initial)
    answer = dialog.run()
    chosen = dialog.get_filename() if answer == Gtk.ResponseType.ACCEPT else None
    dialog.destroy()
    return chosen or ""


def save_file(title: str, folder: str, name: str) -> str:
    """Where to save `name` (CSV or JSON by its ending): the chosen path, "" if cancelled."""
    if sys.platform.startswith("linux") and not os.environ.get("TRAYBURN_TK_DIALOGS"):
        chosen = _gtk_save(title, folder, name)
        if chosen is not None:
            return chosen
    from tkinter import filedialog

    root = _root()
    try:
        return (
            filedialog.asksaveasfilename(
                parent=root,
                title=title,
                initialdir=folder,
                initialfile=name,
                defaultextension=".csv",
                filetypes=[("CSV (spreadsheets)", "*.csv"), ("JSON", "*.json")],
            )
            or ""
        )
    finally:
        root.destroy()


def _gtk_save(title: str, folder: str, name: str) -> str | None:
    """GTK's native save chooser (through the desktop portal where there is one); None where GTK cannot be used."""
    Gtk = _gtk()
    if Gtk is None:
        return None
    dialog = Gtk.FileChooserNative.new(title, None, Gtk.FileChooserAction.SAVE, "_Save", "_Cancel")
    dialog.set_do_overwrite_confirmation(True)
    for label, pattern in (("CSV (spreadsheets)", "*.csv"), ("JSON", "*.json")):
        only = Gtk.FileFilter()
        only.set_name(label)
        only.add_pattern(pattern)
        dialog.add_filter(only)
    if folder and os.path.isdir(folder):
        dialog.set_current_folder(folder)
    dialog.set_current_name(name)
    answer = dialog.run()
    chosen = dialog.get_filename() if answer == Gtk.ResponseType.ACCEPT else None
    dialog.destroy()
    return chosen or ""


def _tk_folder(title: str, initial: str) -> str:
    from tkinter import filedialog

    root = _root()
    try:
        return filedialog.askdirectory(parent=root, title=title, initialdir=initial or None, mustexist=True) or ""
    finally:
        root.destroy()


def ask_budget(current: str) -> str:
    from tkinter import messagebox, simpledialog

    root = _root()
    try:
        shown = current if parse_money(current) else ""
        prompt = "Daily budget in US dollars, e.g. 20 or $20 (0 or empty for none):"
        while True:
            text = simpledialog.askstring("trayburn", prompt, parent=root, initialvalue=shown)
            if text is None:
                return ""
            value = parse_money(text) if text.strip() else 0.0
            if value is not None:
                return repr(value)
            messagebox.showerror("trayburn", f"“{text}” is not an amount in dollars.", parent=root)
            shown = text
    finally:
        root.destroy()


USAGE = """\
trayburn _dialog folder TITLE INITIAL    prints the chosen folder (nothing if cancelled)
trayburn _dialog save TITLE FOLDER NAME  prints where to save NAME (the summary window's Export…): GTK's native
                                         save chooser opening in FOLDER with NAME filled in, Tk's elsewhere
trayburn _dialog budget CURRENT          prints the new daily budget in USD (0: none); it accepts "20", "$20",
                                         "20.50" and "$1,200"
"""


def main(argv: list[str]) -> int:
    if argv[:1] == ["folder"] and len(argv) == 3:
        print(choose_folder(argv[1], argv[2]))
        return 0
    if argv[:1] == ["save"] and len(argv) == 4:
        print(save_file(argv[1], argv[2], argv[3]))
        return 0
    if argv[:1] == ["budget"] and len(argv) == 2:
        print(ask_budget(argv[1]))
        return 0
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
