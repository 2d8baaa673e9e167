"""The tray: a pystray icon and menu over the engine (`app`), what it shows as plain data (`view`), its icon
(`draw`), the desktop around it (`host`) and the child processes beside it (`dialogs`). Never computes a figure.
"""
