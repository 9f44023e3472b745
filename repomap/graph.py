"""`ReferenceGraph`: who uses what, as flat numpy arrays — the focus-independent part of ranking.

A file that uses an identifier points at every other file defining it, and each such
edge has a weaker reverse (`REVERSE_EDGE_WEIGHT`): a file's callers are its neighbours
too. The edges are never listed. An identifier used in U files and defined in D makes up
to 2·U·D of them (5.5 million on a 20,000-file tree, 130 MB), yet every edge of one
identifier is a use of it times a definition of it: the graph keeps the **uses** (file,
identifier, weight) and the **links** (each file defining a used identifier), and
ranking (`repomap.rank`) sums over edges as sums over those two lists, per identifier —
the same walk in a tenth of the memory, and each of its steps costs the uses and links,
not the edges.

Built once per set of tags, in one pass over definitions and references.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Mapping
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
    SHORT_IDENT_CHARS,
    SHORT_IDENT_WEIGHT,
)
from repomap.copies import is_copy, source_stems
from repomap.tags import FileTags

IntArray = npt.NDArray[np.int64]
Index = npt.NDArray[np.int32]
"""What the graph keeps: numbers of files, definitions, identifiers, uses and links
(< 2**31), as int32 — half of int64, and a warm start uses the cached bytes as they are."""
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
_PAIR = 2**31
"""Packs (identifier, file) into one int64 so numpy can sort and search pairs."""
POSITIONS_CHUNK = 1 << 16
"""Keys `_positions` looks up at once."""
LAYOUT = "uses and links v1"
"""Names how a cached graph is laid out: one laid out another way (by other code) is
rebuilt without a warning."""


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
    """its signature line,"""
    def_link: Index
    """and its link (its file defining its identifier), or -1 when no edge reaches it."""
    file_weight: FloatArray
    """Per file: COPY_EDGE_WEIGHT for a copy of code (`repomap.copies`: a single header
    defining every name would otherwise collect the rank of all of them), else 1; an
    edge's weight is its use's × its target file's."""
    use_file: Index
    """Every use that makes an edge — a file using an identifier that some other file
    defines, in at most MAX_DEFINERS files — file by file: the using file,"""
    use_ident: Index
    """the identifier,"""
    use_weight: FloatArray
    """and its static weight: identifier quality × sqrt(number of lines using it)."""
    link_file: Index
    """Every file defining an identifier that a use names, by identifier then file: the
    file,"""
    link_ident: Index
    """the identifier,"""
    link_use: Index
    """and that file's own use of it, or -1: a file makes no edge to itself."""
    use_self: BoolArray
    """Per use: its file defines the identifier too (some link's `link_use` is this use).
    Derived from `link_use`, not stored."""

    @property
    def size(self) -> int:
        return len(self.paths)

    @property
    def uses(self) -> int:
        return len(self.use_file)

    @property
    def edges(self) -> int:
        """How many edges the uses and links stand for: each use points at every other
        file defining its identifier, and back."""
        definers = np.bincount(self.link_ident, minlength=len(self.idents))
        return 2 * int((definers[self.use_ident] - self.use_self).sum())

    def definers(self, ident_ids: IntArray) -> Index:
        """Files defining any of the given identifiers."""
        return np.unique(self.def_file[np.isin(self.def_ident, ident_ids)])

    def neighbours(self, files: IntArray) -> set[int]:
        """Files that use or are used by any of `files` (edges both ways): the other
        definers of what they use, and the other users of what they define."""
        idents = len(self.idents)
        using = np.isin(self.use_file, files)
        defining = np.isin(self.link_file, files)
        # An identifier used (defined) by k of `files` reaches each of its definers
        # (users), except the one file itself when k is 1 and that file is the one.
        users = np.bincount(self.use_ident[using], minlength=idents)[self.link_ident]
        by_itself = (users == 1) & defining & (self.link_use >= 0)
        definers = np.bincount(self.link_ident[defining], minlength=idents)[self.use_ident]
        alone = (definers == 1) & using & self.use_self
        found = set(self.link_file[(users > 0) & ~by_itself].tolist())
        return found | set(self.use_file[(definers > 0) & ~alone].tolist())

    def to_payload(self) -> dict[str, object]:
        """Plain values for the cache (`marshal`): names, and arrays as their raw bytes,
        views rather than copies (weights stay float64 so a warm map is bit-for-bit the
        cold one)."""
        arrays = {name: getattr(self, name).data.cast("B") for name in _STORED}
        return {"layout": LAYOUT, "paths": self.paths, "idents": tuple(self.idents), **arrays}

    @classmethod
    def from_payload(cls, payload: Any) -> ReferenceGraph | None:
        """The inverse of `to_payload`; None for a graph laid out another way. Raises
        ValueError for anything `to_payload` cannot have made: cached bytes are checked,
        not trusted (see `repomap/cache.py`)."""
        if type(payload) is not dict:
            raise ValueError("a graph of the wrong shape (not a table)")
        if payload.get("layout") != LAYOUT:
            return None
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
        problem = _inconsistency(arrays, files=len(paths), identifiers=len(names))
        if not problem and len(idents) != len(names):
            problem = "an identifier listed twice"
        if problem:
            raise ValueError(f"an inconsistent graph ({problem})")
        if list(paths) != sorted(set(paths)):
            raise ValueError("an inconsistent graph (duplicate or unsorted paths)")
        use_self = _self_uses(arrays["link_use"], uses=len(arrays["use_file"]))
        # Interned, a path is one string across the tags, the walk and the indexes.
        paths = tuple(map(sys.intern, paths))
        return cls(paths=paths, idents=idents, use_self=use_self, **arrays)


