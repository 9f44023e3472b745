"""The whole map of a small fixture repo, checked against golden files.

Regenerate after an intended change: `UPDATE_GOLDEN=1 pytest tests/repomap/test_repository.py`,
then read the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from repomap import repository as repository_module
from repomap.graph import ReferenceGraph
from repomap.repository import Repository
from tests.conftest import FIXTURES, GOLDEN_REPO, MakeRepo

CASES = {
    "golden_repo.map": {"tokens": 2048, "focus": []},
    "golden_repo.focus_api.map": {"tokens": 80, "focus": ["notes/api.py"]},
    "golden_repo.focus_js.map": {"tokens": 60, "focus": ["request"]},
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_map_matches_golden_file(name: str, home: Path) -> None:
    case = CASES[name]
    text = Repository.open(GOLDEN_REPO, home=home).map(
        tokens=int(case["tokens"]),  # type: ignore[call-overload]
        focus=list(case["focus"]),  # type: ignore[call-overload]
    )
    golden = FIXTURES / name
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text()


def test_warm_open_reuses_everything(home: Path) -> None:
    Repository.open(GOLDEN_REPO, home=home)
    warm = Repository.open(GOLDEN_REPO, home=home)
    assert (warm.stats.parsed, warm.stats.reused) == (0, warm.stats.files)
    assert warm.stats.files == 7


def graphs_equal(a: ReferenceGraph, b: ReferenceGraph) -> bool:
    arrays = ("def_file", "def_index", "def_ident", "def_line", "edge_src", "pair_dst")
    return (
        a.paths == b.paths
        and a.idents == b.idents
        and all(np.array_equal(getattr(a, n), getattr(b, n)) for n in arrays)
        and np.allclose(a.use_weight, b.use_weight)
    )


def test_graph_is_cached_for_the_exact_tags_it_was_built_from(
    make_repo: MakeRepo, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo({"a.py": "def f():\n    return g()\n", "b.py": "def g():\n    return 1\n"})
    built = Repository.open(root, home=home).graph
    calls: list[int] = []
    real_build = repository_module.build_graph
    monkeypatch.setattr(
        repository_module, "build_graph", lambda tags: calls.append(1) or real_build(tags)
    )
    warm = Repository.open(root, home=home)
    assert graphs_equal(warm.graph, built) and calls == []
    # a cached graph names its files with the tags' own strings, not a second copy of each
    assert all(a is b for a, b in zip(warm.graph.paths, sorted(warm.tags), strict=True))
    (root / "b.py").write_text("def g():\n    return 2\n\n\ndef h():\n    return f()\n")
    edited = Repository.open(root, home=home)
    assert "h" in edited.graph.idents and calls == [1]  # stale graph not used


def test_damaged_graph_cache_is_rebuilt(make_repo: MakeRepo, home: Path) -> None:
    root = make_repo({"a.py": "def f():\n    return g()\n", "b.py": "def g():\n    return 1\n"})
    first = Repository.open(root, home=home)
    expected = first.graph
    graph_file = Path(first.stats.cache_dir) / "graph.bin"
    graph_file.write_bytes(graph_file.read_bytes()[:-10])
    assert graphs_equal(Repository.open(root, home=home).graph, expected)
    assert Repository.open(root, home=home).map(tokens=100) == first.map(tokens=100)


def test_touching_a_file_keeps_the_cached_graph(
    make_repo: MakeRepo, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo({"a.py": "def f():\n    return g()\n", "b.py": "def g():\n    return 1\n"})
    Repository.open(root, home=home).map(tokens=100)
    stat = (root / "a.py").stat()
    os.utime(root / "a.py", ns=(stat.st_atime_ns, stat.st_mtime_ns + 3_000_000_000))
    calls: list[int] = []
    real_build = repository_module.build_graph
    monkeypatch.setattr(
        repository_module, "build_graph", lambda tags: calls.append(1) or real_build(tags)
    )
    assert Repository.open(root, home=home).graph.size == 2
    assert calls == []
