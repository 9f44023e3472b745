"""Stack traces in free text: one parser module per format family, and `parse_traces`.

Each family module exposes `parse(text) -> list[Trace]`; `parse_traces` runs them all
over the whole text (code fences, CRLF and interleaved noise are tolerated by the
parsers, nothing is stripped), drops a trace whose span overlaps one kept from another
family (more frames win, then more frames with a line number, then the wider span), and
returns the rest in text order. Frames are innermost last.
At most `MAX_TRACES` traces of `MAX_FRAMES` frames each are kept; `find_traces` also says
what was cut.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from diagnoser.constants import MAX_FRAMES, MAX_TRACES
from diagnoser.intake.report import Trace, TraceFormat
from diagnoser.intake.traces import (
    dotnet,
    go,
    javascript,
    jvm,
    native,
    php,
    python,
    ruby,
    rust,
    swift,
)
from diagnoser.intake.traces._common import (
    MAX_SCANNED_LINES,
    MAX_TRACES_PER_FAMILY,
    unscanned,
)

Parser = Callable[[str], list[Trace]]

PARSERS: dict[str, Parser] = {
    "python": python.parse,
    "javascript": javascript.parse,
    "jvm": jvm.parse,
    "go": go.parse,
    "rust": rust.parse,
    "ruby": ruby.parse,
    "dotnet": dotnet.parse,
    "swift": swift.parse,
    "php": php.parse,
    "native": native.parse,
}
"""Every format family, by module name."""

_MARKERS: dict[str, tuple[str, ...]] = {
    "python": ("Traceback", ".py:", 'File "', "(most recent call first)"),
    "javascript": ("at ", "@"),
    "jvm": ("at ", "Caused by: ", "Suppressed: "),
    "go": ("goroutine ",),
    "rust": ("panicked at ", "Panicked at "),
    "ruby": (":in ",),
    "dotnet": ("at ",),
    "swift": ("Crashed:", "Fatal error: "),
    "php": ("Uncaught ", "Stack trace:"),
    "native": ("#0 ", "Sanitizer: ", "runtime error: ", "frame #", "==    at ", "Assertion"),
}
"""Substrings every trace of a family contains: a family whose markers are all absent
is not run at all (most reports hold one format, or none)."""

FORMATS: tuple[TraceFormat, ...] = tuple(f for f in TraceFormat if f is not TraceFormat.STRUCTURED)
"""The text formats `parse_traces` recognises (`STRUCTURED` comes from payloads)."""


@dataclass(frozen=True)
class TextTraces:
    """The traces of a text and what was cut to keep them bounded."""

    traces: list[Trace]
    """The first `MAX_TRACES` traces, in text order."""
    truncated: list[str] = field(default_factory=list)
    """One note per cut, e.g. `text: 40 traces beyond the first 32 ignored`."""


def parse_traces(text: str) -> list[Trace]:
    """The stack traces in `text`, of any format, sorted by where they start."""
    return find_traces(text).traces


def find_traces(text: str) -> TextTraces:
    """`parse_traces` with notes on the traces and frames left out."""
    found: list[tuple[str, Trace]] = []
    counting_stopped = False
    searched = False
    for family, parse in PARSERS.items():
        if any(marker in text for marker in _MARKERS[family]):
            parsed = parse(text)
            searched = True
            counting_stopped |= len(parsed) >= MAX_TRACES_PER_FAMILY
            found.extend((family, trace) for trace in parsed)
    # Most frames first, then most frames with a line (two families reading the same
    # `at` lines: Java's `(Cart.java:12)` is a location, not .NET's parameter list), then
    # the widest span: a trace that contains a smaller one from another family (V8 `at`
    # lines inside a Rust backtrace) wins.
    found.sort(
        key=lambda ft: (
            -_depth(ft[1]),
            -sum(frame.line is not None for frame in ft[1].frames),
            -(ft[1].end - ft[1].start),
            ft[1].start,
        )
    )
    kept: list[tuple[str, Trace]] = []
    for family, trace in found:
        if not any(other != family and _overlap(trace, t) for other, t in kept):
            kept.append((family, trace))
    ordered = [t for _, t in sorted(kept, key=lambda ft: (ft[1].start, ft[1].end))]
    traces = ordered[:MAX_TRACES]
    notes = [
        f"text: {t.omitted_frames + len(t.frames):,} frames in the {t.format.value} trace "
        f"at character {t.start:,}; kept the innermost {MAX_FRAMES}"
        for t in traces
        if t.omitted_frames
    ]
    if len(ordered) > MAX_TRACES:
        beyond = f"{'at least ' if counting_stopped else ''}{len(ordered) - MAX_TRACES:,}"
        notes.append(f"text: {beyond} traces beyond the first {MAX_TRACES} ignored")
    stopped = unscanned(text) if searched else None
    if stopped is not None:
        notes.append(
            f"text: not searched for traces beyond its first {MAX_SCANNED_LINES:,} lines "
            f"(character {stopped:,} on)"
        )
    return TextTraces(traces, notes)


def _depth(trace: Trace) -> int:
    return len(trace.frames) + trace.omitted_frames


def _overlap(one: Trace, other: Trace) -> bool:
    """Whether two traces read some of the same text (two families, one of them wrong)."""
    return one.start < other.end and other.start < one.end


__all__ = [
    "FORMATS",
    "MAX_TRACES_PER_FAMILY",
    "PARSERS",
    "TextTraces",
    "dotnet",
    "find_traces",
    "go",
    "javascript",
    "jvm",
    "native",
    "parse_traces",
    "php",
    "python",
    "ruby",
    "rust",
    "swift",
]
