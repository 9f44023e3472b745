"""The repository's BM25 term indexes, built once per `Repository` and kept while it lives:
what each non-test file names (`repomap.terms.file_terms`: its definitions and the
identifiers it uses) and what it says (`text_terms`: its whole text, comments and
strings too). `diagnoser.relevance` scores the report against both.

    term_index(repository).scores(terms("the cart total is wrong"))
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable

from diagnoser.file_roles import is_test
from repomap import Repository
from repomap.terms import RECIPE, STORED_PARTS, TermIndex, file_terms, text_terms

TERMS_FILE = "terms.bin"
TEXT_FILE = "text.bin"
"""Where each index is kept in the repository's cache directory (`Repository.derived`):
a warm start reads it instead of building it."""
INDEX_FILES = (TERMS_FILE, TEXT_FILE)
"""The files a repository's term indexes keep open while they live: their postings are
read from them a term at a time (`repomap.terms.STORED_PARTS`)."""

Keep = Callable[[str], bool]

_TERM_INDEXES: weakref.WeakKeyDictionary[Repository, TermIndex] = weakref.WeakKeyDictionary()
_TEXT_INDEXES: weakref.WeakKeyDictionary[Repository, TermIndex] = weakref.WeakKeyDictionary()
_BUILDING = threading.Lock()
"""One index read or built at a time: two jobs that start together on a cold repository
would each build the same index (twice the time, and twice the build's memory at once —
a 20,000-file text index needs about 40 MB above what it keeps while it is built)."""


def term_index(repository: Repository) -> TermIndex:
    """The repository's BM25 index of what each non-test file names (`file_terms`),
    built once per Repository."""

    def build(keep: Keep) -> TermIndex:
        return TermIndex.build(
            repository.tags, keep=keep, document=file_terms, scratch=repository.cache_dir
        )

    return _built(_TERM_INDEXES, repository, TERMS_FILE, build)


def text_index(repository: Repository) -> TermIndex:
    """The repository's BM25 index of what each non-test file says, its whole text
    (`text_terms`), built once per Repository — from the words the cache keeps apart
    from the tags (`Repository.words`), read only while it is built."""

    def build(keep: Keep) -> TermIndex:
        return TermIndex.build(
            repository.words(), keep=keep, document=text_terms, scratch=repository.cache_dir
        )

    return _built(_TEXT_INDEXES, repository, TEXT_FILE, build)


def _built(
    indexes: weakref.WeakKeyDictionary[Repository, TermIndex],
    repository: Repository,
    name: str,
    build: Callable[[Keep], TermIndex],
) -> TermIndex:
    found = indexes.get(repository)
    if found is not None:
        return found
    with _BUILDING:
        found = indexes.get(repository)  # another thread's, made while this one waited
        if found is None:
            found = indexes[repository] = _read_or_build(repository, name, build)
    return found


def _read_or_build(
    repository: Repository, name: str, build: Callable[[Keep], TermIndex]
) -> TermIndex:
    kept = tuple(path for path in repository.tags if not is_test(path))
    keep = frozenset(kept).__contains__  # the test-file rule, applied once

    def read(payload: object) -> TermIndex | None:
        if type(payload) is dict and payload.get("recipe") != RECIPE:
            return None  # made by other code: built again
        index = TermIndex.from_payload(payload)
        # Which files are tests is our rule, not the repository's, and it may change.
        return index if index.paths == kept else None

    return repository.derived(
        name, lambda: build(keep), encode=TermIndex.to_payload, decode=read,
        leave=STORED_PARTS,
    )  # fmt: skip
