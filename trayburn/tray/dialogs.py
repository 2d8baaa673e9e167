"""Small dialogs run in a child process, so they never fight the tray's event loop.

`trayburn _dialog folder TITLE INITIAL` prints the chosen folder (nothing if cancelled): GTK's own
chooser where PyGObject is installed (it goes through the desktop portal where there is one),
Tk's elsewhere. `trayburn _dialog save TITLE FOLDER NAME` prints where to save a file (the summary
window's Export…): GTK's native save chooser opening in FOLDER with NAME filled in, Tk's elsewhere.
`trayburn _dialog budget CURRENT` prints the new daily budget in USD (0: none);
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


def documents_folder() -> str:
    """Where an export starts: the desktop's Documents folder (XDG), else ~/Documents, else home."""
    try:
        import gi

        gi.require_version("GLib", "2.0")
        from gi.repository import GLib

        found = GLib.get_user_special_dir(GLib.UserDirectory.DIRECTORY_DOCUMENTS)
        if found and os.path.isdir(found) and os.path.realpath(found) != os.path.realpath(os.path.expanduser("~")):
            return str(found)
    except (ImportError, ValueError, AttributeError):
        pass
    documents = os.path.expanduser("~/Documents")
    return documents if os.path.isdir(documents) else os.path.expanduser("~")


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
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
