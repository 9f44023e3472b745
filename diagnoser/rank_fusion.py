"""Reciprocal rank fusion of file orders (pure): each file scores `1 / (RRF_K + rank)` in
each order it is in, best total first, ties in the order first seen (the first order's,
then the next's). `RRF_K` is the method's usual constant (Cormack, Clarke and Büttcher,
2009), not tuned here: on the sets it was tried on (a reproducing run's traceback fused
with the report's ranking; a review's meaning fused with its words) 1, 10 and 60 were
within a few cases of each other (docs/benchmarks.md)."""

from __future__ import annotations

from collections.abc import Sequence

RRF_K = 60


def fused_order(*orders: Sequence[str]) -> list[str]:
    """Every path of `orders`, by reciprocal rank fusion."""
    first_seen = list(dict.fromkeys(path for order in orders for path in order))
    score = dict.fromkeys(first_seen, 0.0)
    for order in orders:
        for rank, path in enumerate(order, start=1):
            score[path] += 1 / (RRF_K + rank)
    position = {path: n for n, path in enumerate(first_seen)}
    return sorted(first_seen, key=lambda path: (-score[path], position[path]))
