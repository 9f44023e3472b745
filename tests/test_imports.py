"""The import graph of our packages: no module of `repomap`, `diagnoser` or `api` takes
part in an import cycle, and imports flow one way, `api → diagnoser → repomap`.

The graph is read from the source with `ast`: imports a module runs when it is imported
count (its top level, also inside `try`, `if` and class bodies); imports inside functions
and under `if TYPE_CHECKING:` do not. `from package import name` is an edge to
`package.name` when that is a module, else to the package (as import-linter reads it).

A cycle only the type checker sees (through `if TYPE_CHECKING:` imports) breaks nothing
at run time, yet it is still two modules that each need the other: those are checked
apart, with the ones a change in flight removes listed in KNOWN_TYPE_CHECKING_CYCLES.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("repomap", "diagnoser", "api")
LAYERS = {"repomap": set(), "diagnoser": {"repomap"}, "api": {"diagnoser", "repomap"}}
"""What each package may import of ours."""
KNOWN_TYPE_CHECKING_CYCLES: set[frozenset[str]] = set()
"""Cycles through `if TYPE_CHECKING:` imports that stand for now."""

Graph = dict[str, set[str]]


def modules(root: Path, packages: tuple[str, ...]) -> dict[str, Path]:
    """Every module of `packages` under `root` by dotted name (a package by its own)."""
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _runs_at_import(
    body: list[ast.stmt], *, type_checking: bool
) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements a module body runs when it is imported (with
    `type_checking`, also those under `if TYPE_CHECKING:`)."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if type_checking or not _is_type_checking(node.test):
                yield from _runs_at_import(node.body, type_checking=type_checking)
            yield from _runs_at_import(node.orelse, type_checking=type_checking)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _runs_at_import(block, type_checking=type_checking)
        elif isinstance(node, ast.With | ast.ClassDef):
            yield from _runs_at_import(node.body, type_checking=type_checking)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def import_graph(
    root: Path, packages: tuple[str, ...] = PACKAGES, *, type_checking: bool = False
) -> Graph:
    """Module → the modules of `packages` it imports when it is imported (with
    `type_checking`, also for the type checker only)."""
    known = modules(root, packages)
    graph: Graph = {}
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in _runs_at_import(tree.body, type_checking=type_checking):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
                continue
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                targets.add(submodule if submodule in known else base)
        graph[name] = {t for t in targets if t in known and t != name}
    return graph


def cycles(graph: Graph) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while (top := stack.pop()) != node:
                component.append(top)
            if component:
                found.append(frozenset([node, *component]))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_takes_part_in_an_import_cycle() -> None:
    found = cycles(import_graph(ROOT))
    assert not found, "import cycles: " + "; ".join(" ↔ ".join(sorted(c)) for c in found)


def test_no_cycle_stands_even_for_the_type_checker_but_the_known_ones() -> None:
    """The known ones must still stand, too: one that is gone leaves the list."""
    found = set(cycles(import_graph(ROOT, type_checking=True)))
    assert found == KNOWN_TYPE_CHECKING_CYCLES


def test_imports_flow_from_api_to_diagnoser_to_repomap() -> None:
    wrong = [
        f"{module} → {target}"
        for module, targets in import_graph(ROOT).items()
        for target in targets
        if (ours := target.split(".")[0]) != (mine := module.split(".")[0])
        and ours not in LAYERS[mine]
    ]
    assert not wrong


@pytest.fixture
def package(tmp_path: Path) -> Path:
    files = {
        "pkg/__init__.py": "from pkg.a import A\n",
        "pkg/a.py": (
            "from __future__ import annotations\nfrom typing import TYPE_CHECKING\n"
            "from . import b\nif TYPE_CHECKING:\n    from pkg.c import C\n"
            "A = 1\n"
        ),
        "pkg/b.py": "def later():\n    from pkg import a\n\n\nclass B:\n    import pkg.sub.d\n",
        "pkg/c.py": "try:\n    from .a import A\nexcept ImportError:\n    A = None\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/d.py": "from .. import c\nfrom ..c import A\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_the_graph_counts_what_runs_at_import_only(package: Path) -> None:
    assert import_graph(package, ("pkg",)) == {
        "pkg": {"pkg.a"},
        "pkg.a": {"pkg.b"},  # `from . import b`; not the TYPE_CHECKING import
        "pkg.b": {"pkg.sub.d"},  # a class body runs at import; a function does not
        "pkg.c": {"pkg.a"},  # inside `try`
        "pkg.sub": set(),
        "pkg.sub.d": {"pkg.c"},
    }
    assert cycles(import_graph(package, ("pkg",))) == [
        frozenset({"pkg.a", "pkg.b", "pkg.sub.d", "pkg.c"})
    ]
    typed = import_graph(package, ("pkg",), type_checking=True)
    assert typed["pkg.a"] == {"pkg.b", "pkg.c"}
