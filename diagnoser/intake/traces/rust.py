"""Rust panics, with or without a `RUST_BACKTRACE` backtrace.

Two panic headers exist: since Rust 1.73 `thread 'main' panicked at src/main.rs:5:10:`
with the message on the next line; before, `thread 'main' panicked at 'msg', src/x.rs:5:10`.
A program's own panic hook may print `panicked at src/x.rs:5:10:` without the thread, or
`Panicked at src/x.rs:5:10 when …` inside its own message, and `Backtrace:` for `stack
backtrace:`.
Backtrace frames (`  N: crate::module::func` + `at ./src/x.rs:3:5`) are newest first;
frames newer than the standard library's `rust_panic_with_hook` are the panic hook's and
are dropped, and the panic location is the innermost frame when no frame of the backtrace
is there. Without a backtrace the panic location is the only frame.
"""

from __future__ import annotations

import re

from diagnoser.constants import MAX_FRAMES
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
_HOOK = re.compile(
    r"(?<!\S)[Pp]anicked at (?P<loc>[^\s'\"]+\.rs:\d+(?::\d+)?)(?::?$|:? (?P<msg>.+)$)"
)
"""A panic a program's own hook reports (ruff: `panicked at crates/x/src/edit.rs:42:9:`
with the message below, or `Panicked at src/x.rs:285:26 when checking …`)."""
_BACKTRACE = re.compile(r"^\s*(?:stack )?backtrace:\s*(?P<first>.*)$", re.IGNORECASE)
"""`stack backtrace:` (std), `Backtrace:` (a hook's, maybe with the first frame after it)."""
_FRAME = re.compile(r"^\s*\d+:\s+(?:0x[0-9a-fA-F]+ - )?(?P<func>\S.*)$")
_AT = re.compile(r"^\s+at (?P<loc>\S.*)$")
_HASH = re.compile(r"::h[0-9a-f]{16}$")
PANIC_ENTRY = "rust_panic_with_hook"
"""The standard library's function that calls the panic hook: frames newer than it are
the hook's own (a program's hook that captures the backtrace — ruff's `catch_unwind`
closure — lists itself first), never where the program failed."""
MAX_LISTED = 4 * MAX_FRAMES
"""Backtrace frames read before the hook's are dropped and the cap applied (a hook's
frames come first; a backtrace is rarely longer)."""


def parse(text: str) -> list[Trace]:
    """Every Rust panic in `text`."""
    return scan(split_lines(text), _block_at)


def _block_at(lines: Lines, i: int) -> tuple[list[Trace], int] | None:
    m = _HEAD.match(lines[i].text)
    if m is not None:
        return one(_panic(lines, i, m.group("rest").strip()))
    hook = _HOOK.search(lines[i].text)
    if hook is not None:
        return one(_panic(lines, i, hook.group("loc"), hook.group("msg")))
    return None


def _panic(lines: Lines, i: int, rest: str, said: str | None = None) -> tuple[Trace, int]:
    """The panic whose header is line `i`: `rest` is what follows `panicked at`, `said`
    the message a hook printed after the location on the same line."""
    end = lines[i].end
    j = i + 1
    quoted, sep, old_loc = rest.rpartition("', ")
    if rest.startswith("'") and sep and old_loc and " " not in old_loc:
        message: str | None = quoted[1:]
        loc = old_loc
    elif said is not None:
        message, loc = said.strip(), rest
    else:
        loc = rest.removesuffix(":")
        message = lines[j].text.strip() if j < len(lines) else None
        if j < len(lines):
            end, j = lines[j].end, j + 1
    file, line, col = split_location(loc)
    located = Frame(file=file, line=line, column=col, language=LANGUAGE)
    frames = FrameRun(FrameOrder.NEWEST_FIRST)
    frames.add(located)
    for k in range(j, min(j + MAX_GAP, len(lines))):
        header = _BACKTRACE.match(lines[k].text)
        if header is not None:
            backtrace, j = _backtrace(lines, k + 1, header.group("first"), located)
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


def _backtrace(
    lines: Lines, j: int, first: str = "", located: Frame | None = None
) -> tuple[FrameRun, int]:
    """Frames from `j` on (after `first`, the header line's rest), and the index after
    the last line consumed — without the panic hook's own frames, and with the panic's
    location (`located`) as the innermost frame when no frame is there (a backtrace cut
    short, or one a hook captured)."""
    listed: list[Frame] = []
    beyond = 0  # frames past MAX_LISTED: counted, not read
    head = _FRAME.match(first)
    if head is not None:
        listed.append(_frame(head.group("func").strip()))
    last = j
    while j < len(lines):
        text = lines[j].text
        at = _AT.match(text)
        head = None if at else _FRAME.match(text)
        if at is not None and listed:
            if not beyond:  # the location of the frame read last
                file, line, col = split_location(at.group("loc").strip())
                update = {"file": file, "line": line, "column": col}
                listed[-1] = listed[-1].model_copy(update=update)
        elif head is not None and len(listed) < MAX_LISTED:
            listed.append(_frame(head.group("func").strip()))
        elif head is not None:
            beyond += 1
        elif not is_fence(text):
            break
        j += 1
        last = j
    hook = [n for n, f in enumerate(listed) if f.function == PANIC_ENTRY]
    listed = listed[hook[-1] :] if hook else listed  # newer frames are the hook, not the failure
    frames = FrameRun(FrameOrder.NEWEST_FIRST)
    if (
        listed
        and located is not None
        and located.file
        and not any(_same_place(f, located) for f in listed)
    ):
        frames.add(located)
    for frame in listed:
        frames.add(frame)
    frames.seen += beyond
    return frames, last


def _same_place(frame: Frame, located: Frame) -> bool:
    """Whether a backtrace frame is at the panic's location (`./src/x.rs` = `src/x.rs`)."""
    if frame.file is None or located.file is None or frame.line != located.line:
        return False
    return frame.file.removeprefix("./").endswith(located.file.removeprefix("./"))


def _frame(func: str) -> Frame:
    """`crate::module::func::h0123…` → module `crate::module`, function `func`."""
    func = _HASH.sub("", func)
    module, function = split_qualified(func, "::")
    return Frame(function=function, module=module, language=LANGUAGE)
