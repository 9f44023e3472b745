"""Words of text as the BM25 indexes count them: identifiers split at case changes and
underscores (`get_queryset` → get, queryset), compound identifiers also kept whole.

Pure text in, terms out; `Words`, a file's word counts, packed. Below both `tags` (which
counts a file's words when it tags it) and `terms` (the indexes), so the two need not
import each other.
"""

from __future__ import annotations

import re
from array import array
from collections import Counter
from collections.abc import Iterator, Mapping

_SEP = "\0"  # cannot occur in a term: tags.py replaces NUL in source text
MIN_WORD = 3
"""Shorter words (`id`, `of`, `to`) say nothing."""
MIN_COMPOUND = 4
"""Shorter compound identifiers are not kept whole."""
_WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|\d+")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_COMPOUND = re.compile(r"[A-Za-z0-9]_[A-Za-z0-9]|[a-z][A-Z]")
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
"""What `_WORD` and `_IDENTIFIER` matches lie within: identifiers, and numbers outside them."""


def words(text: str) -> list[str]:
    """Lower-cased words of `text`, identifiers split at case changes and underscores."""
    return [w.lower() for w in _WORD.findall(text) if len(w) >= MIN_WORD]


def terms(text: str) -> list[str]:
    """The BM25 terms of `text`: its words, then its compound identifiers whole."""
    compounds = (i for i in _IDENTIFIER.findall(text) if len(i) >= MIN_COMPOUND)
    return words(text) + [i.lower() for i in compounds if _COMPOUND.search(i)]


def count_terms(text: str) -> dict[str, int]:
    """`Counter(terms(text))`, about twice as fast on source code: each distinct token is
    split once, however often it occurs (a file's whole text is counted when it is tagged)."""
    found: Counter[str] = Counter()
    for token, count in Counter(_TOKEN.findall(text)).items():
        for word in _WORD.findall(token):
            if len(word) >= MIN_WORD:
                found[word.lower()] += count
        if len(token) >= MIN_COMPOUND and _COMPOUND.search(token):
            found[token.lower()] += count
    return dict(found)


class Words(Mapping[str, int]):
    """Term → how often a file's text holds it, kept packed: the terms as one string
    (NUL-separated, in first-seen order) and their counts as a uint32 array.

    A file's whole text has hundreds of distinct terms; as a dict per file they took
    ~100 MB per 10,000 files of Django (a string object and a dict slot per term, per
    file), while only the text index reads them, once (`counts`, which splits the string
    and leaves nothing behind). Not part of `FileTags`: even packed they were more than
    half the tags of a 20,000-file tree (51 of 88 MB), held for as long as the tags were,
    so the cache keeps them in a file of their own (`repomap.cache.WordsView`).
    docs/benchmarks.md has the numbers.
    """

    __slots__ = ("_counts", "_index", "_terms")

    def __init__(self, terms: str, counts: bytes) -> None:
        self._terms = terms
        self._counts = array("I", counts)
        self._index: dict[str, int] | None = None

    @classmethod
    def from_counts(cls, found: Mapping[str, int]) -> Words:
        return cls(_SEP.join(found), array("I", found.values()).tobytes())

    def packed(self) -> tuple[str, bytes]:
        return self._terms, self._counts.tobytes()

    def counts(self) -> Iterator[tuple[str, int]]:
        """(term, count) pairs, without building a lookup table."""
        return zip(iter(self), self._counts, strict=True)

    def __getitem__(self, term: str) -> int:
        if self._index is None:  # one-off lookups only: the text index reads `counts`
            self._index = {t: i for i, t in enumerate(self)}
        return self._counts[self._index[term]]

    def __iter__(self) -> Iterator[str]:
        return iter(self._terms.split(_SEP) if self._counts else ())

    def __len__(self) -> int:
        return len(self._counts)

    def __reduce__(self) -> tuple[type[Words], tuple[str, bytes]]:
        return (Words, self.packed())


NO_WORDS = Words("", b"")
