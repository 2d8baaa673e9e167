"""Regenerate trayburn's raster icons from the drawing code.

    .venv/bin/python assets/make_assets.py

Writes assets/trayburn.png (256 px), trayburn.ico (16-256 px), trayburn.icns,
and copies the PNG to trayburn/assets/ (the window icon, shipped as package
data). Every size is drawn at that size by trayburn.tray.draw.draw_mark, not
shrunk from the largest. trayburn.svg is hand-written from the same shapes.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from trayburn.tray.draw import draw_mark  # noqa: E402

ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
ICNS_SIZES = (16, 32, 64, 128, 256, 512, 1024)


def write_png(path: Path) -> None:
    draw_mark(256).save(path, optimize=True)


def write_ico(path: Path) -> None:
    largest, *others = sorted(ICO_SIZES, reverse=True)
    draw_mark(largest).save(
        path,
        sizes=[(s, s) for s in ICO_SIZES],
        append_images=[draw_mark(s) for s in others],
    )


def write_icns(path: Path) -> None:
    largest, *others = sorted(ICNS_SIZES, reverse=True)
    draw_mark(largest).save(path, append_images=[draw_mark(s) for s in others])


def main() -> int:
    png = HERE / "trayburn.png"
    write_png(png)
    write_ico(HERE / "trayburn.ico")
    write_icns(HERE / "trayburn.icns")
    package_assets = ROOT / "trayburn" / "assets"
    package_assets.mkdir(exist_ok=True)
    shutil.copyfile(png, package_assets / "trayburn.png")
    for name in ("trayburn.png", "trayburn.ico", "trayburn.icns"):
        print(f"wrote assets/{name}")
    print("copied assets/trayburn.png to trayburn/assets/trayburn.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
