"""A tiny pystray app for the real-desktop harness tests.

    python tests/helpers/tiny_tray.py --backend gtk --out DIR [--name tiny-tray]

Menu: "Open" (the default, left-click action) writes DIR/open; "Hello 4.21" writes
DIR/hello; "Quit" stops the icon. DIR/ready is written once the icon is visible.
Each file is written whole (temp file + rename), so a test can wait on its existence.
"""

import argparse
import os
import sys
from pathlib import Path

ICON_RGB = (230, 120, 20)  # tests look for this colour in the tray


def main(argv=None) -> int:
    args = _parse(argv)
    os.environ["PYSTRAY_BACKEND"] = args.backend  # before pystray is imported
    if args.backend in ("gtk", "appindicator"):
        from gi.repository import GLib

        GLib.set_prgname(args.name)  # becomes the icon window's WM_CLASS
    import pystray

    out = Path(args.out)
    icon = pystray.Icon(args.name, _image(), title=args.name, menu=_menu(pystray, out))

    def setup(icon):
        icon.visible = True
        _touch(out / "ready")

    try:
        icon.run(setup)
    except Exception as exc:  # noqa: BLE001 - see below
        # gtk: stop() then hides the notification over D-Bus, which raises when
        # no notification daemon is running (as under Xvfb). The icon did stop.
        print(f"tiny_tray: icon.run ended with {type(exc).__name__}: {exc}", file=sys.stderr)
    _touch(out / "stopped")
    return 0


def _parse(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="gtk")
    parser.add_argument("--out", required=True)
    parser.add_argument("--name", default="tiny-tray")
    return parser.parse_args(argv)


def _menu(pystray, out: Path):
    item = pystray.MenuItem
    return pystray.Menu(
        item("Open", lambda icon: _touch(out / "open"), default=True),
        item("Hello 4.21", lambda icon: _touch(out / "hello")),
        item("Quit", lambda icon: icon.stop()),
    )


def _image():
    from PIL import Image, ImageDraw

    image = Image.new("RGBA", (64, 64), (0, 0, 0, 0))  # 2x: the tray scales it down
    ImageDraw.Draw(image).ellipse((4, 4, 60, 60), fill=(*ICON_RGB, 255))
    return image


def _touch(path: Path) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(f"{os.getpid()}\n")
    tmp.replace(path)


if __name__ == "__main__":
    sys.exit(main())
