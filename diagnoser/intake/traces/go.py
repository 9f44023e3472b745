"""Go panics and goroutine dumps.

A panic prints `panic: msg` (or `fatal error: msg`), then one block per goroutine:
`goroutine N [state]:` and pairs of `pkg.func(args)` / `\t/path/file.go:42 +0x1d`, newest
first. Each goroutine becomes one Trace; the panic's exception goes on the first one
after it (the goroutine that panicked), the others have no exception.
"""

from __future__ import annotations

import re

from diagnoser.intake.report import Frame, FrameOrder, Trace, TraceException, TraceFormat
from diagnoser.intake.traces._common import (
    MAX_TRACES_PER_FAMILY,
    FrameRun,
    Lines,
    is_fence,
    split_lines,
    split_location,
)

LANGUAGE = "go"
MAX_GAP = 4
"""Lines allowed between a `panic:` line and its first goroutine (`[signal …]`, blanks)."""

_PANIC = re.compile(r"^(?P<kind>panic|fatal error): (?P<msg>.*)$")
_GOROUTINE = re.compile(r"^goroutine \d+ \[[^\]]*\]:\s*$")
_CREATED = re.compile(r"^created by (?P<func>\S+)(?: in goroutine \d+)?\s*$")


def parse(text: str) -> list[Trace]:
    """One Trace per goroutine block in `text`; the panicking one carries the exception."""
    lines = split_lines(text)
    traces: list[Trace] = []
    panic: tuple[TraceException, int, int] | None = None
    for i, line in enumerate(lines):
        if len(traces) >= MAX_TRACES_PER_FAMILY:
            break
        m = _PANIC.match(line.text)
        if m is not None:
            msg = m.group("msg").strip().removesuffix(" [recovered]")
            panic = (TraceException(type=m.group("kind"), message=msg), line.start, i)
        elif _GOROUTINE.match(line.text):
            exc: TraceException | None = None
            start = line.start
            if panic is not None and i - panic[2] <= MAX_GAP:
                exc, start = panic[0], panic[1]
            panic = None
            trace = _goroutine(lines, i, exc, start)
            if trace.frames or trace.exception is not None:
                traces.append(trace)
    return traces


def _goroutine(lines: Lines, i: int, exc: TraceException | None, start: int) -> Trace:
    frames = FrameRun(FrameOrder.NEWEST_FIRST)
    end = lines[i].end
    j = i + 1
    while j + 1 < len(lines):
        text = lines[j].text
        if is_fence(text):
            j += 1
            continue
        frame = _frame(text, lines[j + 1].text)
        if frame is None:
            break
        frames.add(frame)
        end = lines[j + 1].end
        j += 2
    return Trace(
        format=TraceFormat.GO,
        source_order=FrameOrder.NEWEST_FIRST,
        exception=exc,
        frames=frames.innermost_last,
        omitted_frames=frames.omitted,
        start=start,
        end=end,
    )


def _frame(call: str, where: str) -> Frame | None:
    """`pkg.(*T).m(0x1, …)` + `\t/p/f.go:42 +0x1d` → a Frame (also `created by …`)."""
    if not call or call[0].isspace():
        return None
    created = _CREATED.match(call)
    if created is not None:
        qual = created.group("func")
    elif call.rstrip().endswith(")") and "(" in call:
        qual = call[: call.rstrip().rfind("(")]
    else:
        return None
    if not where or not where[0].isspace():
        return None
    loc = where.strip()
    offset = loc.rfind(" +0x")
    file, line, _ = split_location(loc[:offset] if offset > 0 else loc)
    if line is None:
        return None
    module, function = _split(qual)
    return Frame(file=file, line=line, function=function, module=module, language=LANGUAGE)


def _split(qual: str) -> tuple[str | None, str]:
    """`github.com/x/y.(*T).m` → (`github.com/x/y`, `(*T).m`)."""
    slash = qual.rfind("/")
    dot = qual.find(".", slash + 1)
    if dot <= 0:
        return None, qual
    return qual[:dot], qual[dot + 1 :]
