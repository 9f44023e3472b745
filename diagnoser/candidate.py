"""A candidate: one place in the repository worth reading, with the signal that led there.

The value the ranking (`diagnoser.candidates`) returns and its steps share — the trace's
frames (`diagnoser.frames`), the crash site (`diagnoser.crash_site`) — so it sits below
them all: they import it, it imports none of them.

    span("app/cart.py", definition, 42, Source.FRAME, "on the failing path")
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from repomap import Definition

CONTEXT_LINES = 12
"""Lines around a frame line worth reading when its definition is long."""


class Source(StrEnum):
    FRAME = "frame"
    MENTION = "mention"
    """The report names the file or a definition in it."""
    WORDS = "words"
    """Only the report's words match: context, never called the fault."""
    DATAFLOW = "dataflow"
    """Computes a value the failing check tested (an explicit raise's guard)."""
    MEANING = "meaning"
    """A store review's meaning is nearest what the function says (any language)."""


UNLED = frozenset({Source.WORDS, Source.MEANING})
"""Places no trace or name leads to: context, never called the fault."""


@dataclass(frozen=True, slots=True)
class Candidate:
    path: str
    line: int
    """The line that matters: the frame's line, or the definition's signature line."""
    start: int
    end: int
    """Lines worth reading around `line`, inside its definition."""
    symbol: str | None
    source: Source
    reason: str = ""
    """Why this place, in words for the report."""
    score: float = 0.0
    """How strongly its signal points here. A frame: its file's prior (depth decay, less
    UTILITY_PENALTY in a utility module, plus the headline's lift: `diagnoser.frames`; so
    it can be negative). Any other place: its file's relevance total (0 when only a guard's
    dataflow leads there). Comparable within one source, not across: the list's order is
    the ranking."""


def span(path: str, definition: Definition, line: int, source: Source, reason: str) -> Candidate:
    """The place at `line` inside `definition`: CONTEXT_LINES either side, within it."""
    start = max(definition.start_line, line - CONTEXT_LINES)
    end = min(definition.end_line, line + CONTEXT_LINES)
    return Candidate(path, line, start, max(end, line), definition.qualified, source, reason)
