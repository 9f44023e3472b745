"""Helpers shared by the per-format trace parsers: lines with offsets, fences, locations.

Every parser walks `split_lines(text)`, a list of `Line`s carrying character offsets into
the original text, so a `Trace` can report exactly where it was found.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, NamedTuple, TypeVar

from diagnoser.intake.report import Trace

MAX_LINE = 2_000
"""Longer lines are never matched as frames or headers (keeps every regex cheap)."""

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


@lru_cache(maxsize=2)
def split_lines(text: str) -> Lines:
    """Split on any line break (CRLF included), keeping offsets into `text`.

    Cached: `parse_traces` runs every family parser over the same text.
    """
    lines: list[Line] = []
    pos = 0
    for raw in text.splitlines(keepends=True):
        body = raw.rstrip(_TERMINATORS)
        end = pos + len(body)
        lines.append(Line(pos, end, body if len(body) <= MAX_LINE else ""))
        pos += len(raw)
    return tuple(lines)


S = TypeVar("S", bound=Sequence[Any])
"""The lines a family parser walks (`Lines`, or its own richer rows)."""


def scan(lines: S, block_at: Callable[[S, int], tuple[list[Trace], int] | None]) -> list[Trace]:
    """Every block in `lines`, in order: the loop each family parser shares. `block_at`
    parses the block starting at line `i` (its traces and the next line index), or returns
    None when no block starts there."""
    traces: list[Trace] = []
    i = 0
    while i < len(lines):
        found = block_at(lines, i)
        if found is None:
            i += 1
            continue
        block, next_i = found
        traces.extend(block)
        i = max(next_i, i + 1)  # always move on, whatever a parser returns
    return traces


def one(found: tuple[Trace | None, int]) -> tuple[list[Trace], int]:
    """A single-trace block result in the shape `scan` expects."""
    trace, end = found
    return ([trace] if trace is not None else []), end


def is_fence(text: str) -> bool:
    """A markdown code-fence line (```` ``` ````, ```` ```python ````, `~~~`)."""
    return _FENCE.match(text) is not None


def to_int(value: str | None) -> int | None:
    """`int(value)` for a digit string, else None (also for absurdly long numbers)."""
    if value is None or not value.isdigit() or len(value) > 9:
        return None
    return int(value)


def split_location(loc: str) -> tuple[str, int | None, int | None]:
    """`file:line:col` / `file:line` / `file` → parts, splitting from the right.

    Right-splitting keeps Windows drives and URLs (`C:\\x.js`, `https://h/x.js`) whole.
    """
    head, sep, last = loc.rpartition(":")
    if not sep or not last.isdigit():
        return loc, None, None
    head2, sep2, mid = head.rpartition(":")
    if sep2 and mid.isdigit() and head2:
        return head2, to_int(mid), to_int(last)
    return head, to_int(last), None


def language_of(file: str | None, default: str | None) -> str | None:
    """The language a file extension names, else `default`."""
    if not file or "." not in file:
        return default
    ext = file.rsplit(".", 1)[1].lower()
    return _EXT_LANGUAGE.get(ext, default)


def split_qualified(name: str, sep: str) -> tuple[str | None, str]:
    """`a.b.C.m` → (`a.b.C`, `m`), ignoring separators inside `<>`, `[]` and `()`."""
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
