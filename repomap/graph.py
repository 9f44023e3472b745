"""`ReferenceGraph`: who uses what, as flat numpy arrays — the focus-independent part of ranking.

Built once per set of tags (in Python, one pass over definitions and references); the
join of references to their definers is vectorised. Ranking then only reweights and
iterates, so a new focus costs milliseconds.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from repomap.constants import (
    COMMON_IDENT_DEFINERS,
    COMMON_IDENT_WEIGHT,
    COPY_EDGE_WEIGHT,
    LONG_IDENT_CHARS,
    LONG_IDENT_WEIGHT,
    MAX_DEFINERS,
    PRIVATE_IDENT_WEIGHT,
    REVERSE_EDGE_WEIGHT,
    SHORT_IDENT_CHARS,
    SHORT_IDENT_WEIGHT,
)
from repomap.copies import is_copy, source_stems
from repomap.tags import FileTags

IntArray = npt.NDArray[np.int64]
Index = npt.NDArray[np.int32]
"""What the graph keeps: numbers of files, definitions and identifiers (< 2**31), as int32
— half of int64, and a warm start uses the cached bytes as they are, with no copy."""
_PAIR = 2**31
"""Packs (identifier, file) into one int64 so numpy can sort and dedupe pairs."""
EDGE_CHUNK = 1 << 20
"""Edges numbered at a time while building (`_numbered`)."""
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class ReferenceGraph:
    paths: tuple[str, ...]
    """Files, sorted; a file's number is its index here."""
    idents: dict[str, int]
    """Defined identifier → its number."""
    def_file: Index
    """Every definition, file by file in path order: its file's number,"""
    def_index: Index
    """its position in that file's `definitions`,"""
    def_ident: Index
    """its identifier's number,"""
    def_line: Index
    """and its signature line."""
    edge_src: Index
    """Source file of each edge. The first half are uses, referencing file → defining
    file; edge `uses + i` is use `i` reversed, defining file → referencing file, at
    REVERSE_EDGE_WEIGHT — so a use's target is `edge_src[uses + i]`. (An edge's target is
    also its pair's, `pair_dst[edge_pair]`: no per-edge target is kept.)"""
    use_ident: Index
    """The identifier of each use (both its edges'),"""
    use_weight: FloatArray
    """and its static weight: identifier quality × sqrt(number of uses). Kept per use, not
    per edge, with `file_weight` apart: the two halves would repeat it (an edge is 24
    bytes, not 36: 66 MB on a 20,000-file tree); `weights` makes each edge's."""
    file_weight: FloatArray
    """Per file: COPY_EDGE_WEIGHT for a copy of code (`repomap.copies`: a single header
    defining every name would otherwise collect the rank of all of them), else 1; an
    edge's weight is its use's × its target's."""
    edge_pair: Index
    """Each edge's (source file, target file) pair, an index into `pair_src`/`pair_dst`:"""
    pair_src: Index
    pair_dst: Index
    """PageRank iterates over unique file pairs, far fewer than edges."""
    edge_flow: Index
    """Each edge's (target file, identifier) slot: rank flowing into that definition name."""
    def_flow: Index
    """Each definition's flow slot, or -1 when nothing references it."""

    @property
    def size(self) -> int:
        return len(self.paths)

    @property
    def uses(self) -> int:
        """How many uses, half the edges."""
        return len(self.use_ident)

    def chunks(self, size: int) -> Iterator[slice]:
        """The edges in slices of at most `size`, none across the two halves."""
        for start, stop in ((0, self.uses), (self.uses, len(self.edge_src))):
            yield from (slice(at, min(at + size, stop)) for at in range(start, stop, size))

    def weights(self, part: slice) -> FloatArray:
        """The static weight of each edge of `part` (one of `chunks`), a new array."""
        uses, half = _in_uses(part, self.uses), self.uses
        if part.start < half:  # use → its definer, into the target of its reversed edge
            targets = self.edge_src[uses.start + half : uses.stop + half]
            return self.use_weight[uses] * self.file_weight[targets]
        reverse = self.use_weight[uses] * REVERSE_EDGE_WEIGHT
        return reverse * self.file_weight[self.edge_src[uses]]  # into the use's file

    def identifiers(self, part: slice) -> Index:
        """The identifier of each edge of `part` (one of `chunks`)."""
        return self.use_ident[_in_uses(part, self.uses)]

    def definers(self, ident_ids: IntArray) -> Index:
        """Files defining any of the given identifiers."""
        return np.unique(self.def_file[np.isin(self.def_ident, ident_ids)])

    def neighbours(self, files: IntArray) -> set[int]:
        """Files that use or are used by any of `files` (edges both ways)."""
        found = set(self.pair_dst[np.isin(self.pair_src, files)].tolist())
        return found | set(self.pair_src[np.isin(self.pair_dst, files)].tolist())

    def to_payload(self) -> dict[str, object]:
        """Plain values for the cache (`marshal`): names, and arrays as raw bytes
        (indices as int32 to halve the file; weights stay float64 so a warm map is
        bit-for-bit the cold one)."""
        arrays = {
            name: getattr(self, name).astype(dtype).tobytes() for name, dtype in _STORED.items()
        }
        return {"paths": self.paths, "idents": tuple(self.idents), **arrays}

    @classmethod
    def from_payload(cls, payload: Any) -> ReferenceGraph:
        """The inverse of `to_payload`. Raises ValueError for anything `to_payload` cannot
        have made: cached bytes are checked, not trusted (see `repomap/cache.py`)."""
        try:
            arrays: dict[str, Any] = {
                name: np.frombuffer(payload[name], dtype=dtype)  # read-only views, no copy
                for name, dtype in _STORED.items()
            }
            paths, names = payload["paths"], payload["idents"]
            if not (
                type(paths) is tuple
                and type(names) is tuple
                and all(type(path) is str for path in paths)
                and all(type(name) is str for name in names)
            ):
                raise ValueError("names that are not text")
        except ValueError:
            raise
        except Exception as exc:  # whatever shape marshal produced
            raise ValueError(f"a graph of the wrong shape ({type(exc).__name__})") from exc
        # Interned: the same strings as the definitions' names (`cache._definition`).
        idents = {sys.intern(name): number for number, name in enumerate(names)}
        graph = cls(paths=paths, idents=idents, **arrays)
        problem = _inconsistency(graph, identifiers=len(names))
        if problem:
            raise ValueError(f"an inconsistent graph ({problem})")
        return graph


