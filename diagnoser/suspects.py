"""Suspects: the ranked candidates as a Finding's list of distinct files to look at.

`rank_candidates` gives places (a file may come twice: two frames of one stack, or a
frame and a function its failing check depends on); a Finding's `suspects` name each
file once, at its best-ranked place, in the ranking's order, at most MAX_SUSPECTS deep.
Computed here from the report's signals, never by a model; grounding keeps only those
whose file and line exist (`grounding.ground`).

    ranked = rank_candidates(report, workspace, limit=SUSPECT_CANDIDATES)
    finding.suspects = suspects(ranked)
"""

from __future__ import annotations

from collections.abc import Sequence

from diagnoser.candidate import Candidate
from diagnoser.finding import MAX_SUSPECTS, Signal, Suspect

SUSPECT_CANDIDATES = 16
"""Places to rank for MAX_SUSPECTS distinct files. A file may hold FRAMES_PER_FILE frames
and a failing check adds MAX_GUARD_INPUTS places, so the worst case is 22; on the
developer benchmark 16 gives the same ten suspects as 22 in 99 of 100 cases and ten in
all 100, and ranking time grows with the depth (each relevant file is placed at its
best function): 14 → 98 same, 12 → 91, 10 → 75 (docs/benchmarks.md, "Suspects")."""


def suspects(ranked: Sequence[Candidate], *, limit: int = MAX_SUSPECTS) -> list[Suspect]:
    """One Suspect per distinct file of `ranked` (best first), at the file's first place."""
    found: dict[str, Suspect] = {}
    for candidate in ranked:
        if len(found) >= limit:
            break
        if candidate.path not in found:
            found[candidate.path] = Suspect(
                path=candidate.path,
                symbol=candidate.symbol,
                line=max(1, candidate.line),
                score=candidate.score,
                source=Signal(candidate.source.value),
                reason=candidate.reason,
            )
    return list(found.values())
