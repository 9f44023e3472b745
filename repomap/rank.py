"""Rank files and definitions: personalised PageRank over the reference graph.

A file that uses an identifier points at every file defining it (`graph.py`). The
random walk restarts at the focused files and the definers of focused identifiers, so
their neighbourhood rises; edges of focused identifiers weigh more. Power iteration on
numpy arrays, edges aggregated per file pair, so one iteration is one `bincount`.
A definition's score is the rank that flows into its file along its own identifier.
Edges into copies of code (`repomap.copies`) weigh COPY_EDGE_WEIGHT in the graph's static
weights, so a single header that defines every name does not collect the rank of all of
them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from repomap.constants import (
    FOCUS_DEFINER_MASS,
    FOCUS_FILE_MASS,
    FOCUS_IDENT_WEIGHT,
    FOCUS_PATH_TOKEN_MASS,
    PAGERANK_DAMPING,
    PAGERANK_MAX_ITERATIONS,
    PAGERANK_TOLERANCE,
)
from repomap.focus import Focus
from repomap.graph import FloatArray, IntArray, ReferenceGraph
from repomap.tags import Definition, FileTags

FOCUS_LINE_BOOST = 1_000.0
"""A definition enclosing a focused line (a stack frame) outranks everything else."""

UNREFERENCED_SHARE = 0.01
"""A definition nobody references still gets this share of its file's rank (orders the rest)."""

EDGE_CHUNK = 1 << 20
"""Edges (and file pairs) worked on at a time while ranking (`_Shares`): 8 MB of float64."""

FOCUSED_FILE_SHARE = 1.0
"""In a focused file every definition gets its file's whole rank: the caller asked to see it."""


@dataclass(frozen=True, slots=True)
class RankedDefinition:
    path: str
    definition: Definition
    score: float


@dataclass(frozen=True, slots=True)
class Ranking:
    files: tuple[tuple[str, float], ...]
    """Every file with its PageRank: focused files first, then best first (ties by path)."""
    definitions: tuple[RankedDefinition, ...]
    """The best definitions, best first (ties by path, then line)."""


def rank(
    graph: ReferenceGraph,
    tags: Mapping[str, FileTags],
    focus: Focus | None = None,
    *,
    limit: int | None = None,
) -> Ranking:
    """Rank files and the `limit` best definitions of the graph (built from `tags`)."""
    focus = focus or Focus()
    focused = np.array(
        sorted(graph.idents[i] for i in focus.idents if i in graph.idents), dtype=np.int64
    )
    shares = _Shares(graph, focused)
    scores = _pagerank(
        graph, shares, restart=_restart(graph, focus, focused), dangling=shares.out_weight == 0
    )
    # Focused files lead (the caller asked to see them), then the rest by rank, then path.
    named = np.array([path in focus.files for path in graph.paths], dtype=bool)
    order = np.lexsort((np.arange(graph.size), -scores, ~named))
    files = tuple((graph.paths[i], float(scores[i])) for i in order)
    # The rank flowing into each definition name: along every edge, its source's rank × share.
    flow = np.zeros(int(graph.edge_flow.max()) + 1 if len(graph.edge_flow) else 0)
    for part, share in shares:
        np.add.at(flow, graph.edge_flow[part], share * scores[graph.edge_src[part]])
    return Ranking(
        files,
        _definitions(
            graph, tags, focus, focused=focused, named=named, flow=flow, scores=scores, limit=limit
        ),
    )


class _Shares:
    """Each edge's share of its source file's out-weight (focused identifiers weigh
    FOCUS_IDENT_WEIGHT more), made EDGE_CHUNK edges at a time whenever it is needed.

    Edge-sized arrays are the graph's bulk — a 20,000-file tree can have ten million
    edges, 80 MB per float array, and `np.bincount` copies its index array to int64 — so
    nothing edge-sized is made while ranking: sums run chunk by chunk through `np.add.at`,
    which adds in the same order as bincount did (the same floats, bit for bit; and
    faster). docs/benchmarks.md ("Memory") has what this saved."""

    def __init__(self, graph: ReferenceGraph, focused: IntArray) -> None:
        self._graph, self._focused = graph, focused
        self.out_weight = np.zeros(graph.size)
        for part in graph.chunks(EDGE_CHUNK):
            np.add.at(self.out_weight, graph.edge_src[part], self._weights(part))
        self._divisor = np.where(self.out_weight > 0, self.out_weight, 1.0)

    def _weights(self, part: slice) -> FloatArray:
        weight = self._graph.weights(part)
        if len(self._focused):
            weight[np.isin(self._graph.identifiers(part), self._focused)] *= FOCUS_IDENT_WEIGHT
        return weight

    def __iter__(self) -> Iterator[tuple[slice, FloatArray]]:
        """(edges, their shares) chunk by chunk; each array is the caller's to change."""
        for part in self._graph.chunks(EDGE_CHUNK):
            share = self._weights(part)
            share /= self._divisor[self._graph.edge_src[part]]
            yield part, share


