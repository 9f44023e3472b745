"""Helpers shared by the per-format trace parsers: lines with offsets, fences, locations,
and the bounds every parser keeps to.

Every parser walks `split_lines(text)`, a list of `Line`s carrying character offsets into
the original text, so a `Trace` can report exactly where it was found. Each collects a
trace's frames in a `FrameRun` (at most `MAX_FRAMES`, the innermost) and stops after
`MAX_TRACES_PER_FAMILY` traces, so a 2 MB text of frame lines costs what 512 frames do.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, NamedTuple, TypeVar

from diagnoser.constants import MAX_FRAMES
from diagnoser.intake.report import Frame, FrameOrder, Trace

MAX_TRACES_PER_FAMILY = 200
"""Beyond this many traces of one family a parser stops: keeps parsing and the pairwise
containment check cheap on hostile input (real reports hold a handful)."""

MAX_LINE = 2_000
"""Longer lines are never matched as frames or headers (keeps every regex cheap)."""
MAX_SCANNED_LINES = 100_000
"""Lines searched for traces; the rest of a longer text is not. Every family parser
costs a few µs per line: 2 MB of blank lines (2M lines) took 14 s and 560 MB, this many
~1 s. A real 2 MB log has lines of 20+ characters, so it is searched whole."""

_FENCE = re.compile(r"^\s{0,3}(?:`{3,}|~{3,})[\w+.#-]*\s*$")

_EXT_LANGUAGE = {
    "py": "python",
    "java": "java",
    "kt": "kotlin",
    "kts": "kotlin",
    "scala": "scala",
    "groovy": "groovy",
    "cs": "csharp",
    "fs": "fsharp",
    "vb": "vb",
    "swift": "swift",
    "m": "objc",
    "mm": "objc",
    "c": "c",
    "cpp": "cpp",
    "cc": "cpp",
    "cxx": "cpp",
    "hpp": "cpp",
    "hh": "cpp",
    "hxx": "cpp",
}


class Line(NamedTuple):
    """One line of the text, without its terminator."""

    start: int
    """Offset of the first character in the text."""
    end: int
    """Offset just past the last character (the terminator is excluded)."""
    text: str
    """The content; empty when the line is longer than `MAX_LINE`."""


Lines = tuple[Line, ...]

_TERMINATORS = "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
"""What `str.splitlines` splits on."""
_BREAK = re.compile(f"\r\n|[{_TERMINATORS}]")


@lru_cache(maxsize=2)
def split_lines(text: str) -> Lines:
    """Split on any line break (CRLF included), keeping offsets into `text`; only the
    first `MAX_SCANNED_LINES` lines.

    Cached: `parse_traces` runs every family parser over the same text.
    """
    cut = len(text)
    for count, found in enumerate(_BREAK.finditer(text), start=1):
        if count == MAX_SCANNED_LINES:
            cut = found.end()
            break
    lines: list[Line] = []
    pos = 0
    for raw in text[:cut].splitlines(keepends=True):
        body = raw.rstrip(_TERMINATORS)
        end = pos + len(body)
        lines.append(Line(pos, end, body if len(body) <= MAX_LINE else ""))
        pos += len(raw)
    return tuple(lines)


S = TypeVar("S", bound=Sequence[Any])
"""The lines a family parser walks (`Lines`, or its own richer rows)."""


class FrameRun:
    """The frames of one trace in the order the text lists them. Beyond `MAX_FRAMES` only
    the innermost are kept — the last ones for `OLDEST_FIRST`, the first for `NEWEST_FIRST`
    — and the rest are counted, never stored."""

    def __init__(self, order: FrameOrder) -> None:
        self.order = order
        self.seen = 0
        """Frames added, kept or not."""
        self._kept: deque[Frame] = deque(
            maxlen=MAX_FRAMES if order is FrameOrder.OLDEST_FIRST else None
        )

    def add(self, frame: Frame) -> None:
        self.seen += 1
        if self.order is FrameOrder.OLDEST_FIRST or len(self._kept) < MAX_FRAMES:
            self._kept.append(frame)

    def amend_last(self, **update: object) -> None:
        """Complete the frame added last (its location on the next line), if it was kept."""
        if self._kept and self._last_kept():
            self._kept[-1] = self._kept[-1].model_copy(update=update)

    def _last_kept(self) -> bool:
        return self.order is FrameOrder.OLDEST_FIRST or self.seen <= MAX_FRAMES

    @property
    def last(self) -> Frame | None:
        """The frame added last, if it was kept."""
        return self._kept[-1] if self._kept and self._last_kept() else None

    @property
    def kept(self) -> tuple[Frame, ...]:
        """The kept frames, in text order."""
        return tuple(self._kept)

    @property
    def innermost_last(self) -> tuple[Frame, ...]:
        kept = tuple(self._kept)
        return kept if self.order is FrameOrder.OLDEST_FIRST else kept[::-1]

    @property
    def omitted(self) -> int:
        """Outer frames seen but not kept."""
        return self.seen - len(self._kept)

    def __bool__(self) -> bool:
        return self.seen > 0


def scan(lines: S, block_at: Callable[[S, int], tuple[list[Trace], int] | None]) -> list[Trace]:
    """Every block in `lines`, in order, up to `MAX_TRACES_PER_FAMILY` traces: the loop each
    family parser shares. `block_at` parses the block starting at line `i` (its traces and
    the next line index), or returns None when no block starts there."""
    traces: list[Trace] = []
    i = 0
    while i < len(lines) and len(traces) < MAX_TRACES_PER_FAMILY:
        found = block_at(lines, i)
        if found is None:
            i += 1
            continue
        block, next_i = found
        traces.extend(block)
        i = max(next_i, i + 1)  # always move on, whatever a parser returns
    return traces[:MAX_TRACES_PER_FAMILY]


def one(found: tuple[Trace | None, int]) -> tuple[list[Trace], int]:
    """A single-trace block result in the shape `scan` expects."""
    trace, end = found
    return ([trace] if trace is not None else []), end


def unscanned(text: str) -> int | None:
    """Where `split_lines` stopped in `text`, if anything but line breaks follows."""
    lines = split_lines(text)
    if len(lines) < MAX_SCANNED_LINES:
        return None
    rest = lines[-1].end
    return rest if text[rest:].strip(_TERMINATORS) else None


def is_fence(text: str) -> bool:
    """A markdown code-fence line (```` ``` ````, ```` ```python ````, `~~~`)."""
    return _FENCE.match(text) is not None


def to_int(value: str | None) -> int | None:
    """`int(value)` for a digit string, else None (also for absurdly long numbers).
    `isdecimal`, not `isdigit`: `int("²")` raises."""
    if value is None or not value.isdecimal() or len(value) > 9:
        return None
    return int(value)


def split_location(loc: str) -> tuple[str, int | None, int | None]:
    """`file:line:col` / `file:line` / `file` → parts, splitting from the right.

    Right-splitting keeps Windows drives and URLs (`C:\\x.js`, `https://h/x.js`) whole.
    """
    head, sep, last = loc.rpartition(":")
    if not sep or not last.isdecimal():
        return loc, None, None
    head2, sep2, mid = head.rpartition(":")
    if sep2 and mid.isdecimal() and head2:
        return head2, to_int(mid), to_int(last)
    return head, to_int(last), None


def language_of(file: str | None, default: str | None) -> str | None:
    """The language a file extension names, else `default`."""
    if not file or "." not in file:
        return default
    ext = file.rsplit(".", 1)[1].lower()
    return _EXT_LANGUAGE.get(ext, default)


_BRACKETS = frozenset("<[(>])")


def split_qualified(name: str, sep: str) -> tuple[str | None, str]:
    """`a.b.C.m` → (`a.b.C`, `m`), ignoring separators inside `<>`, `[]` and `()`."""
    if len(sep) == 1 and not _BRACKETS.intersection(name):  # most frames: no need to walk
        cut = name.rfind(sep)
        return (None, name) if cut <= 0 else (name[:cut], name[cut + 1 :])
    depth = 0
    cut = -1
    i = 0
    while i < len(name):
        ch = name[i]
        if ch in "<[(":
            depth += 1
        elif ch in ">])" and depth > 0:
            depth -= 1
        elif depth == 0 and name.startswith(sep, i):
            cut = i
            i += len(sep)
            continue
        i += 1
    if cut <= 0:
        return None, name
    return name[:cut], name[cut + len(sep) :]
