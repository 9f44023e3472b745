"""`SymbolIndex`: look up definitions and references across a repository's tags.

Pure: built from `{path: FileTags}`; lookup tables are made on first use, so building
an index to render a map costs nothing extra.
"""

from __future__ import annotations

import bisect
import functools
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
from rapidfuzz import fuzz, process

from repomap.tags import Definition, FileTags

MAX_SUGGESTIONS = 5
SHORTLIST = 50
FUZZY_CUTOFF = 70.0
"""rapidfuzz WRatio score (0–100) below which a name is not suggested."""


class Symbol(NamedTuple):
    """A definition and the file it is in."""

    path: str
    definition: Definition


class ReferenceSite(NamedTuple):
    """A line of a file that uses a name."""

    path: str
    line: int


class _NameTable(NamedTuple):
    paths: tuple[str, ...]
    """The files, numbered."""
    first: npt.NDArray[np.int64]
    """Per file, the number of its first definition (and one past the last at the end)."""
    names: tuple[str, ...]
    """Every defined name, sorted: a name's slot is its place here (`slot`). A dict of
    name → slot held 3.8 MB on a 20,000-file tree (73,000 names, an int object each);
    this holds 0.9 with `first_seen` (docs/benchmarks/memory.md)."""
    first_seen: npt.NDArray[np.int32]
    """Per slot, where its name comes in the order names are first defined."""
    order: npt.NDArray[np.int32]
    """Definition numbers grouped by slot: those of slot s are `order[starts[s]:starts[s+1]]`."""
    starts: npt.NDArray[np.int64]

    def slot(self, name: str) -> int | None:
        """`name`'s slot; None when nothing is defined by that name."""
        at = bisect.bisect_left(self.names, name)
        return at if at < len(self.names) and self.names[at] == name else None

    def first_defined(self, name: str) -> int:
        """Where a defined `name` comes in the order names are first defined."""
        slot = self.slot(name)
        assert slot is not None
        return int(self.first_seen[slot])


class _Spans(NamedTuple):
    starts: list[int]
    by_start: list[Definition]


class MatchKind(StrEnum):
    EXACT = "exact"  # the bare name or the full qualified name
    QUALIFIED = "qualified"  # a dotted suffix (`QuerySet.filter`) or module path + name
    CASE_INSENSITIVE = "case-insensitive"
    NONE = "none"  # nothing matched; see suggestions


@dataclass(frozen=True, slots=True)
class Lookup:
    """The answer to `SymbolIndex.find`."""

    matches: tuple[Symbol, ...]
    how: MatchKind
    suggestions: tuple[str, ...] = ()
    """"Did you mean" names, when nothing matched."""


