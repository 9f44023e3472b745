"""Render a ranking as token-budgeted map text.

Files in rank order; under each, its best definitions' signature lines prefixed with
their line numbers (so an agent can read a range directly), methods indented under
their class. The number of definitions is found by binary search so the text fills the
budget without passing it. Pure and deterministic.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

from repomap.constants import CHARS_PER_TOKEN
from repomap.rank import RankedDefinition, Ranking
from repomap.tags import Definition, FileTags

MAX_WARNING_LINES = 8
INDENT = "  "


def estimate_tokens(text: str) -> int:
    """Tokens a typical BPE tokenizer spends on code-like text (estimate, no model needed)."""
    return round(len(text) / CHARS_PER_TOKEN)


def render_map(
    ranking: Ranking,
    tags: Mapping[str, FileTags],
    *,
    tokens: int,
    warnings: Sequence[str] = (),
) -> str:
    """The largest map of `ranking` that fits in `tokens`, with a warnings section if any."""
    footer = _warnings_section(warnings)
    budget = tokens - estimate_tokens(footer)
    # Each shown definition costs at least a token, so no more than `budget` can fit.
    candidates = ranking.definitions[: max(budget, 0)]
    order = {path: i for i, (path, _) in enumerate(ranking.files)}
    containers = _Containers(tags)
    low, high = 0, len(candidates)
    best = ""
    while low <= high:
        middle = (low + high) // 2
        text = _render(candidates[:middle], order, containers)
        if estimate_tokens(text) <= budget:
            best, low = text, middle + 1
        else:
            high = middle - 1
    return best + footer


Span = tuple[int, int, int]
"""A definition's (line, start_line, end_line): all that says what encloses it."""


class _Containers:
    """The definitions enclosing a definition (its class, its outer function), found once
    per file (`_enclosing`) from the definitions' lines alone; a container is made into a
    `Definition` only when a chosen definition has it."""

    def __init__(self, tags: Mapping[str, FileTags]) -> None:
        self._tags = tags
        self._files: dict[str, dict[Span, tuple[int, ...]]] = {}

    def of(self, path: str, inner: Definition) -> tuple[Definition, ...]:
        """`inner` is one of the file's own definitions (the ranking's)."""
        definitions = self._tags[path].definitions
        enclosing = self._files.get(path)
        if enclosing is None:
            enclosing = self._files[path] = _enclosing(list(definitions.spans()))
        found = enclosing[(inner.line, inner.start_line, inner.end_line)]
        return tuple(definitions[i] for i in found)


def _enclosing(spans: Sequence[Span]) -> dict[Span, tuple[int, ...]]:
    """For each span, the positions of the spans that contain it (`_contains`), in one
    sweep by first line. A container starts no later than what it holds and is still
    open there, so each span is compared with the open ones only (about as many as the
    nesting is deep), not with the whole file: a large module's map spent most of its
    rendering here."""
    found: dict[Span, tuple[int, ...]] = {}
    open_now: list[int] = []
    by_start = sorted(range(len(spans)), key=lambda i: spans[i][1])
    for start, group in itertools.groupby(by_start, key=lambda i: spans[i][1]):
        members = list(group)
        open_now = [i for i in open_now if spans[i][2] >= start]
        open_now.extend(members)
        for inner in members:
            if spans[inner] not in found:
                found[spans[inner]] = tuple(i for i in open_now if _holds(spans[i], spans[inner]))
    return found


def _render(
    chosen: Sequence[RankedDefinition], order: dict[str, int], containers: _Containers
) -> str:
    by_file: dict[str, list[Definition]] = {}
    for ranked in chosen:
        by_file.setdefault(ranked.path, []).append(ranked.definition)
    blocks = []
    for path in sorted(by_file, key=lambda p: order.get(p, len(order))):
        blocks.append(_render_file(path, by_file[path], containers))
    return "".join(blocks)


def _render_file(path: str, chosen: list[Definition], containers: _Containers) -> str:
    """One file's block; the containers of chosen members are shown too, so nesting reads right."""
    lines = [f"{path}:\n"]
    shown_set = set(chosen)
    for definition in chosen:
        shown_set.update(containers.of(path, definition))
    shown = sorted(shown_set, key=lambda d: (d.line, d.start_line))
    width = len(str(shown[-1].line)) if shown else 1
    open_scopes: list[Definition] = []
    for definition in shown:
        while open_scopes and not _contains(open_scopes[-1], definition):
            open_scopes.pop()
        depth = len(open_scopes)
        lines.append(f"{definition.line:>{width}}: {INDENT * depth}{definition.signature}\n")
        open_scopes.append(definition)
    return "".join(lines)


def _contains(outer: Definition, inner: Definition) -> bool:
    return _holds(
        (outer.line, outer.start_line, outer.end_line),
        (inner.line, inner.start_line, inner.end_line),
    )


def _holds(outer: Span, inner: Span) -> bool:
    """`outer` encloses `inner`: its lines hold theirs, on another signature line."""
    return outer[1] <= inner[1] and inner[2] <= outer[2] and outer[0] != inner[0]


def _warnings_section(warnings: Sequence[str]) -> str:
    if not warnings:
        return ""
    lines = [f"\nwarnings ({len(warnings)}):\n"]
    lines.extend(f"- {warning}\n" for warning in warnings[:MAX_WARNING_LINES])
    if len(warnings) > MAX_WARNING_LINES:
        lines.append(f"- … {len(warnings) - MAX_WARNING_LINES} more (see --stats)\n")
    return "".join(lines)
