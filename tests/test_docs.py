"""The README keeps up with the program: every command and every setting is documented."""

import re
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


# What a repository path may start with: the folders and files the source release carries (MANIFEST.in).
REPO_ROOTS = ("trayburn/", "tests/", "docs/", "bench/", "packaging/", "scripts/", "assets/", ".ci/", ".github/")
REPO_FILES = ("README.md", "CHANGELOG.md", "LICENSE", "pyproject.toml", "MANIFEST.in")
MADE_BY_RUNS = ("tests/_artifacts/", "bench/out/")  # written by the tests and the benchmarks, not in the repository


def links(text: str) -> list[str]:
    """Link and image targets outside code blocks (starship's `[$output]($style)` is not a link)."""
    return re.findall(r"\]\(([^)\s#]+)", re.sub(r"```.*?```", "", text, flags=re.S))


def named_paths(text: str) -> set[str]:
    """The repository paths a Markdown text names: in backticks (a command's first word: `./scripts/test --fast`)
    and as link or image targets. A path with a placeholder (`<id>`, `*`, `…`) is a pattern, not a path."""
    words = [span.split()[0] for span in re.findall(r"`([^`\n]+)`", text) if span.strip()]
    words += links(text)
    out = set()
    for word in words:
        path = word.removeprefix("./").split("::")[0].rstrip(":,")  # `tests/x.py::Name`: the file
        if any(c in path for c in "<>*…|$~") or "://" in path:
            continue
        if (path.startswith(REPO_ROOTS) or path in REPO_FILES) and not path.startswith(MADE_BY_RUNS):
            out.add(path)
    return out


ROOT = Path(__file__).parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md"))  # the pages README sends people to (docs/formats/ cite the code)


def test_every_path_the_readme_names_exists():
    """`trayburn/pricing/routes.py` stayed in README long after it was gone: a path README names is there."""
    names = named_paths(README)
    assert len(names) > 20  # the check sees README's paths (scripts, docs, packaging, tests/data…)
    assert sorted(p for p in names if not (ROOT / p).exists()) == []


def test_every_path_and_link_in_docs_exists():
    """The same for the pages in docs/; a link there is relative to its page."""
    missing = []
    for page in DOCS:
        text = page.read_text()
        missing += [f"{page.name}: {p}" for p in named_paths(text) if not (ROOT / p).exists()]
        for target in links(text):
            if "://" not in target and not (page.parent / target).exists():
                missing.append(f"{page.name}: link {target}")
    assert missing == []


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation but `-` and `_` dropped, spaces as `-`."""
    heads = re.findall(r"^#+ (.+)$", text, flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in heads}


def test_links_to_a_heading_land_on_one():
    """A link to `X.md#heading` (or `#heading` on the same page) in README or docs/ names a heading that is there:
    moving a section out of README must not leave a link to where it was."""
    broken = []
    for page in [ROOT / "README.md", *DOCS]:
        text = page.read_text()
        for target, anchor in re.findall(r"\]\(([^)\s#]*)#([^)\s]+)\)", text):
            linked = (page.parent / target).read_text() if target else text
            if anchor not in anchors(linked):
                broken.append(f"{page.name}: {target}#{anchor}")
    assert broken == []
