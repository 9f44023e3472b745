"""The repository's BM25 term indexes, built once per `Repository` and kept while it lives:
what each non-test file names (`repomap.terms.file_terms`: its definitions and the
identifiers it uses) and what it says (`text_terms`: its whole text, comments and
strings too). `diagnoser.relevance` scores the report against both.

    term_index(repository).scores(terms("the cart total is wrong"))
"""

from __future__ import annotations

import weakref

from diagnoser.file_roles import is_test
from repomap import Repository
from repomap.terms import Document, TermIndex, file_terms, text_terms

_TERM_INDEXES: weakref.WeakKeyDictionary[Repository, TermIndex] = weakref.WeakKeyDictionary()
_TEXT_INDEXES: weakref.WeakKeyDictionary[Repository, TermIndex] = weakref.WeakKeyDictionary()


def term_index(repository: Repository) -> TermIndex:
    """The repository's BM25 index of what each non-test file names (`file_terms`),
    built once per Repository."""
    return _built(_TERM_INDEXES, repository, file_terms)


def text_index(repository: Repository) -> TermIndex:
    """The repository's BM25 index of what each non-test file says, its whole text
    (`text_terms`), built once per Repository."""
    return _built(_TEXT_INDEXES, repository, text_terms)


def _built(
    indexes: weakref.WeakKeyDictionary[Repository, TermIndex],
    repository: Repository,
    document: Document,
) -> TermIndex:
    found = indexes.get(repository)
    if found is None:
        found = TermIndex.build(
            repository.tags, keep=lambda path: not is_test(path), document=document
        )
        indexes[repository] = found
    return found
