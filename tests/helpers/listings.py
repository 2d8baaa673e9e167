"""The folders a scan lists: os.scandir counted (the real call made), for the tests of the saved listings."""

from __future__ import annotations

import os

import pytest


@pytest.fixture
def listings(monkeypatch) -> list[str]:
    """The folders os.scandir lists (the real call made, only counted)."""
    seen: list[str] = []
    real = os.scandir

    def counted(path=".", *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "scandir", counted)
    return seen
