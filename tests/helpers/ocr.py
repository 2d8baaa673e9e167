"""Text read back from screenshots with tesseract (ImageMagick enlarges them first)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from .xwindows import Rect

OCR_SCALE = 3


def ocr(path: Path) -> str:
    big = path.with_suffix(".x3.png")
    subprocess.run(["convert", str(path), "-resize", "300%", "-colorspace", "Gray", str(big)], check=True)
    done = subprocess.run(["tesseract", str(big), "-", "--psm", "6"], capture_output=True, text=True, check=True)
    return done.stdout


def ocr_words(path: Path) -> list[tuple[str, Rect]]:
    """The words tesseract reads in a screenshot, each with its box in the screenshot's own pixels."""
    big = path.with_suffix(".ocr.png")
    subprocess.run(
        ["convert", str(path), "-resize", f"{OCR_SCALE * 100}%", "-colorspace", "Gray", str(big)],
        check=True,
        timeout=30,
    )
    done = subprocess.run(
        ["tesseract", str(big), "-", "--psm", "11", "tsv"], capture_output=True, text=True, check=True, timeout=60
    )
    words = []
    for line in done.stdout.splitlines()[1:]:
        cols = line.split("\t")
        if len(cols) == 12 and cols[11].strip():
            x, y, w, h = (int(c) // OCR_SCALE for c in cols[6:10])
            words.append((cols[11].strip(), Rect(x, y, max(1, w), max(1, h))))
    return words


def ocr_lines(path: Path) -> str:
    big = path.with_suffix(".ocr.png")
    subprocess.run(
        ["convert", str(path), "-resize", f"{OCR_SCALE * 100}%", "-colorspace", "Gray", str(big)],
        check=True,
        timeout=30,
    )
    done = subprocess.run(["tesseract", str(big), "-", "--psm", "6"], capture_output=True, text=True, timeout=60)
    return done.stdout


def find_word(words: list[tuple[str, Rect]], text: str) -> Rect | None:
    return next((rect for word, rect in words if text in word), None)
