"""Python tracebacks: CPython (chained, 3.11+ carets), pytest frames, IPython, faulthandler.

CPython lists frames oldest first, so they are already innermost last. Each
`Traceback (most recent call last):` block is one exception; a chained exception
("During handling…", "The above exception was the direct cause…") is simply the next one.
A run of `File "…", line N, in f` lines without the header (a traceback pasted from its
middle) is a traceback too. Source lines may have lost their indentation (an issue
tracker's markup), and a long frame line may be wrapped by the terminal it was copied
from. faulthandler's dump after a crash (`Fatal Python error: Segmentation fault`, then
`Current thread 0x… (most recent call first):` and `File "…", line N in f` lines) lists
the crashed thread newest first; other threads' dumps are not the failure and are skipped.
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
    to_int,
)

LANGUAGE = "python"
HEADER = "Traceback (most recent call last):"
LOOKBACK = 50
"""How far above a pytest location line we look for its `def` line."""
WRAP_WIDTH = 79
"""A frame line at least this long may have been wrapped by a terminal (80 columns)."""

_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?$')
_EXCEPTION = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(?::[ \t]?(?P<msg>.*))?$")
_FAULT_HEADER = re.compile(
    r"^\s*(?:(?P<current>Current thread|Stack)|Thread) (?:0x[0-9a-fA-F]+ )?"
    r"\(most recent call first\):\s*$"
)
_FAULT_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+|\?+) in (?P<func>.+)$')
_FAULT_ERROR = re.compile(r"^\s*Fatal Python error: (?P<msg>.+)$")
FAULT_TYPE = "Fatal Python error"
FAULT_LOOKBACK = LOOKBACK
"""How far above a faulthandler dump its `Fatal Python error:` line may be (other
threads' dumps may come first)."""
_IPY_HEADER = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)\s+Traceback \(most recent call last\)\s*$")
_IPY_CELL = re.compile(r"^Cell (?P<file>In\s?\[\d+\]), line (?P<line>\d+)(?:, in (?P<func>.+))?$")
_IPY_ARROW = re.compile(r"^-+> ?(?P<line>\d+)")
_IPY_OLD = re.compile(r"^(?P<func>[\w<>.]+)(?:\(.*\))?$")
_PYTEST_LOC = re.compile(
    r"^(?P<file>(?:[A-Za-z]:)?[^:\s][^:]*\.py):(?P<line>\d+):(?: (?P<rest>.*))?$"
)
_PYTEST_EXC = re.compile(r"^[A-Z]\w*(?:\.\w+)*(?:Error|Exception|Exit|Interrupt|Failed|Iteration)$")
_PYTEST_SEP = re.compile(r"^(?:_ )+_?\s*$")
_PYTEST_LOCAL = re.compile(r"^[A-Za-z_]\w*\s*= ")
_DEF = re.compile(r"^\s*(?:async\s+)?def\s+(?P<name>\w+)")


def parse(text: str) -> list[Trace]:
    """Every Python traceback (CPython, IPython, pytest, faulthandler) in `text`."""
    return scan(split_lines(text), _block_at)


def _block_at(lines: Lines, i: int) -> tuple[list[Trace], int] | None:
    text = lines[i].text
    if HEADER in text:
        return one(_cpython(lines, i))
    if _FRAME.match(text):
        return one(_cpython(lines, i, header=False))
    fault = _FAULT_HEADER.match(text)
    if fault is not None:
        trace, end = _faulthandler(lines, i)
        return ([trace] if fault.group("current") and trace.frames else []), end
    if _IPY_HEADER.match(text):
        return one(_ipython(lines, i))
    if _pytest_location(text) is not None:
        return one(_pytest(lines, i))
    return None


def _frame(file: str | None, line: int | None, function: str | None) -> Frame:
    return Frame(file=file, line=line, function=function, language=LANGUAGE)


def _trace(frames: FrameRun, exc: TraceException | None, start: int, end: int) -> Trace:
    return Trace(
        format=TraceFormat.PYTHON,
        source_order=frames.order,
        exception=exc,
        frames=frames.innermost_last,
        omitted_frames=frames.omitted,
        start=start,
        end=end,
    )


def _strip(value: str | None) -> str | None:
    return value.strip() or None if value is not None else None


def _exception(text: str) -> TraceException | None:
    m = _EXCEPTION.match(text)
    if m is None:
        return None
    msg = m.group("msg")
    return TraceException(type=m.group("type"), message=msg.strip() if msg is not None else None)


