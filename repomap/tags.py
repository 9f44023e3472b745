"""Tags of one file: the definitions it makes and the identifiers it uses.

Pure: bytes and a language in, `FileTags` out. The capture convention of the
`.scm` files under `repomap/queries/` (see the README there):

- `@definition.<kind>` — the whole definition node (`class`, `function`, `method`,
  `interface`, `struct`, `enum`, `module`, `trait`, `type`, `namespace`, `object`),
  or `@definition.impl` for a container that only qualifies what it holds (a Rust
  `impl`, a Swift `extension`) and is not itself listed;
- `@name` — the name node of that definition;
- `@scope` — optional, a node whose text qualifies the name explicitly (a Go receiver);
- `@reference` — an identifier the file uses.
"""

from __future__ import annotations

import itertools
import sys
from array import array
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NamedTuple, overload

from tree_sitter import Node, QueryCursor

from repomap.constants import MAX_SIGNATURE_CHARS
from repomap.languages import parser_for, query_for
from repomap.words import Words, count_terms

TYPE_KINDS = frozenset({"class", "interface", "struct", "enum", "trait", "object", "impl"})
"""Kinds whose functions are methods (a function in a `module` or `namespace` stays a function)."""

HIDDEN_KINDS = frozenset({"impl"})
"""Kinds that qualify names but are not definitions in their own right."""


_SEP = "\0"
"""Separates packed fields: never in a tag (`_text` replaces NUL in source text)."""


class Definition(NamedTuple):
    """One definition in a file. Lines are 1-based and inclusive."""

    name: str
    """The bare name, e.g. `save`."""
    qualified: str
    """Dotted path through enclosing definitions, e.g. `Note.save`."""
    kind: str
    """`class`, `function`, `method`, `interface`, `struct`, `enum`, `module`, …"""
    line: int
    """The line holding the name: the signature line."""
    start_line: int
    """First line of the definition (decorators and annotations included)."""
    end_line: int
    """Last line of the definition."""
    signature: str
    """The signature line's text, stripped and cut to MAX_SIGNATURE_CHARS."""


