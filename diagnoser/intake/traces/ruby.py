"""Ruby backtraces: `file.rb:12:in 'meth': message (Type)` then `\tfrom file.rb:3:in …`.

Ruby 3.4 changed the quoting from "`meth'" to "'Class#meth'"; both are read, and a
qualified name is split into module (`Class`) and function (`meth`). Frames are newest
first. Each first line (with `(Type)`) starts one exception, so a printed cause is the
next Trace.
"""

from __future__ import annotations

import re

from diagnoser.intake.report import Frame, FrameOrder, Trace, TraceException, TraceFormat
from diagnoser.intake.traces._common import (
    FrameRun,
    Lines,
    is_fence,
    scan,
    split_lines,
    to_int,
)

LANGUAGE = "ruby"
MAX_SNIPPET = 6
"""Lines of error_highlight snippet allowed between the first line and the `from` lines."""

_LOC = r"(?P<file>(?:[A-Za-z]:)?[^:\s][^:]*):(?P<line>\d+):in [`'](?P<func>[^'`]*)'"
_FIRST = re.compile(r"^" + _LOC + r"(?:: (?P<rest>.*))?$")
_FROM = re.compile(r"^\s+from " + _LOC + r"\s*$")
_LEVELS = re.compile(r"^\s+\.\.\. \d+ levels\.\.\.\s*$")
_TYPE = re.compile(r" \((?P<type>[A-Z][\w:]*)\)$")
_BLOCK = re.compile(r"^(?P<prefix>(?:block(?: \(\d+ levels\))?|rescue|ensure) in )(?P<rest>.*)$")


def parse(text: str) -> list[Trace]:
    """Every Ruby backtrace in `text`."""
    return scan(split_lines(text), _block_at)


def _block_at(lines: Lines, i: int) -> tuple[list[Trace], int] | None:
    m = _FIRST.match(lines[i].text)
    exc = _exception(m.group("rest")) if m is not None else None
    if m is None or exc is None:
        return None
    frames = FrameRun(FrameOrder.NEWEST_FIRST)
    frames.add(_frame(m))
    end = lines[i].end
    j = _skip_snippet(lines, i + 1)
    while j < len(lines):
        text = lines[j].text
        step = _FROM.match(text)
        if step is not None:
            frames.add(_frame(step))
        elif not (is_fence(text) or _LEVELS.match(text)):
            break
        end = lines[j].end
        j += 1
    return [_trace(frames, exc, lines[i].start, end)], j


def _trace(frames: FrameRun, exc: TraceException, start: int, end: int) -> Trace:
    return Trace(
        format=TraceFormat.RUBY,
        source_order=FrameOrder.NEWEST_FIRST,
        exception=exc,
        frames=frames.innermost_last,
        omitted_frames=frames.omitted,
        start=start,
        end=end,
    )


def _exception(rest: str | None) -> TraceException | None:
    """`undefined method 'x' for nil (NoMethodError)` → type and message."""
    if rest is None:
        return None
    m = _TYPE.search(rest)
    if m is None:
        return None
    return TraceException(type=m.group("type"), message=rest[: m.start()].strip() or None)


def _skip_snippet(lines: Lines, j: int) -> int:
    """Skip error_highlight's snippet (blank, indented code, `^^^^`) before `from` lines."""
    for k in range(j, min(j + MAX_SNIPPET, len(lines))):
        text = lines[k].text
        if _FROM.match(text):
            return k
        if text.strip() and not text[0].isspace():
            return j
    return j


def _frame(m: re.Match[str]) -> Frame:
    module, function = _split(m.group("func"))
    return Frame(
        file=m.group("file"),
        line=to_int(m.group("line")),
        function=function,
        module=module,
        language=LANGUAGE,
    )


def _split(label: str) -> tuple[str | None, str]:
    """`block in Checkout#call` → (`Checkout`, `block in call`); `Foo.bar` → (`Foo`, `bar`)."""
    prefix = ""
    block = _BLOCK.match(label)
    if block is not None:
        prefix, label = block.group("prefix"), block.group("rest")
    if label.startswith("<"):
        return None, prefix + label
    for sep in ("#", "."):
        owner, found, name = label.rpartition(sep)
        if found and owner and name:
            return owner, prefix + name
    return None, prefix + label
