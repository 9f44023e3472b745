"""`fuse`: the report's own ranking and the reproducing run's, by reciprocal rank (pure).

A run's traceback shows where the failure surfaced, which is not always where the defect
is (a validation error raised by the schema for a field's missing check; a `TypeError` in
the callee for the caller's bad argument), while the report's words and names often point
at the defect itself. Replacing one ranking by the other loses whichever was right, so
the two are fused by file: each file scores `1 / (RRF_K + rank)` in each list, the report's
order breaks ties, and a file's places come in the order of the list that ranked it
higher, then the other's (a place both hold, once) — but a place found by shared words
alone never comes before one a trace or a name leads to. `RRF_K` is the usual constant of
reciprocal rank fusion (`diagnoser.rank_fusion`), not tuned here
(docs/benchmarks.md#proof-by-execution: the same on that set for 1, 10 and 60).
"""

from __future__ import annotations

from collections.abc import Sequence

from diagnoser.candidate import UNLED, Candidate
from diagnoser.rank_fusion import fused_order


def fuse(report: Sequence[Candidate], run: Sequence[Candidate]) -> list[Candidate]:
    """One ranking of `report`'s and `run`'s candidates, best first."""
    orders = [list(dict.fromkeys(c.path for c in ranking)) for ranking in (report, run)]
    files = fused_order(*orders)
    first_seen = list(dict.fromkeys([*orders[0], *orders[1]]))
    fused: dict[tuple[str, int], Candidate] = {}
    for path in files:
        ranks = [order.index(path) if path in order else len(first_seen) for order in orders]
        better, other = (report, run) if ranks[0] <= ranks[1] else (run, report)
        places = [c for c in (*better, *other) if c.path == path]
        for candidate in sorted(places, key=lambda c: c.source in UNLED):
            fused.setdefault((candidate.path, candidate.line), candidate)
    return list(fused.values())
