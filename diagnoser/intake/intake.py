"""`build_report`: a caller's `ReportIn` (plus any frames a payload carried) → `Report`.

Deterministic and model-free: parse traces from the text, pick the exception chain,
map its frames onto the repository, find mentions, classify, fingerprint.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from diagnoser.intake.classify import classify
from diagnoser.intake.excerpt import excerpt
from diagnoser.intake.fingerprint import at_revision, fingerprint
from diagnoser.intake.mapping import map_frames
from diagnoser.intake.mentions import find_mentions
from diagnoser.intake.packages import NO_PACKAGES, Packages
from diagnoser.intake.report import (
    ExceptionInfo,
    FrameOrder,
    MappedFrame,
    Report,
    ReportIn,
    Trace,
    TraceException,
    TraceFormat,
)
from diagnoser.intake.traces import find_traces
from repomap import SymbolIndex


def build_report(
    report: ReportIn,
    *,
    traces: Sequence[Trace] = (),
    files: Collection[str] = (),
    index: SymbolIndex | None = None,
    truncated: Sequence[str] = (),
    packages: Packages = NO_PACKAGES,
) -> Report:
    """Everything intake derives. `traces` are frames a payload carried (Sentry, Bugsnag…);
    without them the text is parsed. `files`/`index`/`packages` are the repository's (for
    mapping). `truncated` says what an adapter cut (`Intake.truncated`); the text parsers
    add theirs, and a text longer than a model is shown says what it is not shown."""
    crash = _crash(report, traces, files, index, truncated, packages=packages)
    view = excerpt(report.text, crash.traces)
    chain, top = crash.chain, crash.top
    exception = (
        ExceptionInfo(
            type=top.type if top else None,
            message=top.message if top else None,
            causes=[t.exception for t in chain[:-1] if t.exception],
        )
        if chain
        else None
    )
    return Report(
        **report.model_dump(include=set(ReportIn.model_fields)),  # derived fields are ours
        traces=crash.traces,
        frames=crash.mapped,
        exception=exception,
        mentioned=find_mentions(f"{report.title or ''}\n{report.text}"),
        classification=classify(
            report.text,
            title=report.title,
            rating=report.rating,
            traces=crash.traces,
            source=report.source,
        ),
        fingerprint=crash.fingerprint,
        truncated=[*crash.truncated, view.note] if view.cut else crash.truncated,
    )


def report_fingerprint(
    report: ReportIn,
    *,
    traces: Sequence[Trace] = (),
    files: Collection[str] = (),
    index: SymbolIndex | None = None,
    packages: Packages = NO_PACKAGES,
    revision: str | None = None,
) -> str:
    """`build_report(...).fingerprint` without classifying or finding mentions (~1/8 of
    the work): cheap enough to fold identical reports while a request waits. With a
    `revision` (a repository diagnosed at the revision each report names), one per
    revision (`fingerprint.at_revision`)."""
    crash = _crash(report, traces, files, index, (), packages=packages).fingerprint
    return at_revision(crash, revision)


@dataclass(frozen=True, slots=True)
class _Crash:
    traces: list[Trace]
    truncated: list[str]
    chain: list[Trace]
    mapped: list[MappedFrame]
    top: TraceException | None
    fingerprint: str


def _crash(
    report: ReportIn,
    traces: Sequence[Trace],
    files: Collection[str],
    index: SymbolIndex | None,
    truncated: Sequence[str],
    *,
    packages: Packages,
) -> _Crash:
    """The traces, the exception chain, its frames mapped onto the repo, the fingerprint."""
    cuts = list(truncated)
    if traces:
        found = list(traces)
    else:
        parsed = find_traces(report.text)
        found, cuts = parsed.traces, [*cuts, *parsed.truncated]
    chain = exception_chain(found)
    mapped = _mapped_frames(chain, files, index, packages)
    top = chain[-1].exception if chain else None
    text = f"{report.title or ''} {report.text}"
    return _Crash(found, cuts, chain, mapped, top, fingerprint(top, mapped, text=text))


EVENT_ORDERED = frozenset({TraceFormat.RUST})
"""Formats whose successive traces are separate events in the order they happened, not a
chain printed top-level first."""


def exception_chain(traces: Sequence[Trace]) -> list[Trace]:
    """The first run of same-format traces as a chain, root cause first, top-level last.

    Python and structured payloads print causes first; Java's `Caused by:`, .NET's inner
    exceptions and the like print the top-level exception first. Rust prints each panic
    when it happens: the first is the cause (a `PoisonError` or "Tokio executor failed,
    was there a panic?" follows from it). (Go's goroutine dumps list the panicking
    goroutine first and the others after it: not a chain, left as they are.)
    """
    if not traces:
        return []
    first = traces[0].format
    run: list[Trace] = []
    for trace in traces:
        if trace.format != first:
            break
        run.append(trace)
    in_time_order = run[0].source_order is FrameOrder.OLDEST_FIRST or first in EVENT_ORDERED
    return run if in_time_order else run[::-1]


def _mapped_frames(
    chain: Sequence[Trace],
    files: Collection[str],
    index: SymbolIndex | None,
    packages: Packages = NO_PACKAGES,
) -> list[MappedFrame]:
    """The frames of the exception nearest the root cause that reach our code; else the
    top-level exception's."""
    fallback: list[MappedFrame] = []
    for trace in chain:
        mapped = map_frames(trace.frames, files, index, packages)
        if any(frame.in_app for frame in mapped):
            return mapped
        fallback = mapped
    return fallback


def report_schema() -> dict[str, object]:
    """JSON Schema of the `Report` model (what intake produces)."""
    return Report.model_json_schema()
