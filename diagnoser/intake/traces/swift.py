"""Apple crash reports (the crashed thread's frames) and Swift runtime fatal errors.

A crash report names the exception in `Exception Type:` (and `Exception Reason:` or
the line after `Application Specific Information:`), then lists each thread newest
first; only `Thread N Crashed:` is taken. A bare Swift runtime error
(`Fatal error: msg: file x.swift, line 12` or `x.swift:12: Fatal error: msg`) outside a
crash report is a one-frame trace.
"""

from __future__ import annotations

import re

from diagnoser.intake.report import Frame, FrameOrder, Trace, TraceException, TraceFormat
from diagnoser.intake.traces._common import (
    MAX_TRACES_PER_FAMILY,
    FrameRun,
    Line,
    Lines,
    is_fence,
    language_of,
    split_lines,
    split_location,
    to_int,
)

FATAL = "Fatal error"
HEADER_LOOKBACK = 80
"""Lines above `Thread N Crashed:` searched for `Exception Type:` and friends."""

_CRASHED = re.compile(r"^Thread \d+ Crashed:")
_FRAME = re.compile(r"^(?P<idx>\d+)\s+(?P<image>\S+)\s+0x[0-9a-fA-F]+ (?P<rest>.+)$")
_FATAL_OLD = re.compile(r"Fatal error: (?P<msg>.*): file (?P<file>[^,]+), line (?P<line>\d+)\s*$")


def parse(text: str) -> list[Trace]:
    """Every crashed thread of an Apple crash report, and loose Swift fatal errors."""
    lines = split_lines(text)
    crashes: list[Trace] = []
    for i, line in enumerate(lines):
        crash = _crash(lines, i) if _CRASHED.match(line.text) else None
        if crash is not None and crash.frames:
            crashes.append(crash)
            if len(crashes) >= MAX_TRACES_PER_FAMILY:
                break
    fatals: list[Trace] = []
    k = 0  # the crashes are in text order: one pass skips the lines inside them
    for line in lines:
        while k < len(crashes) and crashes[k].end <= line.start:
            k += 1
        if k < len(crashes) and crashes[k].start <= line.start:
            continue
        fatal = _fatal(line)
        if fatal is not None:
            fatals.append(fatal)
            if len(fatals) >= MAX_TRACES_PER_FAMILY:
                break
    return sorted(crashes + fatals, key=lambda t: t.start)[:MAX_TRACES_PER_FAMILY]


def _crash(lines: Lines, i: int) -> Trace:
    start, exc = _header(lines, i)
    frames = FrameRun(FrameOrder.NEWEST_FIRST)
    end = lines[i].end
    for k in range(i + 1, len(lines)):  # by index: a slice would copy the rest of the text
        line = lines[k]
        frame = _frame(line.text)
        if frame is None and not is_fence(line.text):
            break
        if frame is not None:
            frames.add(frame)
            end = line.end
    return Trace(
        format=TraceFormat.SWIFT,
        source_order=FrameOrder.NEWEST_FIRST,
        exception=exc,
        frames=frames.innermost_last,
        omitted_frames=frames.omitted,
        start=start,
        end=end,
    )


def _header(lines: Lines, i: int) -> tuple[int, TraceException | None]:
    """The report's start offset and exception, read from the lines above `i`."""
    start = lines[i].start
    exc_type: str | None = None
    reasons: dict[str, str] = {}
    for k in range(i - 1, max(i - HEADER_LOOKBACK, 0) - 1, -1):
        text = lines[k].text
        if _CRASHED.match(text):
            break
        key, sep, value = text.partition(":")
        if not sep:
            continue
        if key == "Exception Type":
            exc_type, start = value.strip() or None, lines[k].start
        elif key in ("Exception Reason", "Crashed Thread", "Triggered by Thread"):
            reasons[key] = value.strip()
        elif key == "Application Specific Information" and k + 1 < i:
            reasons[key] = lines[k + 1].text.strip()
    message = reasons.get("Exception Reason") or reasons.get("Application Specific Information")
    if exc_type is None and not message:
        return start, None
    return start, TraceException(type=exc_type, message=message or None)


def _frame(text: str) -> Frame | None:
    """`0   MyApp   0x0001 MyClass.method() + 123 (File.swift:42)` → a Frame."""
    m = _FRAME.match(text)
    if m is None:
        return None
    rest = m.group("rest").strip()
    file: str | None = None
    line: int | None = None
    if rest.endswith(")") and " (" in rest:
        cut = rest.rfind(" (")
        file, line, _ = split_location(rest[cut + 2 : -1])
        rest = rest[:cut]
    symbol, plus, offset = rest.rpartition(" + ")
    function = symbol if plus and offset.isdigit() else rest
    return Frame(
        file=file,
        line=line or None,
        function=function or None,
        module=m.group("image"),
        language=language_of(file, None),
    )


def _fatal(line: Line) -> Trace | None:
    text = line.text
    if FATAL + ": " not in text:
        return None
    old = _FATAL_OLD.search(text)
    if old is not None:
        file, number, message = old.group("file"), old.group("line"), old.group("msg")
    else:
        # `Swift/Array.swift:600: Fatal error: msg` (Swift 5.4+): the location precedes.
        prefix, _, message = text.partition(FATAL + ": ")
        loc = prefix.removesuffix(": ").rsplit(" ", 1)[-1]
        file, line_no, _ = split_location(loc)
        if not prefix.endswith(": ") or line_no is None or not file.endswith(".swift"):
            return None
        number = str(line_no)
    return Trace(
        format=TraceFormat.SWIFT,
        source_order=FrameOrder.NEWEST_FIRST,
        exception=TraceException(type=FATAL, message=message.strip() or None),
        frames=(Frame(file=file, line=to_int(number), language="swift"),),
        start=line.start,
        end=line.end,
    )
