"""Stack traces in free text: one parser module per format family, and `parse_traces`.

Each family module exposes `parse(text) -> list[Trace]`; `parse_traces` runs them all
over the whole text (code fences, CRLF and interleaved noise are tolerated by the
parsers, nothing is stripped), drops a trace whose span lies inside one kept from another
family (more frames win), and returns the rest in text order. Frames are innermost last.
"""

from __future__ import annotations

from collections.abc import Callable

from diagnoser.intake.report import Trace, TraceFormat
from diagnoser.intake.traces import dotnet, go, javascript, jvm, php, python, ruby, rust, swift

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
}
"""Every format family, by module name."""

_MARKERS: dict[str, tuple[str, ...]] = {
    "python": ("Traceback", ".py:"),
    "javascript": ("at ", "@"),
    "jvm": ("at ", "Caused by: ", "Suppressed: "),
    "go": ("goroutine ",),
    "rust": ("panicked at ",),
    "ruby": (":in ",),
    "dotnet": ("at ",),
    "swift": ("Crashed:", "Fatal error: "),
    "php": ("Uncaught ", "Stack trace:"),
}
"""Substrings every trace of a family contains: a family whose markers are all absent
is not run at all (most reports hold one format, or none)."""

MAX_TRACES_PER_FAMILY = 200
"""Beyond this many traces of one family the rest are ignored: keeps the pairwise
containment check cheap on hostile input (real reports hold a handful)."""

FORMATS: tuple[TraceFormat, ...] = tuple(f for f in TraceFormat if f is not TraceFormat.STRUCTURED)
"""The text formats `parse_traces` recognises (`STRUCTURED` comes from payloads)."""


def parse_traces(text: str) -> list[Trace]:
    """Every stack trace in `text`, of any format, sorted by where it starts."""
    found = [
        (family, trace)
        for family, parse in PARSERS.items()
        if any(marker in text for marker in _MARKERS[family])
        for trace in parse(text)[:MAX_TRACES_PER_FAMILY]
    ]
    # Most frames first, then the widest span: a trace that contains a smaller one
    # from another family (V8 `at` lines inside a Rust backtrace) wins.
    found.sort(key=lambda ft: (-len(ft[1].frames), -(ft[1].end - ft[1].start), ft[1].start))
    kept: list[tuple[str, Trace]] = []
    for family, trace in found:
        if not any(other != family and _inside(trace, t) for other, t in kept):
            kept.append((family, trace))
    return [t for _, t in sorted(kept, key=lambda ft: (ft[1].start, ft[1].end))]


def _inside(inner: Trace, outer: Trace) -> bool:
    return outer.start <= inner.start and inner.end <= outer.end


__all__ = [
    "FORMATS",
    "MAX_TRACES_PER_FAMILY",
    "PARSERS",
    "dotnet",
    "go",
    "javascript",
    "jvm",
    "parse_traces",
    "php",
    "python",
    "ruby",
    "rust",
    "swift",
]