_INDEX_ARRAYS = (
    "def_file", "def_index", "def_ident", "def_line", "def_link",
    "use_file", "use_ident", "link_file", "link_ident", "link_use",
)  # fmt: skip
_STORED: dict[str, type[np.generic]] = {
    **dict.fromkeys(_INDEX_ARRAYS, np.int32),
    "use_weight": np.float64,
    "file_weight": np.float64,
}


def _inconsistency(arrays: Mapping[str, Any], *, files: int, identifiers: int) -> str:
    """What is wrong with a graph's arrays read from outside, or "" — every index that
    ranking follows must land inside the array it indexes."""
    defs, uses, links = (len(arrays[name]) for name in ("def_file", "use_file", "link_file"))
    lengths = {
        **{name: defs for name in ("def_index", "def_ident", "def_line", "def_link")},
        **{name: uses for name in ("use_ident", "use_weight")},
        **{name: links for name in ("link_ident", "link_use")},
        "file_weight": files,
    }
    for name, length in lengths.items():
        if len(arrays[name]) != length:
            return f"{name} has {len(arrays[name])} entries, expected {length}"
    bounds = {
        "def_file": (0, files), "def_ident": (0, identifiers), "def_link": (-1, links),
        "use_file": (0, files), "use_ident": (0, identifiers),
        "link_file": (0, files), "link_ident": (0, identifiers), "link_use": (-1, uses),
    }  # fmt: skip
    for name, (low, high) in bounds.items():
        values = arrays[name]
        if len(values) and (int(values.min()) < low or int(values.max()) >= high):
            return f"{name} out of range"
    return _disagreement(arrays)


def _disagreement(arrays: Mapping[str, Any]) -> str:
    """What in a graph's arrays, each of the right length and range, disagrees, or ""."""
    defs = len(arrays["def_file"])
    # Definitions come file by file, numbered from 0 within each file.
    def_file = arrays["def_file"]
    first = np.searchsorted(def_file, def_file, side="left")
    if np.any(np.diff(def_file) < 0) or np.any(arrays["def_index"] != np.arange(defs) - first):
        return "definitions out of order"
    # A link's own use and a definition's link are of the same file and identifier.
    own, of = arrays["link_use"], arrays["link_use"] >= 0
    if np.any(arrays["use_file"][own[of]] != arrays["link_file"][of]) or np.any(
        arrays["use_ident"][own[of]] != arrays["link_ident"][of]
    ):
        return "a link's use of another file or name"
    link, linked = arrays["def_link"], arrays["def_link"] >= 0
    if np.any(arrays["link_file"][link[linked]] != def_file[linked]) or np.any(
        arrays["link_ident"][link[linked]] != arrays["def_ident"][linked]
    ):
        return "a definition's link to another file or name"
    weights = (arrays["use_weight"], arrays["file_weight"])
    if not all(np.all(np.isfinite(w) & (w >= 0)) for w in weights):
        return "weights that are not numbers"
    return ""


def _self_uses(link_use: Index, *, uses: int) -> BoolArray:
    found: BoolArray = np.zeros(uses, dtype=bool)
    found[link_use[link_use >= 0]] = True
    return found


