"""Small dialogs run in a child process, so they never fight the tray's event loop.

`trayburn _dialog folder TITLE INITIAL` prints the chosen folder (nothing if cancelled): GTK's own
chooser where PyGObject is installed (it goes through the desktop portal where there is one),
Tk's elsewhere. `trayburn _dialog budget CURRENT` prints the new daily budget in USD (0: none);
it accepts "20", "$20", "20.50" and "$1,200".
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any

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


def _gtk_folder(title: str, initial: str) -> str | None:
    """GTK's folder chooser; None where GTK cannot be used (then Tk's is)."""
    try:
        import gi

        gi.require_version("Gtk", "3.0")
        from gi.repository import GLib, Gtk
    except (ImportError, ValueError):
        return None
    if not Gtk.init_check()[0]:
        return None
    GLib.set_prgname("trayburn")
    dialog = Gtk.FileChooserNative.new(title, None, Gtk.FileChooserAction.SELECT_FOLDER, "_Choose", "_Cancel")
    if initial and os.path.isdir(initial):
        dialog.set_current_folder(initial)
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


def main(argv: list[str]) -> int:
    if argv[:1] == ["folder"] and len(argv) == 3:
        print(choose_folder(argv[1], argv[2]))
        return 0
    if argv[:1] == ["budget"] and len(argv) == 2:
        print(ask_budget(argv[1]))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