def _cpython(lines: Lines, i: int, *, header: bool = True) -> tuple[Trace | None, int]:
    """A `Traceback (most recent call last):` block starting at line `i` — or, without
    `header`, the frames starting there."""
    head = lines[i]
    col = head.text.index(HEADER) if header else len(head.text) - len(head.text.lstrip())
    prefix = head.text[:col] if header else ""
    frames = FrameRun(FrameOrder.OLDEST_FIRST)
    end = head.end
    j = i + 1 if header else i
    exc: TraceException | None = None
    framed: str | None = None  # the frame line just read, if the last line was one

    def unprefixed(k: int) -> str:
        raw = lines[k].text if k < len(lines) else ""
        return raw[len(prefix) :] if prefix and raw.startswith(prefix) else raw

    while j < len(lines):
        text = unprefixed(j)
        if is_fence(text) or not text.strip():
            if not frames or not _next_is_frame(lines, j):
                break
            j += 1
            continue
        m = _FRAME.match(text)
        after, framed = framed, None
        if m is not None:
            func = m.group("func")
            frames.add(_frame(m.group("file"), to_int(m.group("line")), _strip(func)))
            framed = text
        elif not text[0].isspace():
            wrapped = _wrapped(after, text, unprefixed(j + 1))
            if wrapped is not None:  # a terminal cut the frame line: `…, in e` / `xecute`
                frames.amend_last(
                    file=wrapped.group("file"),
                    line=to_int(wrapped.group("line")),
                    function=_strip(wrapped.group("func")),
                )
                framed = f"{after}{text}"
            elif after is None or _error_line(text) or not _frame_or_error(unprefixed(j + 1)):
                exc = _exception(text)
                if exc is not None:
                    end = lines[j].end
                    j += 1
                break
            # else: the frame's source line, its indentation lost (a tracker's markup)
        end = lines[j].end
        j += 1
    if not frames and exc is None:
        return None, i + 1
    return _trace(frames, exc, head.start + col, end), j


def _wrapped(framed: str | None, text: str, following: str) -> re.Match[str] | None:
    """The whole frame line when `text` is the rest of a frame line `framed` that a
    terminal wrapped at WRAP_WIDTH: joined they are one, and a source line follows."""
    if framed is None or len(framed) < WRAP_WIDTH or not following[:1].isspace():
        return None
    return _FRAME.match(f"{framed}{text}")


def _frame_or_error(text: str) -> bool:
    return _FRAME.match(text) is not None or _error_line(text)


def _error_line(text: str) -> bool:
    """An exception line with its message (`KeyError: 'x'`; not `else:`)."""
    exc = _exception(text)
    return exc is not None and bool(exc.message)


def _faulthandler(lines: Lines, i: int) -> tuple[Trace, int]:
    """One thread's faulthandler dump, its header at line `i`: frames newest first."""
    frames = FrameRun(FrameOrder.NEWEST_FIRST)
    end = lines[i].end
    j = i + 1
    while j < len(lines):
        m = _FAULT_FRAME.match(lines[j].text)
        if m is not None:
            frames.add(_frame(m.group("file"), to_int(m.group("line")), _strip(m.group("func"))))
        elif lines[j].text.strip() != "<no Python frame>" and not is_fence(lines[j].text):
            break
        end = lines[j].end
        j += 1
    exc = None
    for line in reversed(lines[max(i - FAULT_LOOKBACK, 0) : i]):
        fatal = _FAULT_ERROR.match(line.text)
        if fatal is not None:
            exc = TraceException(type=FAULT_TYPE, message=fatal.group("msg").strip())
            break
    return _trace(frames, exc, lines[i].start, end), j


def _next_is_frame(lines: Lines, j: int) -> bool:
    """Whether the next non-blank, non-fence line after `j` is a `File "…"` line."""
    for line in lines[j + 1 : j + 4]:
        if line.text.strip() and not is_fence(line.text):
            return _FRAME.match(line.text) is not None
    return False


def _ipython_frame(text: str) -> Frame | None:
    m = _IPY_CELL.match(text)
    if m is not None:
        func = m.group("func")
        return _frame("Cell " + m.group("file"), to_int(m.group("line")), _bare(func))
    if text.startswith("File "):
        loc, sep, func = text[5:].partition(", in ")
        file, line, _ = split_location(loc.strip())
        return _frame(file, line, _bare(func) if sep else None)
    if text[0].isspace() or " in " not in text:
        return None
    file, _, func = text.rpartition(" in ")
    m = _IPY_OLD.match(func.strip())
    if m is None or not file.strip():
        return None
    return _frame(file.strip(), None, m.group("func"))