def _chunks(length: int) -> Iterator[slice]:
    return (slice(start, start + EDGE_CHUNK) for start in range(0, length, EDGE_CHUNK))


def _restart(graph: ReferenceGraph, focus: Focus, focused: IntArray) -> FloatArray:
    n = graph.size
    if not focus or n == 0:
        return np.full(n, 1.0 / max(n, 1))
    mass = np.zeros(n)
    number = {path: i for i, path in enumerate(graph.paths)}
    for path in focus.files:
        if path in number:
            mass[number[path]] += FOCUS_FILE_MASS
    if len(focused):
        mass[graph.definers(focused)] += FOCUS_DEFINER_MASS
    words = {ident.lower() for ident in focus.idents}
    for i, path in enumerate(graph.paths):
        if path.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower() in words:
            mass[i] += FOCUS_PATH_TOKEN_MASS
    total = mass.sum()
    return mass / total if total > 0 else np.full(n, 1.0 / n)


def _pagerank(
    graph: ReferenceGraph,
    shares: _Shares,
    *,
    restart: FloatArray,
    dangling: npt.NDArray[np.bool_],
) -> FloatArray:
    """Power iteration over file pairs, each pair weighing the shares of its edges."""
    n, pair_src, pair_dst = graph.size, graph.pair_src, graph.pair_dst
    pair_share = np.zeros(len(pair_src))
    for part, share in shares:
        np.add.at(pair_share, graph.edge_pair[part], share)
    scores = restart.copy()
    for _ in range(PAGERANK_MAX_ITERATIONS):
        spread = np.zeros(n)
        for part in _chunks(len(pair_src)):
            np.add.at(spread, pair_dst[part], scores[pair_src[part]] * pair_share[part])
        new = PAGERANK_DAMPING * (spread + scores[dangling].sum() * restart)
        new += (1 - PAGERANK_DAMPING) * restart
        converged = np.abs(new - scores).sum() < PAGERANK_TOLERANCE
        scores = new
        if converged:
            break
    return scores


def _definitions(
    graph: ReferenceGraph,
    tags: Mapping[str, FileTags],
    focus: Focus,
    *,
    focused: IntArray,
    named: npt.NDArray[np.bool_],
    flow: FloatArray,
    scores: FloatArray,
    limit: int | None,
) -> tuple[RankedDefinition, ...]:
    """Score every definition, then order only the best `limit` of them."""
    if not len(graph.def_file):
        return ()
    score = np.where(
        graph.def_flow >= 0, flow[np.maximum(graph.def_flow, 0)] if len(flow) else 0.0, 0.0
    )
    share = np.where(named, FOCUSED_FILE_SHARE, UNREFERENCED_SHARE)
    score += scores[graph.def_file] * share[graph.def_file]
    score *= np.where(np.isin(graph.def_ident, focused), FOCUS_IDENT_WEIGHT, 1.0)
    score += _line_boost(graph, tags, focus)
    candidates = np.arange(len(score))
    if limit is not None and limit <= 0:
        return ()
    if limit is not None and limit < len(score):
        # Everything scoring at least the limit-th best score: ties stay in, order is exact.
        threshold = np.partition(score, len(score) - limit)[len(score) - limit]
        candidates = np.flatnonzero(score >= threshold)
    within = np.lexsort(
        (graph.def_line[candidates], graph.def_file[candidates], -score[candidates])
    )
    order = candidates[within][:limit]
    ranked = []
    for i in order.tolist():
        path = graph.paths[graph.def_file[i]]
        definition = tags[path].definitions[graph.def_index[i]]
        ranked.append(RankedDefinition(path, definition, float(score[i])))
    return tuple(ranked)


def _line_boost(graph: ReferenceGraph, tags: Mapping[str, FileTags], focus: Focus) -> FloatArray:
    boost = np.zeros(len(graph.def_file))
    if not focus.lines:
        return boost
    number = {path: i for i, path in enumerate(graph.paths)}
    for path, lines in focus.lines.items():
        for i in np.flatnonzero(graph.def_file == number.get(path, -1)):
            definition = tags[path].definitions[graph.def_index[i]]
            if any(definition.start_line <= line <= definition.end_line for line in lines):
                boost[i] = FOCUS_LINE_BOOST
    return boost
