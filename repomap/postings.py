"""Postings gathered while a term index (`repomap.terms.TermIndex`) is built: each
term's 64-bit key, the vocabulary numbered as documents come, their postings set aside in
blocks (`repomap.spill`), then laid out term after term.

    gathered = Gathered(scratch)
    for term, count in document.items():
        gathered.add(term, count)
    gathered.end_document()
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from repomap.spill import Aside, read_back, spill_in

WIDTHS: dict[int, type[np.unsignedinteger[Any]]] = {2: np.uint16, 4: np.uint32}
"""A posting's file number and count by their width in bytes: two while they fit (at
most 65,536 files; counts under 65,536, as nearly all are), else four — the two largest
arrays of an index at half their memory."""


def term_key(term: str) -> int:
    """A term's place in the vocabulary: the first 64 bits of its BLAKE2b hash — the same
    in every process (Python's `hash` of a string is not), so it can be cached."""
    digest = hashlib.blake2b(term.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


BLOCK_POSTINGS = 1 << 16
"""Postings gathered before they are numbered and set aside as a block (`Gathered`),
always whole documents: their distinct terms are held as strings until then."""


class _Vocabulary:
    """Numbers a build's terms as they are met, without a Python object per term kept:
    the terms of the block being gathered by their Python hash (cached in each string),
    then, once a block is numbered, every term met as typed arrays — its hash (sorted)
    and its number — and, by number, its key (`term_key`). As one dict of term → number,
    the 184,000 terms of a 20,000-file text index took 21–26 MB at the build's peak.
    Two terms that share a hash count as one, as two that share a key do
    (`repomap.terms.TermIndex`)."""

    def __init__(self) -> None:
        self._block: dict[int, str] = {}  # hash → term, of the block being gathered
        self._hashes = np.empty(0, np.int64)  # every term met, sorted
        self._numbers = np.empty(0, np.int32)  # the number of each of `_hashes`
        self.keys = array("Q")  # by number: each term's key

    def see(self, term: str) -> int:
        """`term`'s hash, the term kept until its block is numbered."""
        found = hash(term)
        self._block.setdefault(found, term)
        return found

    def number(self, hashes: npt.NDArray[np.int64]) -> npt.NDArray[np.int32]:
        """The numbers of a block's terms, given by their hashes (each `see`n): terms met
        before keep theirs, new ones are numbered next, in the order of their hashes."""
        distinct = np.unique(hashes)
        place = np.searchsorted(self._hashes, distinct)
        known = place < len(self._hashes)
        known[known] = self._hashes[place[known]] == distinct[known]
        new, at = distinct[~known], place[~known]
        if len(new):
            first = len(self.keys)
            self.keys.extend(term_key(self._block[found]) for found in new.tolist())
            self._hashes = np.insert(self._hashes, at, new)
            self._numbers = np.insert(self._numbers, at, np.arange(first, len(self.keys)))
        self._block = {}
        return self._numbers[np.searchsorted(self._hashes, hashes)]


@dataclass(frozen=True, slots=True)
class _Block:
    """Postings of whole documents, gathered (`Gathered`): each part in memory or set
    aside."""

    numbers: Aside  # int32, each a term's number in the vocabulary
    counts: Aside
    width: int  # bytes per count
    documents: int


class Gathered:
    """Every document's postings as they are met — each term's number in the vocabulary
    (`_Vocabulary`, numbered a block at a time) and its count — in blocks of whole
    documents, set aside (`repomap.spill`) in `scratch` when one is given, else kept in
    memory. On a 20,000-file text index they are 3.5 million postings: held, they (21 MB)
    and the vocabulary (about 26 MB) were the build's peak, and laying them out by term
    took 35 MB more; aside, the build holds the typed vocabulary, then the laid-out arrays
    (docs/benchmarks/memory.md)."""

    def __init__(self, scratch: Path | None) -> None:
        self._spill = spill_in(scratch)
        self._blocks: list[_Block] = []
        self.vocabulary = _Vocabulary()
        self._hashes, self._counts = array("q"), array("H")  # of the block being gathered
        self._documents = 0  # in the block being gathered
        self.widest = 2  # bytes per count: two while every count fits, else four

    def add(self, term: str, count: int) -> None:
        self._hashes.append(self.vocabulary.see(term))
        try:
            self._counts.append(count)
        except OverflowError:  # a count past two bytes: this block's in four
            self._counts = array("I", self._counts)
            self._counts.append(count)
            self.widest = 4

    def end_document(self) -> None:
        self._documents += 1
        if len(self._hashes) >= BLOCK_POSTINGS:
            self.flush()

    def flush(self) -> None:
        """The block being gathered, numbered and set aside (a no-op when it holds no
        document)."""
        if not self._documents:
            return
        numbers = self.vocabulary.number(np.frombuffer(self._hashes, np.int64)).tobytes()
        counts = self._counts.tobytes()
        keep = self._spill.add if self._spill is not None else bytes  # a failed write: kept
        self._blocks.append(
            _Block(keep(numbers), keep(counts), self._counts.itemsize, self._documents)
        )
        self._hashes, self._counts, self._documents = array("q"), array("H"), 0

    def blocks(self) -> Iterator[tuple[npt.NDArray[np.int32], npt.NDArray[Any], int]]:
        """Each block's (term numbers, counts, documents), read back in order."""
        for block in self._blocks:
            yield (
                np.frombuffer(read_back(block.numbers), np.int32),
                np.frombuffer(read_back(block.counts), WIDTHS[block.width]),
                block.documents,
            )


def by_term(
    gathered: Gathered,
    ranks: npt.NDArray[np.int32],
    distinct: array[int],
    starts: npt.NDArray[np.int64],
) -> tuple[npt.NDArray[np.unsignedinteger[Any]], npt.NDArray[np.unsignedinteger[Any]]]:
    """The postings (file after file, `distinct[f]` each) laid out term after term from
    `starts` (a term numbered n in the vocabulary is `ranks[n]` there), files in order
    within a term: each posting's file and count. A counting sort, one file at a time — a
    file holds a term at most once, so its postings go to distinct places at once. A
    stable argsort did the same with an int64 permutation and the sort's own buffer, 42
    MB more at the peak of a 20,000-file text index."""
    total = int(starts[-1])
    files = np.empty(total, WIDTHS[2 if len(distinct) <= 1 << 16 else 4])
    placed = np.empty(total, WIDTHS[gathered.widest])
    cursor = starts[:-1].copy()  # where each term's next posting goes
    number = 0
    for numbers, counts, documents in gathered.blocks():
        terms_of = ranks[numbers]
        first = 0
        for size in distinct[number : number + documents]:
            terms = terms_of[first : first + size]
            places = cursor[terms]
            files[places] = number
            placed[places] = counts[first : first + size]
            cursor[terms] += 1
            first += size
            number += 1
    return files, placed