def _inconsistency(graph: ReferenceGraph, *, identifiers: int) -> str:
    """What is wrong with a graph read from outside, or "" — every index that ranking
    follows must land inside the array it indexes."""
    defs, uses, pairs = len(graph.def_file), graph.uses, len(graph.pair_src)
    edges = 2 * uses  # each use and its reverse
    lengths = {
        **{name: defs for name in ("def_index", "def_ident", "def_line", "def_flow")},
        **{name: edges for name in ("edge_src", "edge_pair", "edge_flow")},
        "use_weight": uses,
        "file_weight": graph.size,
        "pair_dst": pairs,
    }
    for name, length in lengths.items():
        if len(getattr(graph, name)) != length:
            return f"{name} has {len(getattr(graph, name))} entries, expected {length}"
    if identifiers != len(graph.idents) or list(graph.paths) != sorted(set(graph.paths)):
        return "duplicate or unsorted names"
    flows = int(graph.edge_flow.max()) + 1 if edges else 0
    bounds = {
        "def_file": (0, graph.size), "def_ident": (0, identifiers), "def_flow": (-1, flows),
        "edge_src": (0, graph.size),
        "use_ident": (0, identifiers), "edge_pair": (0, pairs), "edge_flow": (0, flows),
        "pair_src": (0, graph.size), "pair_dst": (0, graph.size),
    }  # fmt: skip
    for name, (low, high) in bounds.items():
        values = getattr(graph, name)
        if len(values) and (int(values.min()) < low or int(values.max()) >= high):
            return f"{name} out of range"
    # Definitions come file by file, numbered from 0 within each file.
    first = np.searchsorted(graph.def_file, graph.def_file, side="left")
    if np.any(np.diff(graph.def_file) < 0) or np.any(graph.def_index != np.arange(defs) - first):
        return "definitions out of order"
    if not (np.all(np.isfinite(graph.use_weight)) and np.all(np.isfinite(graph.file_weight))):
        return "weights that are not numbers"
    return ""


