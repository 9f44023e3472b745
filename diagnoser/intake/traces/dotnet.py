""".NET stack traces (C#, F#, VB): `   at Ns.Class.Method(args) in C:\\x\\File.cs:line 42`.

Frames are newest first. Inner exceptions print as ` ---> System.X: msg` after the
outer header (or on the same line in .NET Framework); the frames that follow belong to
the innermost one, and each `--- End of inner exception stack trace ---` hands the
following frames to the next exception out. One Trace per exception, in text order;
the outermost spans the whole block. Async state machines (`<Get>d__5.MoveNext()`) are
reduced to the method (`Get`).
"""

from __future__ import annotations

import re

from diagnoser.intake.report import Frame, FrameOrder, Trace, TraceException, TraceFormat
from diagnoser.intake.traces._common import (
    MAX_TRACES_PER_FAMILY,
    FrameRun,
    Lines,
    is_fence,
    language_of,
    scan,
    split_lines,
    split_qualified,
    to_int,
)

DEFAULT_LANGUAGE = "dotnet"
INNER = " ---> "
END_INNER = "--- End of inner exception stack trace ---"
END_ASYNC = "--- End of stack trace from previous location"

_HEADER = re.compile(
    r"^(?:Unhandled [Ee]xception[.:] |\[ERROR\] FATAL UNHANDLED EXCEPTION: )?"
    r"(?P<type>[A-Za-z_][\w`]*(?:\.[A-Za-z_][\w`]*)+)(?:: (?P<msg>.*))?$"
)
_FRAME = re.compile(
    r"^\s*at (?P<qual>[^\s(][^(]*)\((?P<args>[^)]*)\)(?: in (?P<file>.+):line (?P<line>\d+))?\s*$"
)
_ASYNC = re.compile(r"^(?P<owner>.*)\.<(?P<method>[^>]+)>d__\d+\.MoveNext$")
_GENERIC = re.compile(r"\[[^\]]*\]$")


def parse(text: str) -> list[Trace]:
    """Every .NET exception (inner exceptions separately) in `text`."""
    return scan(split_lines(text), _block)


def _chain(lines: Lines, i: int) -> tuple[list[tuple[TraceException, int]], int]:
    """Headers from line `i`: outer first, each with its start offset; next line index."""
    chain: list[tuple[TraceException, int]] = []
    j = i
    while j < len(lines) and len(chain) < MAX_TRACES_PER_FAMILY:
        text = lines[j].text
        if j > i and not text.startswith(INNER):
            break
        parts = text.removeprefix(INNER).split(INNER)
        offset = lines[j].start
        for part in parts:
            m = _HEADER.match(part.strip())
            if m is None:
                return chain, j if chain else i
            exc = TraceException(type=m.group("type"), message=_message(m.group("msg")))
            chain.append((exc, offset))
        j += 1
    return chain, j


def _message(msg: str | None) -> str | None:
    return msg.strip() or None if msg is not None else None


def _block(lines: Lines, i: int) -> tuple[list[Trace], int] | None:
    chain, j = _chain(lines, i)
    if not chain:
        return None
    if j >= len(lines) or _frame(lines[j].text) is None:
        # The chains starting on the lines up to `j` end there too, without frames: skip
        # them (re-reading each took 188 s on 8,000 ` ---> ` lines).
        return [], j
    level = len(chain) - 1  # frames go to the innermost exception first
    frames = [FrameRun(FrameOrder.NEWEST_FIRST) for _ in chain]
    ends = [lines[j - 1].end for _ in chain]
    while j < len(lines):
        text = lines[j].text
        frame = _frame(text)
        if frame is not None:
            frames[level].add(frame)
        elif text.strip().startswith(END_INNER):
            level = max(level - 1, 0)
        elif not (is_fence(text) or text.strip().startswith(END_ASYNC)):
            break
        ends[level] = lines[j].end
        j += 1
    traces = [
        Trace(
            format=TraceFormat.DOTNET,
            source_order=FrameOrder.NEWEST_FIRST,
            exception=exc,
            frames=frames[k].innermost_last,
            omitted_frames=frames[k].omitted,
            start=start,
            end=lines[j - 1].end if k == 0 else ends[k],
        )
        for k, (exc, start) in enumerate(chain)
    ]
    return traces, j


def _frame(text: str) -> Frame | None:
    m = _FRAME.match(text)
    if m is None:
        return None
    qual = m.group("qual").strip()
    asynchronous = _ASYNC.match(qual) if qual.endswith(".MoveNext") else None
    if asynchronous is not None:
        module: str | None = asynchronous.group("owner")
        function = asynchronous.group("method")
    else:
        module, function = split_qualified(qual, ".")
        function = _GENERIC.sub("", function)
    file = m.group("file")
    return Frame(
        file=file,
        line=to_int(m.group("line")),
        function=function,
        module=module,
        language=language_of(file, DEFAULT_LANGUAGE),
    )
