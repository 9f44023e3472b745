"""Native (C and C++) crash output: sanitizers, gdb, lldb, valgrind, failed asserts.

Every stack here lists the newest frame first. A header names the failure and opens the
stack that follows within `MAX_GAP` lines:
- `==1234==ERROR: AddressSanitizer: heap-use-after-free on address …` (any sanitizer;
  the type is the error kind) over `#0 0x… in f /src/x.c:5:3` frames. The report's further
  stacks (`freed by thread T0 here:`, `previously allocated by …`, other leaks) are not
  kept: the first stack is the crash, and a second same-format trace would pass for its
  root cause. The trace spans them, up to the `SUMMARY:` line.
- `x.c:12:5: runtime error: …` (UBSan): one frame, or the stack printed under it.
- gdb `Program received signal SIGSEGV, …` over `#0  0x… in f (a=1) at x.c:5`; without a
  `bt` the stop line under the header is the one frame.
- lldb `* thread #1, … stop reason = EXC_BAD_ACCESS (…)` over `frame #0: 0x… a.out\\`f at x.c:5`.
- valgrind `==123== Invalid read of size 4` over `==123==    at 0x…: f (x.c:6)` / `by …`;
  the `Address … free'd` stacks after it are spanned, not kept.
- `prog: x.c:12: f: Assertion \\`n > 0' failed.` (glibc) and `Assertion failed: (n > 0),
  function f, file x.c, line 12.` (BSD, macOS): one frame.

Numbered frames (`#N`) must count up by one; a run without a header must start at `#0`,
so markdown headings (`#1 Setup`), issue references and `#include` lines are not stacks.
Each frame line is read by `_native_frames` (a binary is not a file; C++ names split into
owner and function: `yaml::Emitter::Write(std::string const&)` → `yaml::Emitter`, `Write`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from diagnoser.intake.report import Frame, FrameOrder, Trace, TraceException, TraceFormat
from diagnoser.intake.traces._common import (
    MAX_TRACES_PER_FAMILY,
    FrameRun,
    Line,
    Lines,
    is_fence,
    language_of,
    split_lines,
    to_int,
)
from diagnoser.intake.traces._native_frames import (
    NUMBERED,
    PRETTY_WITH,
    drop_return_type,
    lldb_frame,
    numbered,
    split_function,
    valgrind_frame,
)

MAX_GAP = 12
"""Lines allowed between a header and its first frame (gdb's stop line, `(gdb) bt`, a
fence; ASan's `READ of size 4 …` and hints) and between the stacks of one report."""
MAX_LOCALS = 40
"""Lines of locals (`bt full`) allowed between two gdb frames."""
MAX_CONTINUATION = 4
"""Lines a wrapped gdb frame (long argument lists) may continue on."""
ASSERTION = "assertion failed"
RUNTIME_ERROR = "runtime error"
KIND_WORDS = 4
"""A sanitizer error named in words (`data race`, `detected memory leaks`) has at most
this many; a longer phrase is a message, and the sanitizer's name is the type."""

_SANITIZER = re.compile(
    r"(?:^|==\d+==)\s*(?:ERROR|WARNING): (?P<tool>[A-Za-z]+Sanitizer): (?P<rest>.+)$"
)
_SUMMARY = re.compile(r"^\s*SUMMARY: [A-Za-z]+Sanitizer")
_KIND = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)+|[A-Z]{3,}")
_UBSAN = re.compile(
    r"^\s*(?P<file>\S+?):(?P<line>\d+)(?::(?P<col>\d+))?: runtime error: (?P<msg>.*)$"
)
_SIGNAL = re.compile(
    r"^(?:Program|Thread \d+(?: \"[^\"]*\")?) (?:received|terminated with) signal "
    r"(?P<sig>SIG[A-Z0-9]+), (?P<msg>.*?)\.?\s*$"
)
_LLDB_STOP = re.compile(r"^\s*\* thread #\d+.*\bstop reason = (?P<reason>.+)$")
_VG_HEAD = re.compile(r"^==\d+== (?P<text>[^\s=].*)$")
_VG_DETAIL = re.compile(r"^==\d+== {2}\S")
_VG_FRAME = re.compile(r"^==\d+==\s+(?P<kw>at|by) 0x[0-9A-Fa-f]+: (?P<rest>.+)$")
_VG_SIZE = re.compile(r" of size \d+$")
_VG_LEAK = re.compile(r" are (?P<how>definitely|indirectly|possibly) lost\b")
_GLIBC_ASSERT = re.compile(
    r"^\s*(?:\S+: )?(?P<file>[^\s:]+):(?P<line>\d+): (?P<func>.+?): "
    r"Assertion [`'](?P<cond>.*)' failed\.?\s*$"
)
_BSD_ASSERT = re.compile(
    r"Assertion failed: \((?P<cond>.*)\), function (?P<func>.+?), "
    r"file (?P<file>.+?), line (?P<line>\d+)\."
)
_LOCALS = ("No locals.", "No symbol table info available.")


