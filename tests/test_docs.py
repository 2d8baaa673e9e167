"""The README keeps up with the program: every command and every setting is documented."""

from pathlib import Path

from trayburn import settings
from trayburn.cli import build_parser

README = (Path(__file__).parents[1] / "README.md").read_text()


def test_every_command_is_in_the_readme():
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    missing = [c for c in commands if f"trayburn {c}" not in README]
    assert missing == []


def test_every_command_has_help():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert all(choice.help for choice in sub._choices_actions)


def test_every_setting_is_in_the_readme():
    missing = [k for k in settings.KEYS if f"`{k}`" not in README and f"[{k}" not in README]
    assert missing == []


def test_readme_names_the_test_command_ci_runs():
    ci = (Path(__file__).parents[1] / ".ci" / "run").read_text()
    assert "./scripts/test" in README and "./scripts/test" in ci


def test_the_error_example_carries_this_version():
    """README's --json error example is the one trayburn prints now, version included."""
    import re

    from trayburn import __version__

    (example,) = re.findall(r'`(\{"error": "not_found".*?\})`', README)
    assert f'"version": "{__version__}"' in example


def test_the_settings_table_is_the_declaration():
    """README's settings table is `settings.readme_table()`, made from each setting's one declaration: a setting
    added, or its default, bounds or help changed, shows here until the table is pasted again."""
    start = README.index("| key | default | meaning |")
    table = README[start : README.index("\n\n", start) + 1]
    assert table == settings.readme_table(), "paste settings.readme_table() into README.md"


def test_each_setting_is_in_the_table_once():
    from collections import Counter

    rows = Counter(line.split("|")[1].strip() for line in README.splitlines() if line.startswith("| `"))
    assert [k for k in settings.KEYS if rows[f"`{k}`"] > 1] == []
