"""Small Tk dialogs run in a child process, so they never fight the tray's event loop.

`python -m trayburn.tray.dialogs folder TITLE INITIAL` prints the chosen folder (nothing if cancelled);
`python -m trayburn.tray.dialogs budget CURRENT` prints the new daily budget in USD (0: none).
"""

from __future__ import annotations

import sys


def _root():
    import tkinter

    root = tkinter.Tk()
    root.withdraw()
    root.title("trayburn")
    return root


def choose_folder(title: str, initial: str) -> str:
    from tkinter import filedialog

    root = _root()
    try:
        return filedialog.askdirectory(parent=root, title=title, initialdir=initial or None, mustexist=True) or ""
    finally:
        root.destroy()


def ask_budget(current: str) -> str:
    from tkinter import simpledialog

    root = _root()
    try:
        value = simpledialog.askfloat(
            "trayburn",
            "Daily budget in US dollars (0 for none):",
            parent=root,
            initialvalue=float(current or 0),
            minvalue=0.0,
        )
        return "" if value is None else repr(value)
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