def build_graph(tags: Mapping[str, FileTags]) -> ReferenceGraph:
    paths = tuple(sorted(tags))
    idents: dict[str, int] = {}
    # typed arrays, not lists: a list holds an 8-byte pointer and often an int object per
    # entry, and 20,000 files have millions of references
    def_file, def_index, def_ident, def_line = (array("i") for _ in range(4))
    for number, path in enumerate(paths):
        for index, (name, line) in enumerate(tags[path].definitions.names_and_lines()):
            def_file.append(number)
            def_index.append(index)
            def_ident.append(idents.setdefault(name, len(idents)))
            def_line.append(line)
    ref_file, ref_ident, ref_count = (array("i") for _ in range(3))
    for number, path in enumerate(paths):
        for name, uses in tags[path].references.counts():
            known = idents.get(name)
            if known is not None:
                ref_file.append(number)
                ref_ident.append(known)
                ref_count.append(uses)
    defs_file = np.frombuffer(def_file, dtype=np.int32)
    defs_ident = np.frombuffer(def_ident, dtype=np.int32)
    refs_file = np.frombuffer(ref_file, dtype=np.int32)
    refs_ident = np.frombuffer(ref_ident, dtype=np.int32)
    # (identifier, file) of every file defining each identifier, sorted: the candidate links
    pairs = np.unique(_pair_keys(defs_ident, defs_file))
    pair_ident = pairs // _PAIR
    definers = np.bincount(pair_ident, minlength=len(idents))
    own = _positions(pairs, _pair_keys(refs_ident, refs_file)) >= 0
    # A name defined in that many files (`__init__`, `setUp`) says nothing about which
    # one; a name only the using file defines points nowhere else.
    fan = definers[refs_ident]
    edged = (fan <= MAX_DEFINERS) & (fan > own)
    use_file, use_ident = refs_file[edged], refs_ident[edged]
    count = np.frombuffer(ref_count, dtype=np.int32)[edged].astype(np.float64)
    del refs_file, refs_ident, ref_file, ref_ident, ref_count, fan, edged, own  # the uses made
    quality = _ident_quality(idents, definers, used=use_ident)
    linked = np.zeros(len(idents), dtype=bool)
    linked[use_ident] = True
    links = pairs[linked[pair_ident]]
    del pairs, pair_ident
    link_ident, link_file = links // _PAIR, links % _PAIR
    small = np.int32
    link_use = _positions(_pair_keys(use_ident, use_file), links)
    return ReferenceGraph(
        paths=paths,
        idents=idents,
        def_file=defs_file.astype(small),
        def_index=np.frombuffer(def_index, dtype=np.int32).astype(small),
        def_ident=defs_ident.astype(small),
        def_line=np.frombuffer(def_line, dtype=np.int32).astype(small),
        def_link=_positions(links, _pair_keys(defs_ident, defs_file)),
        file_weight=_copy_weights(paths),
        use_file=use_file.astype(small),
        use_ident=use_ident.astype(small),
        use_weight=quality[use_ident] * np.sqrt(count),
        link_file=link_file.astype(small),
        link_ident=link_ident.astype(small),
        link_use=link_use,
        use_self=_self_uses(link_use, uses=len(use_file)),
    )


def _pair_keys(idents: Index, files: Index) -> IntArray:
    """One int64 key per (identifier, file), ordered by identifier then file."""
    return idents.astype(np.int64) * _PAIR + files


def _positions(keys: IntArray, wanted: IntArray) -> Index:
    """Where each of `wanted` is among the distinct `keys` (in any order), or -1. Keys
    already in order (`np.unique`'s) are not sorted again, and `wanted` is looked up a
    chunk at a time: with a sort's permutation and six temporaries the length of
    `wanted`, this was the peak of a 20,000-file graph's build (docs/benchmarks/memory.md)."""
    found = np.full(len(wanted), -1, dtype=np.int32)
    if not len(keys):
        return found
    order = None if bool(np.all(keys[1:] > keys[:-1])) else np.argsort(keys, kind="stable")
    ordered = keys if order is None else keys[order]
    last = len(ordered) - 1
    for start in range(0, len(wanted), POSITIONS_CHUNK):
        part = wanted[start : start + POSITIONS_CHUNK]
        slot = np.searchsorted(ordered, part)
        np.minimum(slot, last, out=slot)
        place = slot if order is None else order[slot]
        found[start : start + len(part)] = np.where(ordered[slot] == part, place, -1)
    return found


def _ident_quality(idents: dict[str, int], definers: IntArray, used: Index) -> FloatArray:
    """How much a use of each identifier says about the files that define it (for `used` ones)."""
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
        if definers[number] > COMMON_IDENT_DEFINERS:
            weight *= COMMON_IDENT_WEIGHT
        # A use of a name defined in k files points at one of them: each gets 1/k.
        quality[number] = weight / max(int(definers[number]), 1)
    return quality


def _copy_weights(paths: tuple[str, ...]) -> FloatArray:
    """Per file: COPY_EDGE_WEIGHT for a copy of code (`repomap.copies`), else 1."""
    stems = source_stems(paths)
    return np.array([COPY_EDGE_WEIGHT if is_copy(p, stems) else 1.0 for p in paths], np.float64)
