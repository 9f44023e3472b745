"""The repository's term indexes: built once per repository, over its non-test files."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from diagnoser import term_indexes
from diagnoser.term_indexes import term_index, text_index
from diagnoser.workspace import Workspace
from repomap import cachefile
from repomap.terms import TermIndex
from repomap.words import terms
from tests.conftest import MakeRepo

FILES = {
    "app/cart.py": "def cart_total(items):\n    return sum(items)\n",
    "app/notes.py": "# the refund rounding lives here\ndef note():\n    return 1\n",
    "tests/test_cart.py": "def test_cart_total():\n    assert cart_total([]) == 0\n",
}


def test_what_a_file_names_is_indexed_and_test_files_are_not(
    make_repo: MakeRepo, home: Path
) -> None:
    repository = Workspace(make_repo(FILES), home=home).repository
    index = term_index(repository)
    assert set(index.scores(terms("cart_total"))) == {"app/cart.py"}
    assert term_index(repository) is index  # built once per repository


def test_what_a_file_says_is_indexed_comments_too(make_repo: MakeRepo, home: Path) -> None:
    repository = Workspace(make_repo(FILES), home=home).repository
    assert set(text_index(repository).scores(terms("refund rounding"))) == {"app/notes.py"}
    assert term_index(repository).scores(terms("refund rounding")) == {}
    assert text_index(repository) is text_index(repository)


def test_a_warm_repository_reads_its_indexes_instead_of_building_them(
    make_repo: MakeRepo, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(FILES)
    cold = Workspace(root, home=home).repository
    expected = (term_index(cold).scores(["cart"]), text_index(cold).scores(["refund"]))
    built: list[str] = []
    real_build = TermIndex.build
    monkeypatch.setattr(
        TermIndex, "build", lambda *a, **k: built.append("built") or real_build(*a, **k)
    )
    warm = Workspace(root, home=home).repository
    assert (term_index(warm).scores(["cart"]), text_index(warm).scores(["refund"])) == expected
    assert built == []
    cache_dir = Path(warm.stats.cache_dir)
    assert {"terms.bin", "text.bin"} <= {p.name for p in cache_dir.iterdir()}


def test_two_threads_asking_at_once_build_an_index_once(
    make_repo: MakeRepo, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two jobs starting together on a cold repository: one builds, the other waits."""
    repository = Workspace(make_repo(FILES), home=home).repository
    built: list[str] = []
    real_build = TermIndex.build

    def slow_build(*args: object, **kwargs: object) -> TermIndex:
        built.append("built")
        time.sleep(0.3)  # long enough for the other thread to arrive
        return real_build(*args, **kwargs)

    monkeypatch.setattr(TermIndex, "build", slow_build)
    found: list[TermIndex] = []
    threads = [
        threading.Thread(target=lambda: found.append(text_index(repository))) for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert built == ["built"] and len(found) == 2 and found[0] is found[1]


def test_an_index_of_other_files_is_rebuilt(
    make_repo: MakeRepo, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Which files are tests is our rule, not the repository's: when it changes, an index
    saved under the old rule is not used."""
    root = make_repo(FILES)
    term_index(Workspace(root, home=home).repository)
    monkeypatch.setattr(term_indexes, "is_test", lambda path: False)
    repository = Workspace(root, home=home).repository
    assert set(term_index(repository).scores(terms("cart_total"))) == {
        "app/cart.py",
        "tests/test_cart.py",
    }
    assert repository.warnings == []  # not damage: an index made for another rule


def test_an_index_made_another_way_is_rebuilt_and_a_damaged_one_said(
    make_repo: MakeRepo, home: Path
) -> None:
    root = make_repo(FILES)
    repository = Workspace(root, home=home).repository
    expected = term_index(repository).scores(["cart"])
    saved = Path(repository.stats.cache_dir) / "terms.bin"
    key, payload = cachefile.read(saved) or (0, {})
    for change, warned in (({"recipe": "bm25 v0"}, False), ({"keys": 7}, True)):
        cachefile.write(saved, {**payload, **change}, key=key)
        again = Workspace(root, home=home).repository
        assert term_index(again).scores(["cart"]) == expected
        assert any("terms.bin was corrupt" in w.reason for w in again.warnings) is warned
