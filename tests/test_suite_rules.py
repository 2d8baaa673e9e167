"""The suite's own rules: test files share code through tests/helpers/ only, and a test that starts an X server
says so with the `display` marker (so `-m "not display"` starts none)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from helpers import desktop as harness

TESTS = Path(__file__).resolve().parent


def imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            found.add("." * node.level + (node.module or ""))
    return found


def test_no_test_file_imports_another():
    """What two test files share lives in tests/helpers/: a test file imported by another runs its module-level
    code twice under two names, and its tests read as helpers to whoever edits it."""
    sources = [p for p in TESTS.rglob("*.py") if "data" not in p.relative_to(TESTS).parts]
    assert len(sources) > 50  # the walk found the suite
    offenders = {
        str(path.relative_to(TESTS)): sorted(names)
        for path in sources
        if (names := {m for m in imported_modules(path) if m.lstrip(".").split(".")[-1].startswith("test_")})
    }
    assert offenders == {}


def test_an_unmarked_test_cannot_start_an_x_server(tmp_path):
    """This test has no `display` marker: the harness refuses before any Xvfb runs."""
    with pytest.raises(AssertionError, match="not marked `display`"):
        harness.start_desktop(tmp_path / "desk", tray=None, bus=False)
    assert not (tmp_path / "desk" / "xvfb.log").exists()  # the log every spawn opens: nothing was started