def _bare(func: str | None) -> str | None:
    """`f(a, b)` → `f` (IPython prints the signature)."""
    if func is None:
        return None
    return func.strip().split("(", 1)[0] or None


def _ipython(lines: Lines, i: int) -> tuple[Trace | None, int]:
    """An IPython / Jupyter traceback: `ValueError    Traceback (most recent call last)`."""
    head = lines[i]
    m = _IPY_HEADER.match(head.text)
    exc_type = m.group("type") if m is not None else None
    exc = TraceException(type=exc_type)
    frames = FrameRun(FrameOrder.OLDEST_FIRST)
    end = head.end
    j = i + 1
    while j < len(lines):
        text = lines[j].text
        if not text.strip() or is_fence(text) or text[0].isspace():
            j += 1
            continue
        arrow = _IPY_ARROW.match(text)
        frame = None if arrow else _ipython_frame(text)
        if arrow is not None:
            if frames.last is not None and frames.last.line is None:
                frames.amend_last(line=to_int(arrow.group("line")))
        elif frame is not None:
            frames.add(frame)
        else:
            final = _exception(text)
            if final is not None and (final.type == exc_type or final.message is not None):
                exc, end, j = final, lines[j].end, j + 1
            break
        end = lines[j].end
        j += 1
    return _trace(frames, exc, head.start, end), j


def _pytest_location(text: str) -> tuple[str, int | None, str] | None:
    """`file.py:12: in func` / `file.py:12: ` / `file.py:12: ValueError` → its parts."""
    m = _PYTEST_LOC.match(text)
    if m is None:
        return None
    rest = (m.group("rest") or "").strip()
    if rest and not rest.startswith("in ") and not _PYTEST_EXC.match(rest):
        return None
    return m.group("file"), to_int(m.group("line")), rest


def _pytest_body(text: str) -> bool:
    """Lines pytest prints between location lines: source, `>`, `E`, locals, separators."""
    return (
        not text.strip()
        or text[0] in " \t>"
        or text.startswith("E ")
        or _PYTEST_SEP.match(text) is not None
        or (text.startswith("___") and text.rstrip().endswith("___"))
        or _PYTEST_LOCAL.match(text) is not None
    )


def _pytest_start(lines: Lines, i: int) -> tuple[int, str | None]:
    """Where the block above location line `i` starts, and the last `def` in it."""
    start = i
    func: str | None = None
    for k in range(i - 1, max(i - LOOKBACK, 0) - 1, -1):
        text = lines[k].text
        if not text.strip():
            continue  # pytest leaves a blank line between the source and its location
        if not (text[0] in " \t>" or text.startswith("E ")):
            break
        start = k
        m = _DEF.match(text)
        if m is not None and func is None:
            func = m.group("name")
    return start, func


def _pytest(lines: Lines, i: int) -> tuple[Trace | None, int]:
    """A pytest failure: `file.py:N: in f` frames, `E   …` lines, `file.py:N: Error`."""
    first, pending = _pytest_start(lines, i)
    frames = FrameRun(FrameOrder.OLDEST_FIRST)
    errors: list[str] = []
    exc_type: str | None = None
    end = lines[i].end
    j = i
    while j < len(lines) and exc_type is None:
        text = lines[j].text
        loc = _pytest_location(text)
        if loc is not None:
            file, line, rest = loc
            func = rest[3:].strip() if rest.startswith("in ") else pending
            frames.add(_frame(file, line, func))
            pending = None
            exc_type = rest if rest and not rest.startswith("in ") else None
        elif is_fence(text) or _pytest_body(text):
            m = _DEF.match(text)
            pending = m.group("name") if m is not None else pending
            if text.startswith("E "):
                errors.append(text[2:].strip())
        else:
            break
        if text.strip() and not is_fence(text):
            end = lines[j].end
        j += 1
    return _trace(frames, _pytest_exception(exc_type, errors), lines[first].start, end), j


def _pytest_exception(exc_type: str | None, errors: list[str]) -> TraceException | None:
    parsed = _exception(errors[0]) if errors else None
    if parsed is not None and parsed.message is not None and exc_type in (None, parsed.type):
        return parsed
    if exc_type is None:
        return None
    return TraceException(type=exc_type, message=errors[0] if errors else None)