class Definitions(Sequence[Definition]):
    """A file's definitions, in source order, kept packed: every field as one string
    (name, qualified name, kind, signature of each, NUL-separated — the cache's own
    form) and the lines as a uint32 array; a `Definition` is made when asked for. The
    qualified name is kept without the name it ends in (`_scope`): whole, it repeated
    every name, 3.4 MB on a 20,000-file tree.

    Held as objects, a definition took ~270 bytes more than packed (a tuple, three int
    objects, its strings): 60 MB for the 227,000 definitions of a 20,000-file tree, for
    as long as the tags lived, while most maps, lookups and rankings read a few hundred
    of them (docs/benchmarks.md, "Memory")."""

    __slots__ = ("_count", "_lines", "_starts", "_texts")

    def __init__(self, texts: str, lines: bytes | array[int], count: int) -> None:
        self._texts = texts
        self._lines = _narrow(lines)
        self._count = count
        self._starts: array[int] | None = None  # where each definition's fields begin

    @classmethod
    def of(cls, definitions: Sequence[Definition]) -> Definitions:
        texts = _SEP.join(
            f"{d.name}{_SEP}{_scope(d.qualified, d.name)}{_SEP}{d.kind}{_SEP}{d.signature}"
            for d in definitions
        )
        lines = array("I", (n for d in definitions for n in (d.line, d.start_line, d.end_line)))
        return cls(texts, lines, len(definitions))

    def packed(self) -> tuple[str, bytes]:
        return self._texts, _wide(self._lines)

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, i: int) -> Definition: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[Definition, ...]: ...
    def __getitem__(self, i: int | slice) -> Definition | tuple[Definition, ...]:
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(self._count)))
        if not -self._count <= i < self._count:
            raise IndexError("definition index out of range")
        i %= self._count
        if self._starts is None:
            self._starts = _field_starts(self._texts, self._count)
        end = self._starts[i + 1] - 1 if i + 1 < self._count else len(self._texts)
        return self._make(self._texts[self._starts[i] : end].split(_SEP), i)

    def __iter__(self) -> Iterator[Definition]:
        if not self._count:
            return
        fields = self._texts.split(_SEP)
        for i in range(self._count):
            yield self._make(fields[4 * i : 4 * i + 4], i)

    def names_and_lines(self) -> Iterator[tuple[str, int]]:
        """Each definition's (name, line), without making the `Definition`s: what the
        reference graph reads of every file (made whole, the 227,000 definitions of a
        20,000-file tree were its build's churn: docs/benchmarks/memory.md)."""
        fields = self._texts.split(_SEP) if self._count else []
        for i in range(self._count):
            yield sys.intern(fields[4 * i]), self._lines[3 * i]

    def spans(self) -> Iterator[tuple[int, int, int]]:
        """Each definition's (line, start_line, end_line), in source order, without making
        the `Definition`s: what the map reads to nest a file's definitions."""
        lines = iter(self._lines)
        return zip(lines, lines, lines, strict=True)

    def _make(self, fields: list[str], i: int) -> Definition:
        # Interned, a name is one string across files (it keys the symbol tables).
        name, scope, kind, signature = fields
        name = sys.intern(name)
        return Definition(
            name=name,
            qualified=_qualified(scope, name),
            kind=sys.intern(kind),
            line=self._lines[3 * i],
            start_line=self._lines[3 * i + 1],
            end_line=self._lines[3 * i + 2],
            signature=signature,
        )

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Definitions):
            return self.packed() == other.packed()
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __hash__(self) -> int:  # equal to the tuple it packs, so hashed as that tuple is
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"Definitions({list(self)!r})"

    def __reduce__(self) -> tuple[type[Definitions], tuple[str, bytes, int]]:
        return (Definitions, (self._texts, _wide(self._lines), self._count))


_VERBATIM = "="
"""Marks a packed qualified name kept whole (`_scope`)."""


def _scope(qualified: str, name: str) -> str:
    """How `Definitions` packs a qualified name: empty when it is the name, what comes
    before the name (dot included) when it ends in `.name`, else the whole of it after
    `_VERBATIM`. `_qualified` undoes it."""
    if qualified == name:
        return ""
    scope = qualified[: len(qualified) - len(name)]
    if scope.endswith(".") and qualified.endswith(name) and not scope.startswith(_VERBATIM):
        return scope
    return _VERBATIM + qualified


def _qualified(scope: str, name: str) -> str:
    if not scope:
        return name
    return scope[1:] if scope.startswith(_VERBATIM) else scope + name


def _narrow(values: bytes | array[int]) -> array[int]:
    """uint32 values (bytes or an array) held in two bytes each when they all fit, as line
    numbers and use counts nearly always do: the tags of a 20,000-file tree held 12 MB of
    them at four bytes (docs/benchmarks/memory.md). Byte slices, not a loop over values:
    every warm start decodes every file's tags (3 million values in 60,000 arrays on
    that tree: 0.13 s this way, 0.17 s with `max` and a converting copy, 0.01 s for the
    copy alone). Raises ValueError, as `array` does, for bytes that are not whole uint32s."""
    wide = array("I", values)
    raw = memoryview(wide).cast("B")
    zeros = bytes(len(wide))
    if raw[2 - _LOW :: 4].tobytes() != zeros or raw[3 - _LOW :: 4].tobytes() != zeros:
        return wide
    narrow = bytearray(2 * len(wide))
    narrow[0::2], narrow[1::2] = raw[_LOW::4].tobytes(), raw[_LOW + 1 :: 4].tobytes()
    return array("H", narrow)


