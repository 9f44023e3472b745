"""Rust panics, with or without a `RUST_BACKTRACE` backtrace.

Two panic headers exist: since Rust 1.73 `thread 'main' panicked at src/main.rs:5:10:`
with the message on the next line; before, `thread 'main' panicked at 'msg', src/x.rs:5:10`.
Backtrace frames (`  N: crate::module::func` + `at ./src/x.rs:3:5`) are newest first.
Without a backtrace the panic location is the only frame.
"""

from __future__ import annotations

import re

from diagnoser.intake.report import Frame, FrameOrder, Trace, TraceException, TraceFormat
from diagnoser.intake.traces._common import (
    FrameRun,
    Lines,
    is_fence,
    one,
    scan,
    split_lines,
    split_location,
    split_qualified,
)

LANGUAGE = "rust"
EXCEPTION_TYPE = "panic"
MAX_GAP = 3
"""Lines allowed between the panic message and `stack backtrace:` (notes, blanks)."""

_HEAD = re.compile(r"^thread '(?P<thread>[^']*)'(?: \(\d+\))? panicked at (?P<rest>.+)$")
_FRAME = re.compile(r"^\s*\d+:\s+(?:0x[0-9a-fA-F]+ - )?(?P<func>\S.*)$")
_AT = re.compile(r"^\s+at (?P<loc>\S.*)$")
_HASH = re.compile(r"::h[0-9a-f]{16}$")


def parse(text: str) -> list[Trace]:
    """Every Rust panic in `text`."""
    return scan(split_lines(text), _block_at)


def _block_at(lines: Lines, i: int) -> tuple[list[Trace], int] | None:
    m = _HEAD.match(lines[i].text)
    if m is None:
        return None
    return one(_panic(lines, i, m.group("rest").strip()))


def _panic(lines: Lines, i: int, rest: str) -> tuple[Trace, int]:
    end = lines[i].end
    j = i + 1
    quoted, sep, old_loc = rest.rpartition("', ")
    if rest.startswith("'") and sep and old_loc and " " not in old_loc:
        message: str | None = quoted[1:]
        loc = old_loc
    else:
        loc = rest.removesuffix(":")
        message = lines[j].text.strip() if j < len(lines) else None
        if j < len(lines):
            end, j = lines[j].end, j + 1
    file, line, col = split_location(loc)
    frames = FrameRun(FrameOrder.NEWEST_FIRST)
    frames.add(Frame(file=file, line=line, column=col, language=LANGUAGE))
    for k in range(j, min(j + MAX_GAP, len(lines))):
        if lines[k].text.strip() == "stack backtrace:":
            backtrace, j = _backtrace(lines, k + 1)
            if backtrace:
                frames, end = backtrace, lines[j - 1].end
            break
    trace = Trace(
        format=TraceFormat.RUST,
        source_order=FrameOrder.NEWEST_FIRST,
        exception=TraceException(type=EXCEPTION_TYPE, message=message or None),
        frames=frames.innermost_last,
        omitted_frames=frames.omitted,
        start=lines[i].start,
        end=end,
    )
    return trace, j


def _backtrace(lines: Lines, j: int) -> tuple[FrameRun, int]:
    """Frames from `j` on, and the index after the last line consumed."""
    frames = FrameRun(FrameOrder.NEWEST_FIRST)
    last = j
    while j < len(lines):
        text = lines[j].text
        at = _AT.match(text)
        head = None if at else _FRAME.match(text)
        if at is not None and frames:
            file, line, col = split_location(at.group("loc").strip())
            frames.amend_last(file=file, line=line, column=col)
        elif head is not None:
            frames.add(_frame(head.group("func").strip()))
        elif not is_fence(text):
            break
        j += 1
        last = j
    return frames, last


def _frame(func: str) -> Frame:
    """`crate::module::func::h0123…` → module `crate::module`, function `func`."""
    func = _HASH.sub("", func)
    module, function = split_qualified(func, "::")
    return Frame(function=function, module=module, language=LANGUAGE)
