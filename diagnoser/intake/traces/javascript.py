"""JavaScript stacks: V8 / Node (`    at fn (file:line:col)`) and Gecko / Safari (`fn@file:l:c`).

Both list the newest frame first, so frames are reversed. The exception is the
`Type: message` line just above the first frame, when there is one. A promise library's
long stack trace (Bluebird, Q: `From previous event:` and the frames of the code that
started the asynchronous work) continues the same trace with older frames: it is the
caller side of the failure, not a second error.
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
)

LANGUAGE = "javascript"

_V8 = re.compile(r"^\s*at (?P<body>\S.*)$")
_GECKO = re.compile(r"^\s*(?P<func>[^@\s]*)@(?P<loc>\[native code\]|\S+)\s*$")
_EXCEPTION = re.compile(
    # Chrome's console puts where it logged before `Uncaught`: `VM296:4 Uncaught TypeError: …`
    r"^\s*(?:\S+:\d+\s+(?=Uncaught ))?(?:Uncaught (?:\(in promise\) )?)?"
    r"(?P<type>[A-Za-z_$][\w$.]*)(?: \[[\w-]+\])?"
    r"(?::[ \t]?(?P<msg>.*))?$"
)
_NON_FILE = ("<anonymous>", "native", "[native code]")
_CONTINUED = re.compile(r"^\s*From previous event:\s*$")
"""The line between a long stack trace's parts: the frames after it are older."""


def parse(text: str) -> list[Trace]:
    """Every V8 and Gecko/Safari stack in `text`."""
    return scan(split_lines(text), _block_at)


def _block_at(lines: Lines, i: int) -> tuple[list[Trace], int] | None:
    kind = _kind(lines[i].text)
    if kind is None:
        return None
    return one(_block(lines, i, kind))


def _kind(text: str) -> TraceFormat | None:
    if _v8_frame(text) is not None:
        return TraceFormat.JAVASCRIPT_V8
    if _gecko_frame(text) is not None:
        return TraceFormat.JAVASCRIPT_GECKO
    return None


def _parse_frame(text: str, kind: TraceFormat) -> Frame | None:
    if kind is TraceFormat.JAVASCRIPT_V8:
        return _v8_frame(text)
    return _gecko_frame(text)


def _block(lines: Lines, i: int, kind: TraceFormat) -> tuple[Trace | None, int]:
    frames = FrameRun(FrameOrder.NEWEST_FIRST)
    end = lines[i].end
    j = i
    while j < len(lines):
        text = lines[j].text
        frame = _parse_frame(text, kind)
        if frame is not None:
            frames.add(frame)
            end = lines[j].end
        elif not (is_fence(text) or _continues(lines, j, kind)):
            break
        j += 1
    if kind is TraceFormat.JAVASCRIPT_GECKO and not any(f.line for f in frames.kept):
        return None, j  # `name@host` alone is an e-mail address, not a stack
    start = lines[i].start
    exc: TraceException | None = None
    if i > 0:
        m = _EXCEPTION.match(lines[i - 1].text)
        if m is not None and (m.group("msg") is not None or _looks_like_error(m.group("type"))):
            exc = TraceException(type=m.group("type"), message=_strip(m.group("msg")))
            prev = lines[i - 1]
            start = prev.start + len(prev.text) - len(prev.text.lstrip())
    trace = Trace(
        format=kind,
        source_order=FrameOrder.NEWEST_FIRST,
        exception=exc,
        frames=frames.innermost_last,
        omitted_frames=frames.omitted,
        start=start,
        end=end,
    )
    return trace, j


def _continues(lines: Lines, j: int, kind: TraceFormat) -> bool:
    """Whether line `j` joins two parts of one long stack trace (a frame follows it)."""
    return (
        _CONTINUED.match(lines[j].text) is not None
        and j + 1 < len(lines)
        and _parse_frame(lines[j + 1].text, kind) is not None
    )


def _looks_like_error(name: str) -> bool:
    return name.endswith(("Error", "Exception"))


def _strip(msg: str | None) -> str | None:
    return msg.strip() if msg is not None else None


def _location(loc: str) -> tuple[str | None, int | None, int | None]:
    if loc in _NON_FILE or loc.startswith("index "):
        return None, None, None
    file, line, col = split_location(loc)
    return file, line, col


def _v8_frame(text: str) -> Frame | None:
    """`at fn (loc)`, `at loc`, `at async fn (loc)`, `at new Foo (loc)`."""
    m = _V8.match(text)
    if m is None:
        return None
    body = m.group("body").strip()
    func: str | None = None
    if body.endswith(")") and " (" in body:
        func, _, loc = body[:-1].partition(" (")
        for prefix in ("async ", "new "):
            func = func.removeprefix(prefix)
    elif " " in body:
        return None
    else:
        loc = body
    file, line, col = _location(loc)
    if file is not None and line is None:
        return None
    if file is None and func is None:
        return None
    return Frame(file=file, line=line, column=col, function=func or None, language=LANGUAGE)


def _gecko_frame(text: str) -> Frame | None:
    """`fn@file:line:col` (Firefox, Safari); `@file:l:c` for anonymous code."""
    m = _GECKO.match(text)
    if m is None:
        return None
    file, line, col = _location(m.group("loc"))
    if file is not None and line is None:
        return None
    func = m.group("func") or None
    return Frame(file=file, line=line, column=col, function=func, language=LANGUAGE)
