"""PHP uncaught exceptions: `PHP Fatal error:  Uncaught X: msg in /p/x.php:12`, then
`Stack trace:` and `#0 /p/x.php(12): Foo->bar()` … `#N {main}` (newest first).

The header's `in file:line` is where the exception was thrown, so it becomes the
innermost frame. A plain `X: msg in file:line` (an exception cast to string, or a chained
`Next X: …`) counts when `Stack trace:` follows it.
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
    to_int,
)

LANGUAGE = "php"
STACK = "Stack trace:"

_FATAL = re.compile(r"^(?:\[[^\]]*\] )?(?:PHP )?Fatal error: +Uncaught (?P<rest>.+)$")
_PLAIN = re.compile(r"^(?:Next )?(?P<rest>[A-Za-z_\\][\w\\]*: .*)$")
_FRAME = re.compile(r"^#\d+ (?:(?P<file>[^(\s][^(]*)\((?P<line>\d+)\)|\[internal function\]): ")
_MAIN = re.compile(r"^#\d+ \{main\}\s*$")
_THROWN = re.compile(r"^\s+thrown in .+ on line \d+\s*$")
_CALL = re.compile(r"^(?P<func>[^(]*)")


def parse(text: str) -> list[Trace]:
    """Every PHP exception with a `Stack trace:` (or a fatal `Uncaught`) in `text`."""
    return scan(split_lines(text), _block_at)


def _block_at(lines: Lines, i: int) -> tuple[list[Trace], int] | None:
    text_i = lines[i].text
    fatal = _FATAL.match(text_i)
    has_stack = i + 1 < len(lines) and lines[i + 1].text.strip() == STACK
    plain = _PLAIN.match(text_i) if has_stack and fatal is None else None
    head = fatal or (plain if has_stack else None)
    parsed = _header(head.group("rest")) if head is not None else None
    if parsed is None:
        return None
    exc, thrown = parsed
    return one(_block(lines, i, exc, thrown))


def _header(rest: str) -> tuple[TraceException, Frame] | None:
    """`Type: msg in /p/x.php:12` → exception and the frame where it was thrown."""
    body, sep, loc = rest.strip().rpartition(" in ")
    file, colon, number = loc.rpartition(":")
    if not sep or not colon or not number.isdigit():
        return None
    exc_type, _, message = body.partition(": ")
    if not exc_type or " " in exc_type:
        return None
    exc = TraceException(type=exc_type, message=message.strip() or None)
    return exc, Frame(file=file, line=to_int(number), language=LANGUAGE)


def _block(lines: Lines, i: int, exc: TraceException, thrown: Frame) -> tuple[Trace, int]:
    frames = FrameRun(FrameOrder.NEWEST_FIRST)
    frames.add(thrown)  # where it was thrown: the innermost frame
    end = lines[i].end
    j = i + 1
    while j < len(lines):
        text = lines[j].text
        frame = _frame(text)
        if frame is not None:
            frames.add(frame)
        elif not (text.strip() == STACK or is_fence(text) or _THROWN.match(text)):
            break
        end = lines[j].end
        j += 1
    trace = Trace(
        format=TraceFormat.PHP,
        source_order=FrameOrder.NEWEST_FIRST,
        exception=exc,
        frames=frames.innermost_last,
        omitted_frames=frames.omitted,
        start=lines[i].start,
        end=end,
    )
    return trace, j


def _frame(text: str) -> Frame | None:
    if _MAIN.match(text):
        return Frame(function="{main}", language=LANGUAGE)
    m = _FRAME.match(text)
    if m is None:
        return None
    call = text[m.end() :].strip()
    name = call.split("(", 1)[0]
    module: str | None = None
    for sep in ("->", "::"):
        owner, found, method = name.rpartition(sep)
        if found:
            module, name = owner, method
            break
    return Frame(
        file=m.group("file"),
        line=to_int(m.group("line")),
        function=name or None,
        module=module,
        language=LANGUAGE,
    )
