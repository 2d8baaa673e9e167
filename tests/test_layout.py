"""The shape of the package: no import cycle (imports inside functions counted), none between its folders
either (files -> sources -> ledger -> figures -> cli | tray | window: nothing imports a folder above it), and the
GUI toolkits imported only by tray/ and window/."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "trayburn"
GUI = {"pystray", "PIL", "tkinter", "gi"}


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _import_target(node: ast.ImportFrom, package: str) -> str:
    """The module a `from … import` names, a relative one resolved against `package`."""
    if not node.level:
        return node.module or ""
    base = package.split(".")
    base = base[: len(base) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def _imports(path: Path, modules: set[str]) -> tuple[set[str], set[str]]:
    """The trayburn modules a file imports (anywhere in it), and the top-level names of all it imports."""
    name = _module(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    ours: set[str] = set()
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                roots.add(alias.name.split(".")[0])
                if alias.name in modules:
                    ours.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            target = _import_target(node, package)
            roots.add(target.split(".")[0])
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in modules:
                    ours.add(sub)
                elif target in modules:
                    ours.add(target)
    ours.discard(name)
    return ours, roots


def _graph() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    files = {_module(p): p for p in PACKAGE.rglob("*.py")}
    modules = set(files)
    edges: dict[str, set[str]] = {}
    roots: dict[str, set[str]] = {}
    for name, path in files.items():
        edges[name], roots[name] = _imports(path, modules)
    # importing a.b.c runs a/__init__ and a/b/__init__ first
    for name in list(edges):
        for target in list(edges[name]):
            parts = target.split(".")
            for i in range(1, len(parts)):
                parent = ".".join(parts[:i])
                if parent in modules and parent != name and not name.startswith(parent + "."):
                    edges[name].add(parent)
    return edges, roots


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle():
    edges, _ = _graph()
    assert cycles(edges) == []


def _folder(module: str) -> str:
    """A module's room in the flow: its sub-package under trayburn/ (sources/, ledger/, tray/...), or itself."""
    parts = module.split(".")
    return ".".join(parts[:2])


def test_no_folder_imports_a_folder_that_imports_it():
    """A cycle between folders is an import that runs up the flow (window/ using a tray/ helper, sources/
    reading sync/'s format, figures/ using render.py's): each has a home below both."""
    edges, _ = _graph()
    folders: dict[str, set[str]] = {}
    for name, targets in edges.items():
        folders.setdefault(_folder(name), set()).update(_folder(t) for t in targets if _folder(t) != _folder(name))
    assert cycles(folders) == []


def test_only_tray_and_window_import_a_gui_toolkit():
    _, roots = _graph()
    gui = {
        name: sorted(roots[name] & GUI)
        for name in roots
        if roots[name] & GUI and not name.startswith(("trayburn.tray", "trayburn.window"))
    }
    assert gui == {}


def test_the_core_never_imports_tray_or_window():
    edges, _ = _graph()
    core = {
        name: sorted(t for t in targets if t.startswith(("trayburn.tray", "trayburn.window")))
        for name, targets in edges.items()
        if not name.startswith(("trayburn.tray", "trayburn.window")) and name != "trayburn.cli"
    }
    assert {k: v for k, v in core.items() if v} == {}


def test_the_ledger_knows_no_layout():
    """The ledger is given a `Source` and imports only the seam (`sources/base.py`) of sources/: no source's
    layout, parser or cache."""
    edges, _ = _graph()
    seam = {"trayburn.sources", "trayburn.sources.base"}
    knows = {
        name: sorted(t for t in targets if t.startswith("trayburn.sources") and t not in seam)
        for name, targets in edges.items()
        if name.startswith("trayburn.ledger")
    }
    assert {k: v for k, v in knows.items() if v} == {}


def _reaches_into_engine(path: Path) -> list[str]:
    """Where a file reads the engine's insides: `<anything>.ledger`, or a parameter `engine` typed `Any`
    (or not typed at all), which lets it reach anything unchecked."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and node.attr == "ledger":
            found.append(f"line {node.lineno}: .ledger")
        elif isinstance(node, ast.arg) and node.arg == "engine":
            kind = ast.unparse(node.annotation) if node.annotation else None
            if kind is None or kind.replace("'", "") in ("Any", "typing.Any"):
                found.append(f"line {node.lineno}: engine: {kind}")
    return found


def test_the_guis_read_the_engines_figures_not_its_ledger():
    """tray/ and window/ read what they show from the engine's typed records (`Engine.glance`, its reports):
    none of them imports ledger/ or reaches `engine.ledger`, and none takes an untyped engine."""
    edges, _ = _graph()
    gui = ("trayburn.tray", "trayburn.window")
    imports = {
        name: sorted(t for t in targets if t.startswith("trayburn.ledger"))
        for name, targets in edges.items()
        if name.startswith(gui)
    }
    assert {k: v for k, v in imports.items() if v} == {}
    reaches = {
        _module(p): found
        for p in PACKAGE.rglob("*.py")
        if _module(p).startswith(gui) and (found := _reaches_into_engine(p))
    }
    assert reaches == {}


def _aliases(path: Path, modules: set[str]) -> list[str]:
    """Each place a file imports a trayburn module under another name (`from .figures import day as report`)."""
    inside = path.is_relative_to(PACKAGE)
    name = _module(path) if inside else ""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            named = [(a.name, a.asname, a.name.rsplit(".", 1)[-1]) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = _import_target(node, package)
            named = [(f"{target}.{a.name}", a.asname, a.name) for a in node.names]
        else:
            continue
        for module, asname, own in named:
            if module in modules and asname is not None and asname != own:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {module} as {asname}")
    return found


def test_every_trayburn_module_is_imported_by_its_own_name():
    """A module answers to one name: `from .figures import periods`, never `periods as days` (an alias names a
    module that does not exist, and a reader looks for it)."""
    modules = {_module(p) for p in PACKAGE.rglob("*.py")}
    root = PACKAGE.parent
    files = [*PACKAGE.rglob("*.py"), *(root / "tests").rglob("*.py"), *(root / "bench").rglob("*.py")]
    found = [line for path in sorted(files) for line in _aliases(path, modules)]
    assert found == []


def test_the_tray_and_the_window_take_their_words_from_words_not_render():
    """render.py is the terminal's text; the words the CLI, tray and window share live in words.py."""
    edges, _ = _graph()
    gui = {
        name: "trayburn.render"
        for name, targets in edges.items()
        if name.startswith(("trayburn.tray", "trayburn.window")) and "trayburn.render" in targets
    }
    assert gui == {}