_INDEX_ARRAYS = (
    "def_file", "def_index", "def_ident", "def_line", "edge_src", "use_ident",
    "edge_pair", "pair_src", "pair_dst", "edge_flow", "def_flow",
)  # fmt: skip
_STORED: dict[str, type[np.generic]] = {
    **dict.fromkeys(_INDEX_ARRAYS, np.int32),
    "use_weight": np.float64,
    "file_weight": np.float64,
}


def _in_uses(part: slice, uses: int) -> slice:
    """The uses whose edges `part` is (a slice within one half)."""
    return part if part.start < uses else slice(part.start - uses, part.stop - uses)


def build_graph(tags: Mapping[str, FileTags]) -> ReferenceGraph:
    paths = tuple(sorted(tags))
    idents: dict[str, int] = {}
    # typed arrays, not lists: a list holds an 8-byte pointer and often an int object per
    # entry, and 20,000 files have millions of references
    def_file, def_index, def_ident, def_line = (array("q") for _ in range(4))
    for number, path in enumerate(paths):
        for index, definition in enumerate(tags[path].definitions):
            def_file.append(number)
            def_index.append(index)
            def_ident.append(idents.setdefault(definition.name, len(idents)))
            def_line.append(definition.line)
    ref_file, ref_ident, ref_count = (array("q") for _ in range(3))
    for number, path in enumerate(paths):
        for name, uses in tags[path].references.counts():
            known = idents.get(name)
            if known is not None:
                ref_file.append(number)
                ref_ident.append(known)
                ref_count.append(uses)
    defs_file = np.frombuffer(def_file, dtype=np.int64)
    defs_ident = np.frombuffer(def_ident, dtype=np.int64)
    src, dst, edge_ident, count = _join(
        defs_file,
        defs_ident,
        refs=(np.frombuffer(ref_file, dtype=np.int64), np.frombuffer(ref_ident, dtype=np.int64)),
        ref_count=np.frombuffer(ref_count, dtype=np.int64).astype(np.float64),
        ident_count=len(idents),
    )
    quality = _ident_quality(idents, defs_file, defs_ident, used=edge_ident)
    use_weight = quality[edge_ident] * np.sqrt(count)
    del count
    # Every use also points back, weaker: a file's callers are its neighbours too.
    # What the graph keeps is int32 from here on: an int64 array of every edge is 80 MB
    # on a 20,000-file tree, and this is where building it peaked.
    small = np.int32
    sources: Index = np.concatenate([src, dst]).astype(small)
    targets: Index = np.concatenate([dst, src]).astype(small)
    del src, dst
    use_ident: Index = edge_ident.astype(small)
    del edge_ident
    pairs, edge_pair = _numbered(sources, targets)
    flows, edge_flow = _numbered(targets, np.concatenate([use_ident, use_ident]))
    del targets
    def_keys = defs_file * _PAIR + defs_ident
    slot = np.clip(np.searchsorted(flows, def_keys), 0, max(len(flows) - 1, 0))
    found = flows[slot] == def_keys if len(flows) else np.zeros(len(def_keys), dtype=bool)
    return ReferenceGraph(
        paths=paths,
        idents=idents,
        def_file=defs_file.astype(small),
        def_index=np.frombuffer(def_index, dtype=np.int64).astype(small),
        def_ident=defs_ident.astype(small),
        def_line=np.frombuffer(def_line, dtype=np.int64).astype(small),
        edge_src=sources,
        use_ident=use_ident,
        use_weight=use_weight,
        file_weight=_copy_weights(paths),
        edge_pair=edge_pair,
        pair_src=(pairs // _PAIR).astype(small),
        pair_dst=(pairs % _PAIR).astype(small),
        edge_flow=edge_flow,
        def_flow=np.where(found, slot, -1).astype(small),
    )


def _numbered(high: Index, low: Index) -> tuple[IntArray, Index]:
    """The distinct (high, low) pairs, packed and sorted, and each edge's number among
    them: `np.unique(high * _PAIR + low, return_inverse=True)`, with less memory —
    unique's inverse takes four edge-sized int64 arrays at once; here the keys are
    sorted in place and each edge finds its number by binary search, EDGE_CHUNK at a time."""
    keys = high.astype(np.int64)
    keys *= _PAIR
    keys += low
    keys.sort()
    distinct = keys[np.concatenate(([True], keys[1:] != keys[:-1]))] if len(keys) else keys
    del keys
    numbers = np.empty(len(high), dtype=np.int32)
    for start in range(0, len(high), EDGE_CHUNK):
        part = slice(start, start + EDGE_CHUNK)
        numbers[part] = np.searchsorted(distinct, high[part].astype(np.int64) * _PAIR + low[part])
    return distinct, numbers


def _join(
    def_file: IntArray,
    def_ident: IntArray,
    *,
    refs: tuple[IntArray, IntArray],
    ref_count: FloatArray,
    ident_count: int,
) -> tuple[IntArray, IntArray, IntArray, FloatArray]:
    """One edge per (referencing file, defining file, identifier), self-edges dropped."""
    ref_file, ref_ident = refs
    pairs = np.unique(def_ident * _PAIR + def_file)
    pair_ident, pair_file = pairs // _PAIR, pairs % _PAIR
    start = np.searchsorted(pair_ident, np.arange(ident_count), side="left")
    end = np.searchsorted(pair_ident, np.arange(ident_count), side="right")
    fan = (end - start)[ref_ident]
    # A name defined in that many files (`__init__`, `setUp`) says nothing about which one.
    fan[fan > MAX_DEFINERS] = 0
    total = int(fan.sum())
    rows = np.repeat(np.arange(len(ref_ident)), fan)
    offsets = np.arange(total) - np.repeat(np.cumsum(fan) - fan, fan)
    dst = pair_file[start[ref_ident][rows] + offsets]
    src = ref_file[rows]
    keep = src != dst
    return src[keep], dst[keep], ref_ident[rows][keep], ref_count[rows][keep]


def _ident_quality(
    idents: dict[str, int], def_file: IntArray, def_ident: IntArray, used: IntArray
) -> FloatArray:
    """How much a use of each identifier says about the files that define it (for `used` ones)."""
    definer_count = np.bincount(
        np.unique(def_ident * _PAIR + def_file) // _PAIR, minlength=len(idents)
    )
    names = list(idents)
    quality = np.ones(len(idents))
    for number in np.unique(used).tolist():
        name = names[number]
        weight = 1.0
        if len(name) >= LONG_IDENT_CHARS and ("_" in name.strip("_") or not name.islower()):
            weight *= LONG_IDENT_WEIGHT
        if name.startswith("_"):
            weight *= PRIVATE_IDENT_WEIGHT
        if len(name) <= SHORT_IDENT_CHARS:
            weight *= SHORT_IDENT_WEIGHT
        if definer_count[number] > COMMON_IDENT_DEFINERS:
            weight *= COMMON_IDENT_WEIGHT
        # A use of a name defined in k files points at one of them: each gets 1/k.
        quality[number] = weight / max(int(definer_count[number]), 1)
    return quality


def _copy_weights(paths: tuple[str, ...]) -> FloatArray:
    """Per file: COPY_EDGE_WEIGHT for a copy of code (`repomap.copies`), else 1."""
    stems = source_stems(paths)
    return np.array([COPY_EDGE_WEIGHT if is_copy(p, stems) else 1.0 for p in paths], np.float64)