class SymbolIndex:
    """Definitions and references of every mapped file."""

    def __init__(self, tags: Mapping[str, FileTags]) -> None:
        self._tags = tags
        self._span_cache: dict[str, _Spans] = {}

    def prepare(self) -> None:
        """Make the lookup tables now, rather than on the first lookup."""
        self._names_table  # noqa: B018 (made on first access)
        self._case_variants  # noqa: B018

    @property
    def files(self) -> list[str]:
        return list(self._tags)

    def tags(self, path: str) -> FileTags | None:
        return self._tags.get(path)

    def definitions_in(self, path: str) -> Sequence[Definition]:
        tags = self._tags.get(path)
        return tags.definitions if tags else ()

    def enclosing(self, path: str, line: int) -> Definition | None:
        """The innermost definition whose lines contain `line` (a stack frame → its function)."""
        spans = self._spans(path)
        # Among definitions starting at or before `line`, the latest-starting one that
        # still contains it is the innermost (nested definitions start later).
        for i in range(bisect.bisect_right(spans.starts, line) - 1, -1, -1):
            definition = spans.by_start[i]
            if definition.end_line >= line:
                return definition
        return None

    def _spans(self, path: str) -> _Spans:
        spans = self._span_cache.get(path)
        if spans is None:
            ordered = sorted(self.definitions_in(path), key=lambda d: (d.start_line, -d.end_line))
            spans = self._span_cache[path] = _Spans([d.start_line for d in ordered], ordered)
        return spans

    def references(self, name: str) -> list[ReferenceSite]:
        """Every line that uses `name` (its bare last component), by file then line."""
        bare = name.rsplit(".", 1)[-1]
        return [
            ReferenceSite(path, line)
            for path, tags in self._tags.items()
            for line in tags.references.get(bare, ())
        ]

    def reference_count(self, name: str) -> int:
        bare = name.rsplit(".", 1)[-1]
        return sum(len(tags.references.get(bare, ())) for tags in self._tags.values())

    def defining_files(self, name: str) -> set[str]:
        return {symbol.path for symbol in self._named(name)}

    def find(self, name: str, *, kind: str | None = None) -> Lookup:
        """Definitions of `name`: exact, then qualified, then case-insensitive; else suggestions."""
        name = name.strip()

        def keep(symbols: Iterable[Symbol]) -> tuple[Symbol, ...]:
            return tuple(s for s in symbols if kind is None or s.definition.kind == kind)

        exact = keep((*self._named(name), *self._by_qualified(name)))
        if exact:
            return Lookup(_unique(exact), MatchKind.EXACT)
        if "." in name:
            qualified = keep(self._qualified_suffix(name))
            if qualified:
                return Lookup(_unique(qualified), MatchKind.QUALIFIED)
        folded = keep(self._folded(name.lower()))
        if folded:
            return Lookup(_unique(folded), MatchKind.CASE_INSENSITIVE)
        return Lookup((), MatchKind.NONE, self.suggest(name))

    def suggest(self, name: str) -> tuple[str, ...]:
        """Close names that are defined somewhere, best first."""
        bare = name.rsplit(".", 1)[-1]
        # Plain ratio (fast) picks a shortlist from every name; WRatio orders the shortlist.
        shortlist = [
            m
            for m, _, _ in process.extract(
                bare, self._names_table.names, scorer=fuzz.ratio, limit=SHORTLIST
            )
        ]
        found = process.extract(
            bare, shortlist, scorer=fuzz.WRatio, limit=MAX_SUGGESTIONS, score_cutoff=FUZZY_CUTOFF
        )
        return tuple(match for match, _, _ in found)

    def _qualified_suffix(self, dotted: str) -> list[Symbol]:
        """`QuerySet.filter` → `…QuerySet.filter`; `django.db.models.query.QuerySet` → by file."""
        last = dotted.rsplit(".", 1)[-1]
        candidates = self._named(last)
        suffix = "." + dotted
        found = [s for s in candidates if ("." + s.definition.qualified).endswith(suffix)]
        if found:
            return found
        for symbol in candidates:
            module = symbol.path.rsplit(".", 1)[0].replace("/", ".").removesuffix(".__init__")
            full = f"{module}.{symbol.definition.qualified}"
            if full == dotted or full.endswith(suffix):
                found.append(symbol)
        return found

    def _named(self, name: str) -> list[Symbol]:
        """The definitions named `name`, by file (in the tags' order) then source order."""
        names = self._names_table
        slot = names.slot(name)
        if slot is None:
            return []
        found = names.order[names.starts[slot] : names.starts[slot + 1]]
        files = np.searchsorted(names.first, found, side="right") - 1
        paths, firsts = names.paths, names.first[files].tolist()
        return [
            Symbol(paths[file], self._tags[paths[file]].definitions[number - first])
            for number, file, first in zip(found.tolist(), files.tolist(), firsts, strict=True)
        ]

    @functools.cached_property
    def _names_table(self) -> _NameTable:
        """Every definition numbered (file by file, in order), grouped by name: as numbers,
        not a `Symbol` per definition, which held ~100 bytes each while a lookup reads a
        handful (docs/benchmarks.md, "Memory")."""
        paths = tuple(self._tags)
        seen: dict[str, int] = {}  # each name → where it comes in the order first defined
        seen_of, first = array("i"), array("q", [0])
        for path in paths:
            definitions = self._tags[path].definitions
            seen_of.extend(seen.setdefault(d.name, len(seen)) for d in definitions)
            first.append(first[-1] + len(definitions))
        by_seen = tuple(seen)
        del seen
        first_seen = np.array(
            sorted(range(len(by_seen)), key=by_seen.__getitem__), dtype=np.int32
        )  # slot (sorted place) → seen number
        slot_of_seen = np.empty(len(by_seen), dtype=np.int32)
        slot_of_seen[first_seen] = np.arange(len(by_seen), dtype=np.int32)
        seen_numbers = np.frombuffer(seen_of, dtype=np.int32) if seen_of else np.zeros(0, np.int32)
        of = slot_of_seen[seen_numbers]  # each definition's slot
        order = np.argsort(of, kind="stable").astype(np.int32)  # by name, then as numbered
        starts = np.concatenate(([0], np.cumsum(np.bincount(of, minlength=len(by_seen)))))
        names = tuple(by_seen[i] for i in first_seen.tolist())
        return _NameTable(
            paths, np.frombuffer(first, dtype=np.int64), names, first_seen, order, starts
        )

    def _by_qualified(self, qualified: str) -> list[Symbol]:
        """Definitions whose qualified name (not their bare one) is `qualified`. No table:
        a qualified name ends in `.` + the bare name, so the definitions of each name it
        may end in are the candidates (a table held a list per method)."""
        found: list[Symbol] = []
        for dot in (i for i, char in enumerate(qualified) if char == "."):
            found.extend(
                symbol
                for symbol in self._named(qualified[dot + 1 :])
                if symbol.definition.qualified == qualified
            )
        return found

    def _folded(self, lowered: str) -> list[Symbol]:
        """Definitions whose name, then whose qualified name, is `lowered` ignoring case —
        the variants of each in the order first defined."""
        found = [symbol for name in self._fold(lowered) for symbol in self._named(name)]
        # A qualified name ends in `.` + its bare name, so the candidates are the
        # definitions of the names that fold to one of `lowered`'s dotted suffixes. (A table
        # of every qualified name's folded form held 48 MB on a 20,000-file tree.)
        suffixes = {lowered[dot + 1 :] for dot, char in enumerate(lowered) if char == "."}
        first_defined = self._names_table.first_defined
        qualifieds: dict[str, None] = {}
        for name in sorted({n for s in suffixes for n in self._fold(s)}, key=first_defined):
            for symbol in self._named(name):
                qualified = symbol.definition.qualified
                if qualified != name and qualified.lower() == lowered:
                    qualifieds.setdefault(qualified)
        return found + [symbol for q in qualifieds for symbol in self._by_qualified(q)]

    def _fold(self, lowered: str) -> tuple[str, ...]:
        """The defined names that are `lowered` ignoring case, in the order first defined."""
        found = self._case_variants.get(lowered)
        if found is not None:
            return found
        return (lowered,) if self._names_table.slot(lowered) is not None else ()

    @functools.cached_property
    def _case_variants(self) -> dict[str, tuple[str, ...]]:
        """Lower-cased key → the names that fold to it, in the order first defined — only
        for keys some name with a capital folds to: a lower-case name alone is found by
        the key, so most names take no entry (nor a lower-cased copy while this is made:
        one of every name, grouped, left 13 MB behind on a 20,000-file tree)."""
        names = self._names_table
        keys = {lowered for name in names.names if (lowered := name.lower()) != name}
        table: dict[str, list[str]] = {}
        for slot in np.argsort(names.first_seen).tolist():  # in the order first defined
            name = names.names[slot]
            lowered = name.lower()
            if lowered in keys:
                table.setdefault(lowered, []).append(name)
        return {key: tuple(found) for key, found in table.items()}


def _unique(symbols: tuple[Symbol, ...]) -> tuple[Symbol, ...]:
    return tuple(dict.fromkeys(symbols))
