"""Suspects: the ranked candidates as a Finding's list of distinct files to look at.

`rank_candidates` gives places (a file may come twice: two frames of one stack, or a
frame and a function its failing check depends on, or the first file's other functions
that fit the report); a Finding's `suspects` name each file at its best-ranked place, in
the ranking's order, at most SUSPECT_FILES files — and the places that follow a file's
first one directly (another function of the same file), while there is room.
Computed here from the report's signals, never by a model; grounding keeps only those
whose file and line exist (`grounding.ground`).

    ranked = rank_candidates(report, workspace, limit=SUSPECT_CANDIDATES)
    finding.suspects = suspects(ranked)
"""

from __future__ import annotations

from collections.abc import Sequence

from diagnoser.candidate import Candidate
from diagnoser.finding import MAX_SUSPECTS, Signal, Suspect

SUSPECT_FILES = 10
"""Distinct files on the list; MAX_SUSPECTS leaves room for the first file's other
functions (`candidates.EXTRA_PLACES`)."""

SUSPECT_CANDIDATES = 16
"""Places to rank for MAX_SUSPECTS distinct files. A file may hold FRAMES_PER_FILE frames
and a failing check adds MAX_GUARD_INPUTS places, so the worst case is 22; on the
developer benchmark 16 gives the same ten suspects as 22 in 99 of 100 cases and ten in
all 100, and ranking time grows with the depth (each relevant file is placed at its
best function): 14 → 98 same, 12 → 91, 10 → 75 (docs/benchmarks.md, "Suspects")."""


def suspects(ranked: Sequence[Candidate], *, limit: int = MAX_SUSPECTS) -> list[Suspect]:
    """Each distinct file of `ranked` (best first) at its first place, at most
    SUSPECT_FILES files; a place right after one in the same file (another function
    there, `candidates.EXTRA_PLACES`) is listed too while the list has room (`limit`)."""
    found: list[Suspect] = []
    files: set[str] = set()
    previous: str | None = None
    for candidate in ranked:
        if len(found) >= limit:
            break
        path = candidate.path
        new_file = path not in files
        if new_file and len(files) >= SUSPECT_FILES:
            break
        same_run = path == previous and all(s.symbol != candidate.symbol for s in found
                                            if s.path == path)  # fmt: skip
        if new_file or same_run:
            files.add(path)
            found.append(_suspect(candidate))
        previous = path
    return found


def _suspect(candidate: Candidate) -> Suspect:
    return Suspect(
        path=candidate.path,
        symbol=candidate.symbol,
        line=max(1, candidate.line),
        score=candidate.score,
        source=Signal(candidate.source.value),
        reason=candidate.reason,
    )