@dataclass(frozen=True, slots=True)
class _Header:
    """A failure line waiting for the stack under it."""

    exception: TraceException
    index: int
    start: int
    end: int
    fallback: Frame | None = None
    """The one frame the header itself names (UBSan, gdb's stop line), used alone when
    no stack follows."""
    sanitizer: bool = False
    """A sanitizer report: its later stacks are spanned, not kept."""


def parse(text: str) -> list[Trace]:
    """Every native crash stack and failed assertion in `text`."""
    lines = split_lines(text)
    traces: list[Trace] = []
    header: _Header | None = None
    i = 0
    while i < len(lines) and len(traces) < MAX_TRACES_PER_FAMILY:
        if header is not None and i - header.index > MAX_GAP:
            traces.extend(_alone(header))
            header = None
        opened = _header(lines, i)
        if opened is not None:
            traces.extend(_alone(header))
            header, i = opened, i + 1
            continue
        found = _stack(lines, i, header) or _valgrind(lines, i)
        if found is not None:
            trace, i = found
            traces.append(trace)
            header = None
            continue
        single = _assertion(lines[i])
        if single is not None:
            traces.append(single)
        i += 1
    traces.extend(_alone(header))
    return _without_repeats(sorted(traces, key=lambda t: t.start))[:MAX_TRACES_PER_FAMILY]


def _without_repeats(traces: list[Trace]) -> list[Trace]:
    """Drop a stop shown twice: lldb prints the stopped frame, then `bt` the whole stack
    under the same stop reason."""
    kept: list[Trace] = []
    for k, trace in enumerate(traces):
        later = traces[k + 1] if k + 1 < len(traces) else None
        repeated = (
            later is not None
            and trace.exception is not None
            and later.exception == trace.exception
            and len(later.frames) > len(trace.frames)
            and later.frames[-len(trace.frames) :] == trace.frames
        )
        if not repeated:
            kept.append(trace)
    return kept


def _alone(header: _Header | None) -> list[Trace]:
    """The trace of a header no stack followed: its own frame, if it names one."""
    if header is None or header.fallback is None:
        return []
    return [_trace(header.exception, (header.fallback,), 0, header.start, header.end)]


def _trace(
    exc: TraceException | None, frames: tuple[Frame, ...], omitted: int, start: int, end: int
) -> Trace:
    return Trace(
        format=TraceFormat.NATIVE,
        source_order=FrameOrder.NEWEST_FIRST,
        exception=exc,
        frames=frames,
        omitted_frames=omitted,
        start=start,
        end=end,
    )


