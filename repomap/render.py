"""Render a ranking as token-budgeted map text.

Files in rank order; under each, its best definitions' signature lines prefixed with
their line numbers (so an agent can read a range directly), methods indented under
their class. The number of definitions is found by binary search so the text fills the
budget without passing it. Pure and deterministic.
"""

from __future__ import annotations

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


class _Containers:
    """The definitions enclosing a definition (its class, its outer function), memoised."""

    def __init__(self, tags: Mapping[str, FileTags]) -> None:
        self._tags = tags
        self._memo: dict[tuple[str, Definition], tuple[Definition, ...]] = {}
        self._files: dict[str, tuple[Definition, ...]] = {}  # made once per render

    def of(self, path: str, inner: Definition) -> tuple[Definition, ...]:
        key = (path, inner)
        if key not in self._memo:
            every = self._files.get(path)
            if every is None:
                every = self._files[path] = tuple(self._tags[path].definitions)
            self._memo[key] = tuple(d for d in every if d != inner and _contains(d, inner))
        return self._memo[key]


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
    return (
        outer.start_line <= inner.start_line
        and inner.end_line <= outer.end_line
        and (outer.line != inner.line)
    )


def _warnings_section(warnings: Sequence[str]) -> str:
    if not warnings:
        return ""
    lines = [f"\nwarnings ({len(warnings)}):\n"]
    lines.extend(f"- {warning}\n" for warning in warnings[:MAX_WARNING_LINES])
    if len(warnings) > MAX_WARNING_LINES:
        lines.append(f"- … {len(warnings) - MAX_WARNING_LINES} more (see --stats)\n")
    return "".join(lines)
