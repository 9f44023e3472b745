"""`TermIndex`: BM25 over what each file names or says — a search that needs no file reads.

A file's document is built from its tags: the words of every definition name (twice: a
file is about what it defines), of every identifier it uses (once per identifier), and
of its path (PATH_WEIGHT times) — or, with `text_terms`, the words of its whole text
(comments and strings too, counted when the file was tagged) and of its path. Words are
identifiers split at case changes and underscores (`get_queryset` → get, queryset);
compound identifiers are also kept whole (`get_queryset`), so a report that names one
exactly matches its users strongly.

    index = TermIndex.build(repository.tags, document=file_terms, keep=lambda p: "test" not in p)
    index.scores(terms("QuerySet.only() crashes after select_related()"))
"""

from __future__ import annotations

import functools
import math
import sys
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from repomap.cachefile import Part
from repomap.postings import WIDTHS, Gathered, by_term, term_key
from repomap.tags import FileTags
from repomap.words import Words, terms, words

BM25_K1 = 1.2
BM25_B = 0.75
DEFINITION_WEIGHT = 2
"""A definition's name counts this many times; a use counts once."""
PATH_WEIGHT = 3
"""A word of the file's path counts this many times."""
RECIPE = f"bm25 v1, definitions x{DEFINITION_WEIGHT}, path x{PATH_WEIGHT}"
"""Names how a cached index was made: one made another way is rebuilt. Change the
version when a document changes in a way these numbers do not say."""


NAME_TERMS_KEPT = 4096
"""Names whose terms `_name_terms` keeps while a term index is built: enough for the
common ones (`self`, `get`, `os` recur in every file). With 65,536 the names index of a
20,000-file tree rose 31 MB while it was built; with 4,096 it rose 16 MB, in the same
time (docs/benchmarks/memory.md)."""


@functools.lru_cache(maxsize=NAME_TERMS_KEPT)
def _name_terms(name: str) -> tuple[str, ...]:
    return tuple(terms(name))


def file_terms(path: str, tags: FileTags) -> Counter[str]:
    """One file's document: what it defines, what it uses, where it lives."""
    document: Counter[str] = Counter()
    for name, _ in tags.definitions.names_and_lines():
        for term in _name_terms(name):
            document[term] += DEFINITION_WEIGHT
    for name in tags.references:
        document.update(_name_terms(name))
    for word in words(path):
        document[word] += PATH_WEIGHT
    return document


def text_terms(path: str, said: Words) -> Counter[str]:
    """One file's document by what it says: every term of its text (`Repository.words`),
    where it lives."""
    document = Counter(dict(said.counts()))
    for word in words(path):
        document[word] += PATH_WEIGHT
    return document


Source = TypeVar("Source", FileTags, Words)
"""What a file's document is made from: its tags (`file_terms`) or its words (`text_terms`)."""


def _raw(values: npt.NDArray[Any]) -> memoryview:
    """An array's bytes, as a view: `marshal` and `cachefile` write it as `bytes`."""
    return values.data.cast("B")


STORED_PARTS = frozenset({"files", "counts"})
"""The payload's parts a loaded index leaves in its cache file (`cachefile.Part`): its
postings, read a term at a time. The text index of a 20,000-file tree held 13 MB of
them, of which a diagnosis reads a few hundred KB (docs/benchmarks/memory.md)."""


class _Stored:
    """A postings array left in the cache file: a slice is read when a query asks for it."""

    __slots__ = ("_part", "dtype")

    def __init__(self, part: Part, dtype: type[np.unsignedinteger[Any]]) -> None:
        self._part, self.dtype = part, np.dtype(dtype)
        if len(part) % self.dtype.itemsize:
            raise ValueError("postings that are not whole values")

    def __len__(self) -> int:
        return len(self._part) // self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return int(self.dtype.itemsize)

    def __getitem__(self, span: slice) -> npt.NDArray[np.unsignedinteger[Any]]:
        start, stop, _ = span.indices(len(self))
        size = self.dtype.itemsize
        raw = self._part.read(start * size, max(stop - start, 0) * size)
        return np.frombuffer(raw, self.dtype)

    def extremes(self) -> tuple[int, int]:
        """(smallest, largest) value, the part read once, a chunk at a time."""
        low, high = None, None
        for chunk in self._part.chunks():
            values = np.frombuffer(chunk, self.dtype)
            low = int(values.min()) if low is None else min(low, int(values.min()))
            high = int(values.max()) if high is None else max(high, int(values.max()))
        return (low, high) if low is not None and high is not None else (1, 0)