def _wide(values: array[int]) -> bytes:
    """The uint32 bytes of what `_narrow` holds: the form the cache and the pickle keep."""
    if values.typecode == "I":
        return values.tobytes()
    raw = memoryview(values).cast("B")
    wide = bytearray(2 * len(raw))
    wide[_LOW::4], wide[_LOW + 1 :: 4] = raw[0::2].tobytes(), raw[1::2].tobytes()
    return bytes(wide)


_LOW = 0 if sys.byteorder == "little" else 2
"""Where a uint32's low two bytes (what a uint16 keeps) sit among its native bytes."""


def _field_starts(texts: str, count: int) -> array[int]:
    """Where each of `count` definitions' four fields begin in `texts`: each field's
    length and its separator, summed by C iterators (a Python loop of `str.index` over
    every separator before)."""
    ends = itertools.accumulate(map((1).__add__, map(len, texts.split(_SEP))), initial=0)
    return array("I", itertools.islice(ends, 0, 4 * max(count, 1), 4))


class References(Mapping[str, tuple[int, ...]]):
    """Identifier → the lines it is used on, ascending.

    Kept packed (names, then the use counts and the lines in one array) because a large
    repository has hundreds of thousands of uses: packed, they load from the cache in
    one read, and ranking needs only the counts. A lookup scans the names and slices its
    lines out, keeping no table: one lookup in every file (`SymbolIndex.references`)
    used to leave a dict and a list of offsets in each, for as long as the tags lived.
    """

    __slots__ = ("_numbers", "names")

    def __init__(self, names: tuple[str, ...], counts: bytes, lines: bytes) -> None:
        self.names = names
        # One array, the use counts then the lines: two took ~1.9 MB more on a
        # 20,000-file tree (an array object and its buffer apiece, per file).
        self._numbers = _narrow(counts + lines)

    @classmethod
    def from_lines(cls, found: Mapping[str, set[int]]) -> References:
        names = tuple(found)
        counts = array("I", (len(found[name]) for name in names))
        lines = array("I", (line for name in names for line in sorted(found[name])))
        return cls(names, counts.tobytes(), lines.tobytes())

    def packed(self) -> tuple[tuple[str, ...], bytes, bytes]:
        wide, cut = _wide(self._numbers), 4 * len(self.names)
        return self.names, wide[:cut], wide[cut:]

    def _counts(self) -> memoryview:
        return memoryview(self._numbers)[: len(self.names)]

    def counts(self) -> Iterator[tuple[str, int]]:
        """(identifier, number of lines using it), without unpacking the lines."""
        return zip(self.names, self._counts(), strict=True)

    def uses(self) -> Iterator[tuple[str, tuple[int, ...]]]:
        """(identifier, the lines using it) for every identifier, in one pass."""
        start = len(self.names)
        for name, count in zip(self.names, self._counts(), strict=True):
            yield name, tuple(self._numbers[start : start + count])
            start += count

    def get(self, name: str, default: Any = None) -> Any:
        try:
            i = self.names.index(name)
        except ValueError:
            return default
        counts = self._counts()
        start = len(self.names) + sum(counts[:i])
        return tuple(self._numbers[start : start + counts[i]])

    def __getitem__(self, name: str) -> tuple[int, ...]:
        found: tuple[int, ...] | None = self.get(name)
        if found is None:
            raise KeyError(name)
        return found

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def __reduce__(self) -> tuple[type[References], tuple[tuple[str, ...], bytes, bytes]]:
        return (References, self.packed())


def file_words(source: bytes) -> Words:
    """Each term (`repomap.words.terms`) of a file's whole text → how often it occurs:
    comments, docstrings and strings too, the words a person's summary of a bug shares
    with the code more often than the identifiers do."""
    return Words.from_counts(count_terms(_text(source)))


class FileTags(NamedTuple):
    """What one file defines and uses."""

    definitions: Definitions
    """In source order."""
    references: References
    """Identifier → the lines it is used on."""
    syntax_error: bool
    """The parser met invalid syntax; tags are best-effort."""


