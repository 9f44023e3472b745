"""The whole map of a small fixture repo, checked against golden files.

Regenerate after an intended change: `UPDATE_GOLDEN=1 pytest tests/repomap/test_repository.py`,
then read the diff.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

from repomap import cache, cachefile, wordsfile
from repomap import repository as repository_module
from repomap.files import walk_files
from repomap.graph import ReferenceGraph
from repomap.repository import Repository
from repomap.tags import file_words
from repomap.words import Words
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
    arrays = ("def_file", "def_index", "def_ident", "def_line", "use_file", "link_file")
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


def test_a_value_just_built_is_read_back_with_its_large_parts_left_in_the_file(
    make_repo: MakeRepo, home: Path
) -> None:
    repository = Repository.open(make_repo({"a.py": "def f():\n    return 1\n"}), home=home)
    big = os.urandom(cachefile.TAIL_MIN_BYTES)
    seen: list[object] = []

    def decode(payload: dict[str, object]) -> object:
        seen.append(payload["big"])
        if refuse:
            raise ValueError("not this one")
        return ("read", payload["small"], payload["big"].read(0, 4))

    def derive() -> object:
        return repository.derived(
            "x.bin", lambda: ("built", b"s", big), encode=lambda v: {"small": v[1], "big": v[2]},
            decode=decode, leave=frozenset({"big"}),
        )  # fmt: skip

    refuse = False
    assert derive() == ("read", b"s", big[:4])  # built, saved, then read back from the file
    assert len(seen) == 1 and isinstance(seen[0], cachefile.Part)
    assert derive() == ("read", b"s", big[:4]) and len(seen) == 2  # warm: read, not built
    refuse, before = True, len(repository.warnings)
    # a value that does not read back: the built one, and said (its file is then rebuilt)
    assert derive() == ("built", b"s", big) and len(repository.warnings) == before + 1


def test_damaged_graph_cache_is_rebuilt(make_repo: MakeRepo, home: Path) -> None:
    root = make_repo({"a.py": "def f():\n    return g()\n", "b.py": "def g():\n    return 1\n"})
    first = Repository.open(root, home=home)
    expected = first.graph
    graph_file = Path(first.stats.cache_dir) / "graph.bin"
    graph_file.write_bytes(graph_file.read_bytes()[:-10])
    assert graphs_equal(Repository.open(root, home=home).graph, expected)
    assert Repository.open(root, home=home).map(tokens=100) == first.map(tokens=100)


def test_a_graph_cached_by_other_code_is_rebuilt_without_a_warning(
    make_repo: MakeRepo, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo({"a.py": "def f():\n    return g()\n", "b.py": "def g():\n    return 1\n"})
    expected = Repository.open(root, home=home).graph
    graph_file = Path(Repository.open(root, home=home).stats.cache_dir) / "graph.bin"
    key, payload = cachefile.read(graph_file) or (0, None)
    cachefile.write(graph_file, {**payload, "layout": "edges v0"}, key=key)
    calls: list[int] = []
    real_build = repository_module.build_graph
    monkeypatch.setattr(
        repository_module, "build_graph", lambda tags: calls.append(1) or real_build(tags)
    )
    again = Repository.open(root, home=home)
    assert graphs_equal(again.graph, expected) and calls == [1]
    assert again.warnings == []


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


WORDY = {"a.py": "# parse the date\ndef f():\n    return 'date'\n", "b.py": "x = 1\n"}


def words_of(repository: Repository) -> dict[str, dict[str, int]]:
    return {path: dict(words) for path, words in repository.words().items()}


def counted(root: Path) -> dict[str, dict[str, int]]:
    return {path: dict(file_words((root / path).read_bytes())) for path in sorted(WORDY)}


def test_words_are_kept_apart_from_the_tags_and_read_back_when_asked(
    make_repo: MakeRepo, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The text index's word counts are half of a large tree's tags: saved to words.bin
    with the tags, dropped from memory, read back only when the index is built."""
    root = make_repo(WORDY)
    cold = Repository.open(root, home=home)
    assert isinstance(cold.tags, cache.TagsView)
    assert all(cold.tags.cached(path).words is None for path in cold.tags)  # not held
    monkeypatch.setattr(Repository, "_count_words", lambda _, path: pytest.fail(path))
    assert words_of(cold) == counted(root)
    assert words_of(Repository.open(root, home=home)) == counted(root)
    (root / "b.py").write_text("x = 'date'\n")  # b parsed again, a's words carried over
    assert words_of(Repository.open(root, home=home)) == counted(root)


@pytest.mark.parametrize("damage", ["missing", "not a cache file", "other content"])
def test_words_the_cache_lost_are_counted_again_from_the_files(
    damage: str, make_repo: MakeRepo, home: Path
) -> None:
    root = make_repo(WORDY)
    words_file = Path(Repository.open(root, home=home).stats.cache_dir) / wordsfile.WORDS_FILE
    if damage == "missing":
        words_file.unlink()
    elif damage == "not a cache file":
        words_file.write_bytes(b"junk")
    else:
        stale = wordsfile.pack_words(Words.from_counts({"stale": 1}))  # another content's words
        wordsfile.save(words_file.parent, [(path, "another", stale) for path in WORDY], seeds=())
    assert words_of(Repository.open(root, home=home)) == counted(root)


def test_words_without_a_cache_come_from_the_parse(make_repo: MakeRepo) -> None:
    root = make_repo(WORDY)
    assert words_of(Repository.open(root, use_cache=False)) == counted(root)


def test_touching_a_file_leaves_the_words_file_as_it_is(make_repo: MakeRepo, home: Path) -> None:
    """A save that parsed nothing and keeps the same files writes tags.bin (new mtimes)
    but not words.bin again: it would be the same bytes, the largest cache file."""
    root = make_repo(WORDY)
    directory = Path(Repository.open(root, home=home).stats.cache_dir)
    words_file, tags_file = directory / wordsfile.WORDS_FILE, directory / cache.TAGS_FILE
    before = (words_file.stat().st_ino, tags_file.stat().st_ino)
    stat = (root / "a.py").stat()
    os.utime(root / "a.py", ns=(stat.st_atime_ns, stat.st_mtime_ns + 3_000_000_000))
    again = Repository.open(root, home=home)
    assert again.stats.parsed == 0
    assert words_file.stat().st_ino == before[0] and tags_file.stat().st_ino != before[1]
    assert words_of(again) == counted(root)
    (root / "b.py").unlink()  # one file fewer: written again, without it
    assert set(words_of(Repository.open(root, home=home))) == {"a.py"}
    assert set(wordsfile.StoredWords(directory)) == {"a.py"}


def test_a_warm_repository_holds_one_string_per_path(make_repo: MakeRepo, home: Path) -> None:
    """The walk, the tags read from the cache and the graph read from it name the same
    files: each path is one (interned) string, not a copy per structure."""
    layout = {
        "shop/cart.py": "from shop.tax import rate\ndef total():\n    return rate()\n",
        "shop/tax.py": "def rate():\n    return 2\n",
    }
    root = make_repo(layout)
    _ = Repository.open(root, home=home).graph  # built and cached
    warm = Repository.open(root, home=home)
    held = [*warm.tags, *warm.graph.paths, *(e.path for e in walk_files(root).files)]
    assert sorted(set(held)) == sorted(layout)
    assert all(sys.intern(path) is path for path in held)