def _header(lines: Lines, i: int) -> _Header | None:
    line = lines[i]
    text = line.text
    if "Sanitizer: " in text and (m := _SANITIZER.search(text)) is not None:
        exc = _sanitizer_exception(m.group("tool"), m.group("rest"))
        return _Header(exc, i, line.start, line.end, sanitizer=True)
    if "runtime error: " in text and (m := _UBSAN.match(text)) is not None:
        exc = TraceException(type=RUNTIME_ERROR, message=m.group("msg").strip() or None)
        file = m.group("file")
        frame = Frame(
            file=file,
            line=to_int(m.group("line")),
            column=to_int(m.group("col")),
            language=language_of(file, None),
        )
        return _Header(exc, i, line.start, line.end, fallback=frame)
    if " signal SIG" in text and (m := _SIGNAL.match(text)) is not None:
        exc = TraceException(type=m.group("sig"), message=m.group("msg").strip() or None)
        after = lines[i + 1].text.strip() if i + 1 < len(lines) else "#"
        stop = None if after.startswith("#") else numbered(f"#0  {after}")  # a core's `#0`
        if stop is not None:
            return _Header(exc, i, line.start, lines[i + 1].end, fallback=stop[1])
        return _Header(exc, i, line.start, line.end)
    if "stop reason = " in text and (m := _LLDB_STOP.match(text)) is not None:
        return _Header(_lldb_exception(m.group("reason").strip()), i, line.start, line.end)
    return None


def _sanitizer_exception(tool: str, rest: str) -> TraceException:
    """`heap-use-after-free on address 0x…` → (`heap-use-after-free`, `on address 0x…`)."""
    rest = re.sub(r"\s*\(pid=\d+\)\s*$", "", rest.strip())
    words = rest.split()
    for k, word in enumerate(words[:3]):
        if _KIND.fullmatch(word):
            message = rest[len(word) :].strip() if k == 0 else rest
            return TraceException(type=word, message=message or None)
    phrase = re.split(r" \(| on |: ", rest, maxsplit=1)[0]
    if len(phrase.split()) <= KIND_WORDS:
        return TraceException(type=phrase, message=rest[len(phrase) :].strip() or None)
    return TraceException(type=tool, message=rest or None)


def _lldb_exception(reason: str) -> TraceException:
    """`EXC_BAD_ACCESS (code=1, address=0x0)` / `signal SIGABRT` → type and message."""
    if reason.startswith("signal "):
        return TraceException(type=reason.split()[1])
    kind, sep, detail = reason.partition(" (")
    return TraceException(type=kind, message=detail.removesuffix(")") if sep else None)


def _stack(lines: Lines, i: int, header: _Header | None) -> tuple[Trace, int] | None:
    """The stack starting at line `i` (a numbered, lldb or valgrind run), if one does."""
    text = lines[i].text
    if "#" not in text:
        return None
    first = numbered(text) or lldb_frame(text)
    if first is None or (header is None and first[0] != 0):
        return None
    frames, j = _run(lines, i)
    exc, start = (header.exception, header.start) if header else (None, lines[i].start)
    end = lines[j - 1].end
    if header is not None and header.sanitizer:
        end, j = _rest_of_report(lines, j, end)
    return _trace(exc, frames.innermost_last, frames.omitted, start, end), j


def _run(lines: Lines, i: int) -> tuple[FrameRun, int]:
    """Consecutively numbered frames from line `i`; the index after the last one."""
    frames = FrameRun(FrameOrder.NEWEST_FIRST)
    expected: int | None = None
    j = last = i
    while j < len(lines):
        text, k = _joined(lines, j)
        found = numbered(text) or lldb_frame(text)
        if found is None or (expected is not None and found[0] != expected):
            if is_fence(text) and expected is not None:
                j += 1
                continue
            skip = _locals_end(lines, j, expected) if expected is not None else None
            if skip is None:
                break
            j = skip
            continue
        number, frame = found
        frames.add(frame)
        expected = number + 1
        j = last = k + 1
    return frames, last


def _joined(lines: Lines, j: int) -> tuple[str, int]:
    """Line `j` with the indented lines a wrapped gdb frame continues on; the last index."""
    text = lines[j].text
    k = j
    while (
        text.count("(") > text.count(")")
        and k + 1 < len(lines)
        and k - j < MAX_CONTINUATION
        and lines[k + 1].text[:1].isspace()
        and not NUMBERED.match(lines[k + 1].text)
    ):
        k += 1
        text = f"{text} {lines[k].text.strip()}"
    return text, k


