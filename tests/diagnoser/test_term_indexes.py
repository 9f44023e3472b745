"""The repository's term indexes: built once per repository, over its non-test files."""

from __future__ import annotations

from pathlib import Path

from diagnoser.term_indexes import term_index, text_index
from diagnoser.workspace import Workspace
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