class _Raw(NamedTuple):
    start_byte: int
    end_byte: int
    kind: str
    name: str
    scope: str
    line: int
    start_line: int
    end_line: int
    name_byte: int


def extract_tags(source: bytes, language: str) -> FileTags:
    """Parse `source` as `language` and return its tags."""
    tree = parser_for(language).parse(source)

    raws: list[_Raw] = []
    uses: dict[bytes | None, set[int]] = {}  # keyed by raw bytes: decoded once per name
    for _, captures in QueryCursor(query_for(language)).matches(tree.root_node):
        # Most matches are references: take that path first, it runs ~100k times a repo.
        nodes = captures.get("reference")
        if nodes is not None:
            for node in nodes:
                uses.setdefault(node.text, set()).add(node.start_point[0] + 1)
            continue
        raw = _raw_definition(captures)
        if raw is not None:
            raws.append(raw)
    refs = {name: lines for raw_name, lines in uses.items() if (name := _text(raw_name))}
    return FileTags(
        definitions=Definitions.of(_qualify(raws, source)),
        references=References.from_lines(refs),
        syntax_error=tree.root_node.has_error,
    )


def _raw_definition(captures: dict[str, list[Node]]) -> _Raw | None:
    kind = next((key[11:] for key in captures if key.startswith("definition.")), None)
    names = captures.get("name")
    if kind is None or not names:
        return None
    node = captures[f"definition.{kind}"][0]
    name_node = names[0]
    scope = captures.get("scope")
    return _Raw(
        start_byte=node.start_byte,
        end_byte=node.end_byte,
        kind=kind,
        name=_text(name_node.text),
        scope=_text(scope[0].text) if scope else "",
        line=name_node.start_point[0] + 1,
        start_line=node.start_point[0] + 1,
        # a node that takes its line break with it (`#define X 1\n`) ends on that line
        end_line=node.end_point[0] + (1 if node.end_point[1] else 0),
        name_byte=name_node.start_byte,
    )


def _qualify(raws: list[_Raw], source: bytes) -> tuple[Definition, ...]:
    """Nest definitions by byte range to give each a qualified name and its final kind."""
    raws.sort(key=lambda r: (r.start_byte, -r.end_byte))
    stack: list[tuple[_Raw, str]] = []  # open containers with their qualified names
    seen: set[tuple[int, str]] = set()
    out: list[Definition] = []
    for raw in raws:
        if not raw.name or (raw.start_byte, raw.name) in seen:
            continue
        seen.add((raw.start_byte, raw.name))
        while stack and stack[-1][0].end_byte <= raw.start_byte:
            stack.pop()
        parent = stack[-1] if stack else None
        # An explicit scope (`Polygon::area`, a Go receiver) qualifies within the enclosing one.
        prefix = ".".join(part for part in (parent[1] if parent else "", raw.scope) if part)
        qualified = f"{prefix}.{raw.name}" if prefix else raw.name
        kind = raw.kind
        if kind == "function" and (raw.scope or (parent and parent[0].kind in TYPE_KINDS)):
            kind = "method"
        stack.append((raw, qualified))
        if kind in HIDDEN_KINDS:
            continue
        out.append(
            Definition(
                name=raw.name,
                qualified=qualified,
                kind=kind,
                line=raw.line,
                start_line=raw.start_line,
                end_line=raw.end_line,
                signature=_signature(source, raw.name_byte),
            )
        )
    return tuple(out)


def _signature(source: bytes, at: int) -> str:
    """The stripped text of the line holding byte `at`."""
    start = source.rfind(b"\n", 0, at) + 1
    end = source.find(b"\n", at)
    return _text(source[start : end if end >= 0 else len(source)]).strip()[:MAX_SIGNATURE_CHARS]


def _text(raw: bytes | None) -> str:
    # NUL never reaches a tag: the cache uses it as a field separator.
    return raw.decode("utf-8", errors="replace").replace("\0", "\ufffd") if raw else ""