def _locals_end(lines: Lines, j: int, expected: int) -> int | None:
    """Past `bt full` locals at `j`: the index of frame `#expected` if only locals lie between."""
    if NUMBERED.match(lines[j].text):  # a frame, but not one we can read
        return None
    for k in range(j, min(j + MAX_LOCALS, len(lines))):
        text = lines[k].text
        m = NUMBERED.match(text)
        if m is not None:
            return k if int(m.group("n")) == expected else None
        if not (text[:1].isspace() or text.strip() in _LOCALS):
            return None
    return None


def _rest_of_report(lines: Lines, j: int, end: int) -> tuple[int, int]:
    """A sanitizer report's later stacks and notes up to its `SUMMARY:` line: the span's
    end and the next line index. Stops at a fence or another header."""
    k, gap = j, 0
    while k < len(lines) and gap <= MAX_GAP:
        text = lines[k].text
        if _SUMMARY.match(text):
            return lines[k].end, k + 1
        if is_fence(text) or _header(lines, k) is not None:
            break
        if numbered(text) is not None:
            _, k = _run(lines, k)
            end, j, gap = lines[k - 1].end, k, 0
            continue
        k += 1
        gap += 1
    return end, j


def _valgrind(lines: Lines, i: int) -> tuple[Trace, int] | None:
    """A valgrind error whose first `at` frame is line `i`, with its header above."""
    first = _VG_FRAME.match(lines[i].text) if "==" in lines[i].text else None
    if first is None or first.group("kw") != "at":
        return None
    frames = FrameRun(FrameOrder.NEWEST_FIRST)
    j = i
    while j < len(lines) and (m := _VG_FRAME.match(lines[j].text)) is not None:
        if m.group("kw") == "at" and j > i:
            break
        frames.add(valgrind_frame(m.group("rest")))
        j += 1
    end = lines[j - 1].end
    k = j  # the error's other stacks (`Address 0x… is 0 bytes inside a block … free'd`)
    while k < len(lines) and (_VG_DETAIL.match(lines[k].text) or _VG_FRAME.match(lines[k].text)):
        end, k = lines[k].end, k + 1
    exc, start = _vg_header(lines, i)
    return _trace(exc, frames.innermost_last, frames.omitted, start, end), k


def _vg_header(lines: Lines, i: int) -> tuple[TraceException | None, int]:
    """The error line above the first frame (past `Access not within …` details)."""
    k = i - 1
    while k >= max(i - 3, 0) and _VG_DETAIL.match(lines[k].text):
        k -= 1
    m = _VG_HEAD.match(lines[k].text) if k >= 0 else None
    if m is None:
        return None, lines[i].start
    text = m.group("text").strip()
    signal = re.search(r"\((SIG[A-Z0-9]+)\)", text)
    leak = _VG_LEAK.search(text)
    if signal is not None:
        kind = signal.group(1)
    elif leak is not None:
        kind = f"{leak.group('how')} lost"
    else:
        kind = _VG_SIZE.sub("", text)
    return TraceException(type=kind, message=text), lines[k].start


def _assertion(line: Line) -> Trace | None:
    """A failed assert (glibc or BSD form) as a one-frame trace."""
    text = line.text
    if "Assertion" not in text:
        return None
    m = _GLIBC_ASSERT.match(text) or _BSD_ASSERT.search(text)
    if m is None:
        return None
    file = m.group("file")
    module, function = split_function(PRETTY_WITH.sub("", drop_return_type(m.group("func"))))
    frame = Frame(
        file=file,
        line=to_int(m.group("line")),
        function=function,
        module=module,
        language=language_of(file, "c"),
    )
    exc = TraceException(type=ASSERTION, message=m.group("cond") or None)
    return _trace(exc, (frame,), 0, line.start, line.end)
