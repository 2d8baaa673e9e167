"""What the tests share: corpora written as the apps write them, ledgers, the real-desktop harness (Xvfb, trayer,
D-Bus), OCR, the tray on pystray's dummy backend, and the small programs the tests start (tiny_tray.py,
notify_recorder.py). Test files import from here, never from one another (tests/test_layout.py checks it)."""
