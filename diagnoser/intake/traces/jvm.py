"""JVM stack traces: Java, Kotlin, Scala, and Android logcat (every prefix style).

Frames are newest first (`at` lines), so they are reversed. `Caused by:` and
`Suppressed:` start a new exception each; `... N more` lines only elide shared frames.
An exception a logger printed after its message, on the same line, heads the frames
below it.
Logcat lines of other tags interleaved with the crash are skipped as noise.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from diagnoser.intake.report import Frame, FrameOrder, Trace, TraceException, TraceFormat
from diagnoser.intake.traces._common import (
    FrameRun,
    Line,
    is_fence,
    language_of,
    one,
    scan,
    split_lines,
    split_qualified,
    to_int,
)

DEFAULT_LANGUAGE = "java"
MAX_INTERLEAVED = 20
"""Lines of other logcat tags skipped in a row inside one crash. Unbounded, every header
of a log of distinct tags scanned the rest of the log: 8,000 lines took 6 s."""

_LOGCAT = (
    # E/AndroidRuntime( 1234): …   and   E/AndroidRuntime: …
    re.compile(r"^[VDIWEFA]/(?P<tag>[^(:]*)(?:\(\s*\d+\))?: ?"),
    # 11-29 10:00:00.123  1234  1234 E AndroidRuntime: …   (logcat -v threadtime)
    re.compile(r"^\d\d-\d\d \d\d:\d\d:\d\d\.\d+ +\d+ +\d+ [VDIWEFA] (?P<tag>[^:]*): ?"),
    # 2024-03-14 09:21:44.104 12345-12345 AndroidRuntime   com.example   E  …   (Studio)
    re.compile(
        r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ +\d+-\d+ +(?P<tag>\S+) +(?:\S+ +)?[VDIWEFA]  ?"
    ),
)
_HEADER = re.compile(
    r"^(?P<kind>Caused by: |Suppressed: |Exception in thread \"[^\"]*\" )?"
    r"(?P<type>[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+)(?::[ \t]?(?P<msg>.*))?$"
)
_IN_A_LOG_LINE = re.compile(
    r"(?P<kind>)(?<!\S)(?P<type>(?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error|Throwable))"
    r"(?::[ \t]?(?P<msg>.*))?$"
)
"""An exception a logger printed at the end of its message line (`… WARN The style attribute
is incorrect. java.lang.IllegalArgumentException: No enum constant …`): taken only when
frames follow."""
MAX_LOGGED_HEADER_CHARS = 500
"""How much of a log line's end is searched for an exception (a search over a whole long
line would cost its length squared)."""
_FRAME = re.compile(r"^at (?P<qual>[^\s()]+)\((?P<loc>[^()]*)\)(?: ~?\[[^\]]*\])?\s*$")
_MORE = re.compile(r"^\.\.\. \d+ (?:more|common frames omitted)\s*$")
_SKIP = re.compile(r"^(?:FATAL EXCEPTION: |Process: .*PID: )")


class _Content(NamedTuple):
    line: Line
    text: str
    """The line without its logcat prefix, left-stripped."""
    tag: str | None
    indent: int


def parse(text: str) -> list[Trace]:
    """Every JVM exception (each `Caused by:` / `Suppressed:` separately) in `text`."""
    return scan([_content(line) for line in split_lines(text)], _block_at)


def _block_at(contents: list[_Content], i: int) -> tuple[list[Trace], int] | None:
    header = _HEADER.match(contents[i].text)
    if header is None and i + 1 < len(contents) and _FRAME.match(contents[i + 1].text):
        header = _IN_A_LOG_LINE.search(contents[i].text[-MAX_LOGGED_HEADER_CHARS:])
    return one(_block(contents, i, header)) if header is not None else None


def _content(line: Line) -> _Content:
    text = line.text
    tag: str | None = None
    for pattern in _LOGCAT:
        m = pattern.match(text)
        if m is not None:
            tag = m.group("tag").strip()
            text = text[m.end() :]
            break
    stripped = text.lstrip()
    return _Content(line, stripped, tag, len(text) - len(stripped))


def _block(contents: list[_Content], i: int, header: re.Match[str]) -> tuple[Trace | None, int]:
    """The exception whose header is line `i`, up to the next header or a foreign line."""
    head = contents[i]
    frames = FrameRun(FrameOrder.NEWEST_FIRST)
    end = head.line.end
    j = i + 1
    foreign = 0
    while j < len(contents):
        c = contents[j]
        if head.tag is not None and c.tag is not None and c.tag != head.tag:
            foreign += 1
            if foreign > MAX_INTERLEAVED:
                break
            j += 1  # another logcat tag interleaved with the crash
            continue
        foreign = 0
        if is_fence(c.text) or _SKIP.match(c.text):
            j += 1
            continue
        m = _FRAME.match(c.text)
        if m is not None:
            frames.add(_frame(m.group("qual"), m.group("loc")))
        elif not _MORE.match(c.text):
            break
        end = c.line.end
        j += 1
    if not frames and not (header.group("kind") or "").startswith(("Caused", "Suppressed")):
        return None, i + 1  # a dotted name and a colon alone is too weak to call a trace
    exc = TraceException(type=header.group("type"), message=_message(header.group("msg")))
    trace = Trace(
        format=TraceFormat.JAVA,
        source_order=FrameOrder.NEWEST_FIRST,
        exception=exc,
        frames=frames.innermost_last,
        omitted_frames=frames.omitted,
        start=_start(head),
        end=end,
    )
    return trace, j


def _start(head: _Content) -> int:
    """Offset of the header text itself (after any logcat prefix and indentation)."""
    return head.line.start + len(head.line.text) - len(head.text)


def _message(msg: str | None) -> str | None:
    if msg is None:
        return None
    return msg.strip() or None


def _frame(qual: str, loc: str) -> Frame:
    # `java.base/java.lang.Thread.run`, `app//com.x.Y.m`: drop the module-layer prefix.
    qual = qual.rsplit("/", 1)[-1]
    module, function = split_qualified(qual, ".")
    file: str | None = None
    line: int | None = None
    name, sep, number = loc.rpartition(":")
    if sep and number.isdigit():
        file, line = name, to_int(number)
    else:
        file = loc
    if file in ("Native Method", "Unknown Source", ""):
        file = None
    return Frame(
        file=file,
        line=line,
        function=function,
        module=module,
        language=language_of(file, DEFAULT_LANGUAGE),
    )
