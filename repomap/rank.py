"""Rank files and definitions: personalised PageRank over the reference graph.

A file that uses an identifier points at every other file defining it, and each of those
edges points back, weaker (`graph.py`). The random walk restarts at the focused files and
the definers of focused identifiers, so their neighbourhood rises; edges of focused
identifiers weigh more. Edges into copies of code (`repomap.copies`) weigh
COPY_EDGE_WEIGHT, so a single header that defines every name does not collect the rank
of all of them.

The edges are never made: every edge of an identifier is one of its uses times one of
its links (the files defining it), so a sum over its edges is a sum over its uses times
a sum over its links, less the file's edge to itself (`_Walk`). One step of the power
iteration is a few `bincount`s over the uses and links.
A definition's score is the rank that flows into its file along its own identifier.
"""

from __future__ import annotations

from collections.abc import Mapping
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
    REVERSE_EDGE_WEIGHT,
)
from repomap.focus import Focus
from repomap.graph import FloatArray, IntArray, ReferenceGraph
from repomap.tags import Definition, FileTags

FOCUS_LINE_BOOST = 1_000.0
"""A definition enclosing a focused line (a stack frame) outranks everything else."""

UNREFERENCED_SHARE = 0.01
"""A definition nobody references still gets this share of its file's rank (orders the rest)."""

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
    walk = _Walk(graph, focused)
    scores = _pagerank(walk, restart=_restart(graph, focus, focused))
    # Focused files lead (the caller asked to see them), then the rest by rank, then path.
    named = np.array([path in focus.files for path in graph.paths], dtype=bool)
    order = np.lexsort((np.arange(graph.size), -scores, ~named))
    files = tuple((graph.paths[i], float(scores[i])) for i in order)
    return Ranking(
        files,
        _definitions(
            graph, tags, focus, focused=focused, named=named, flow=walk.flow(scores),
            scores=scores, limit=limit,
        ),
    )  # fmt: skip


class _Walk:
    """The random walk's edges for one focus, as sums over uses and links.

    An edge of identifier i from file r (a use, weight w) to file d (a link) weighs
    w × weight(d), and its reverse w × REVERSE_EDGE_WEIGHT × weight(r); the edges of a
    focused identifier weigh FOCUS_IDENT_WEIGHT times more; no file has an edge to itself.
    A sum over every edge of i is then (sum over its uses) × (sum over its links), less
    the terms where both are one file — known per use (`use_self`) and per link
    (`link_use`). Nothing here is edge-sized: a 20,000-file tree has millions of edges,
    and its uses and links are a sixteenth of that (docs/benchmarks.md, "Memory")."""

    def __init__(self, graph: ReferenceGraph, focused: IntArray) -> None:
        self._graph = g = graph
        self._idents = len(graph.idents)
        self._use = g.use_weight
        if len(focused):
            self._use = np.where(np.isin(g.use_ident, focused), FOCUS_IDENT_WEIGHT, 1.0) * self._use
        self._user_weight = g.file_weight[g.use_file]
        self._definer_weight = g.file_weight[g.link_file]
        own = g.link_use >= 0
        self._own_use = np.zeros(len(g.link_use))  # each link's own use's weight, or 0
        self._own_use[own] = self._use[g.link_use[own]]
        # Out-weight of each file: its uses' edges to the other definers, its links'
        # reverse edges to the other users.
        definers = _sums(g.link_ident, self._definer_weight, self._idents)
        users = _sums(g.use_ident, self._use * self._user_weight, self._idents)
        forward = self._use * (definers[g.use_ident] - g.use_self * self._user_weight)
        backward = users[g.link_ident] - self._own_use * self._definer_weight
        backward *= REVERSE_EDGE_WEIGHT
        self.out_weight = _sums(g.use_file, forward, g.size) + _sums(g.link_file, backward, g.size)
        self.dangling = self.out_weight <= 0
        self._divisor = np.where(self.dangling, 1.0, self.out_weight)

    def _inflow(self, scores: FloatArray) -> tuple[FloatArray, FloatArray]:
        """The rank each link receives along its forward edges, and each use along the
        reverse edges into its file, one step from `scores`."""
        g = self._graph
        share = scores / self._divisor  # a file's rank per unit of its out-weight
        sent = _sums(g.use_ident, share[g.use_file] * self._use, self._idents)
        into_link = sent[g.link_ident] - self._own_use * share[g.link_file]
        into_link *= self._definer_weight
        back = _sums(g.link_ident, share[g.link_file], self._idents)
        into_use = back[g.use_ident] - g.use_self * share[g.use_file]
        into_use *= self._use * self._user_weight * REVERSE_EDGE_WEIGHT
        return into_link, into_use

    def step(self, scores: FloatArray) -> FloatArray:
        """The rank each file receives along the edges, one step from `scores`."""
        g = self._graph
        into_link, into_use = self._inflow(scores)
        return _sums(g.link_file, into_link, g.size) + _sums(g.use_file, into_use, g.size)

    def flow(self, scores: FloatArray) -> FloatArray:
        """Per link, the rank flowing into its file along its identifier: forward edges
        into the definer, and reverse edges into it where it also uses the name."""
        into_link, into_use = self._inflow(scores)
        own = self._graph.link_use >= 0
        into_link[own] += into_use[self._graph.link_use[own]]
        return into_link


def _sums(index: npt.NDArray[np.int32], weights: FloatArray, size: int) -> FloatArray:
    """Per number below `size`, the sum of the `weights` of its places in `index`."""
    sums: FloatArray = np.bincount(index, weights, minlength=size).astype(np.float64, copy=False)
    return sums


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


def _pagerank(walk: _Walk, *, restart: FloatArray) -> FloatArray:
    """Power iteration: each step, rank spreads along the edges, dangling files' rank
    restarts."""
    scores = restart.copy()
    for _ in range(PAGERANK_MAX_ITERATIONS):
        new = PAGERANK_DAMPING * (walk.step(scores) + scores[walk.dangling].sum() * restart)
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
        graph.def_link >= 0, flow[np.maximum(graph.def_link, 0)] if len(flow) else 0.0, 0.0
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