Postings = npt.NDArray[np.unsignedinteger[Any]] | _Stored
"""A term index's file numbers or counts: in memory (built) or in the cache file (read)."""


def _postings_array(value: object, width: object) -> Postings:
    """The file numbers or counts of a payload, `width` bytes each; ValueError (or what
    numpy raises) for anything else."""
    dtype = WIDTHS[width]  # type: ignore[index]  # KeyError for a width we never write
    return _Stored(value, dtype) if isinstance(value, Part) else np.frombuffer(value, dtype)  # type: ignore[call-overload]


def _extremes(values: Postings) -> tuple[int, int]:
    """(smallest, largest) of a postings array; (1, 0) when empty."""
    if isinstance(values, _Stored):
        return values.extremes()
    return (int(values.min()), int(values.max())) if len(values) else (1, 0)


class TermIndex:
    """Inverted index of file documents, scored with Okapi BM25.

    Compact: the vocabulary as the sorted 64-bit hashes of its terms (`term_key`; a
    term's number is its key's place) and, term by term, the numbers of the files holding
    it and how often (arrays, CSR-style: `_starts[t]:_starts[t + 1]`), files in the
    order they were given. As a dict of dicts (term → path → count) the text index of
    20,000 files took hundreds of MB (docs/benchmarks.md); as a dict of its 184,000 terms
    its vocabulary alone took 18 MB, their keys take 1.5. Two terms of one index share a
    key with a chance of about n²/2⁶⁵ (10⁻⁹ for that index): they would count as one.
    """

    _files: Postings
    _counts: Postings

    def __init__(
        self, documents: Iterable[tuple[str, Mapping[str, int]]], *, scratch: Path | None = None
    ) -> None:
        """Index `documents` (path, term → count), one at a time; their postings wait in
        an unnamed file in `scratch` while the vocabulary is made (`repomap.postings`)."""
        self._paths: list[str] = []
        # Not a list: 20,000 int objects made among the pass's temporaries kept the pages
        # those freed from going back (21 MB on tree B, docs/benchmarks/memory.md).
        lengths = array("q")
        distinct = array("i")  # per file, how many postings it has
        gathered = Gathered(scratch)
        for path, document in documents:
            for term, count in document.items():
                gathered.add(term, count)
            gathered.end_document()
            self._paths.append(path)
            lengths.append(sum(document.values()))
            distinct.append(len(document))
        gathered.flush()
        keys = np.frombuffer(gathered.vocabulary.keys, np.uint64)
        self._keys, places = np.unique(keys, return_inverse=True)  # one number per key
        ranks = places.astype(np.int32)  # a vocabulary number's place in key order
        del keys, places
        per_term = np.zeros(len(self._keys), np.int64)
        for numbers, _, _ in gathered.blocks():
            per_term += np.bincount(ranks[numbers], minlength=len(self._keys))
        self._starts = np.concatenate(([0], np.cumsum(per_term)))
        del per_term
        self._files, self._counts = by_term(gathered, ranks, distinct, self._starts)
        average = sum(lengths) / max(len(lengths), 1) or 1.0  # all empty: no posting to norm
        # BM25's length normalisation per file, as the dict version computed it per posting
        self._norms = BM25_K1 * (1 - BM25_B + BM25_B * np.array(lengths, np.float64) / average)

    @classmethod
    def build(
        cls,
        sources: Mapping[str, Source],
        *,
        document: Callable[[str, Source], Counter[str]],
        keep: Callable[[str], bool] = lambda _: True,
        scratch: Path | None = None,
    ) -> TermIndex:
        """Index every file of `sources` that `keep` accepts, each as `document` makes it
        (one document at a time: none outlives its turn); `scratch`: a directory the
        postings may wait in while they are gathered (the cache's)."""
        documents = ((path, document(path, sources[path])) for path in sources if keep(path))
        index = cls(documents, scratch=scratch)
        # A name's terms, cached while indexing: kept, they held ~15 MB on 20,000 files.
        _name_terms.cache_clear()
        return index

    def __len__(self) -> int:
        return len(self._paths)

    @property
    def paths(self) -> tuple[str, ...]:
        """The indexed files, in the order they were given."""
        return tuple(self._paths)

    def to_payload(self) -> dict[str, object]:
        """Plain values for the cache (`marshal`), arrays as their raw bytes — views, not
        copies (a copy of the text index's arrays added 25 MB to the peak of saving it): a
        warm start reads the index instead of building it (seconds on a large tree, and
        its peak memory)."""
        return {
            "recipe": RECIPE, "paths": tuple(self._paths), "keys": _raw(self._keys),
            "files": _raw(self._files[:]), "file_width": self._files.itemsize,
            "counts": _raw(self._counts[:]), "count_width": self._counts.itemsize,
            "starts": _raw(self._starts.astype(np.int64)), "norms": _raw(self._norms),
        }  # fmt: skip

    @classmethod
    def from_payload(cls, payload: Any) -> TermIndex:
        """The inverse of `to_payload`; ValueError for anything it cannot have made (the
        cache is checked, not trusted: `repomap/cache.py`)."""
        try:
            paths = payload["paths"]
            keys = np.frombuffer(payload["keys"], np.uint64)
            files = _postings_array(payload["files"], payload["file_width"])
            counts = _postings_array(payload["counts"], payload["count_width"])
            starts = np.frombuffer(payload["starts"], np.int64)
            norms = np.frombuffer(payload["norms"], np.float64)
            recipe = payload["recipe"]
        except Exception as exc:  # whatever shape marshal produced
            raise ValueError(f"an index of the wrong shape ({type(exc).__name__})") from exc
        if recipe != RECIPE:
            raise ValueError("an index made another way")
        if not (type(paths) is tuple and all(type(p) is str for p in paths)):
            raise ValueError("names that are not text")
        (first_file, last_file), (fewest, _) = _extremes(files), _extremes(counts)
        if not (
            len(starts) == len(keys) + 1
            and bool(np.all(keys[1:] > keys[:-1]))  # sorted, each once
            and len(files) == len(counts) == (int(starts[-1]) if len(starts) else -1)
            and int(starts[0]) == 0
            and bool(np.all(np.diff(starts) >= 0))
            and len(norms) == len(paths)
            and bool(np.all(np.isfinite(norms) & (norms > 0)))
            and (not len(files) or (first_file >= 0 and last_file < len(paths)))
            and (not len(counts) or fewest > 0)
        ):
            raise ValueError("an inconsistent index")
        index = cls.__new__(cls)
        index._keys = keys
        index._paths = list(map(sys.intern, paths))  # one string per path across indexes
        index._files, index._counts, index._starts, index._norms = files, counts, starts, norms
        return index

    def _postings(self, term: str) -> slice:
        key = np.uint64(term_key(term))
        number = int(np.searchsorted(self._keys, key))
        if number == len(self._keys) or self._keys[number] != key:
            return slice(0, 0)
        return slice(int(self._starts[number]), int(self._starts[number + 1]))

    def idf(self, term: str) -> float:
        """BM25's inverse document frequency of `term` (0 for a term no file has)."""
        postings = self._postings(term)
        found = postings.stop - postings.start
        if not found:
            return 0.0
        return math.log(1 + (len(self._paths) - found + 0.5) / (found + 0.5))

    def scores(self, query: Iterable[str]) -> dict[str, float]:
        """BM25 score of every file sharing a term with `query` (each term counted once),
        in the order the files were first matched."""
        total = len(self._paths)
        sums = np.zeros(total)
        seen = np.zeros(total, dtype=bool)
        matched: list[npt.NDArray[np.unsignedinteger[Any]]] = []
        for term in sorted(set(query)):  # one order: the same sums, bit for bit, every run
            postings = self._postings(term)
            found = postings.stop - postings.start
            if not found:
                continue
            idf = math.log(1 + (total - found + 0.5) / (found + 0.5))
            files, counts = self._files[postings], self._counts[postings].astype(np.float64)
            sums[files] += idf * counts * (BM25_K1 + 1) / (counts + self._norms[files])
            first = files[~seen[files]]
            seen[first] = True
            matched.append(first)
        if not matched:
            return {}
        hits = np.concatenate(matched)
        return dict(zip([self._paths[i] for i in hits.tolist()], sums[hits].tolist(), strict=True))
