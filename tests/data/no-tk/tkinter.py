# A Python without Tk, as Debian's without python3-tk: put this folder first on PYTHONPATH and
# `import tkinter` fails the way it fails there (test_window.py's no-tkinter test).
raise ModuleNotFoundError("No module named 'tkinter'", name="tkinter")
