"""Shared building blocks: frame lists → `Trace`, traces → readable text, fields → `ReportIn`.

The rendered text is for people and models, not for the text trace parsers: frames are
written as `path:line:col in function`, a shape none of the runtime formats uses, so the
structured traces are not found a second time in `report.text`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import ValidationError

from diagnoser.constants import MAX_FRAMES, MAX_REPORT_BYTES, MAX_REVISION_CHARS, MAX_TRACES
from diagnoser.intake.payloads._fields import Cap, Node
from diagnoser.intake.payloads.errors import IntakeError
from diagnoser.intake.report import (
    Frame,
    FrameOrder,
    ReportIn,
    Source,
    Trace,
    TraceException,
    TraceFormat,
)

MAX_TEXT_CHARS = MAX_REPORT_BYTES
"""`ReportIn.text` limit; longer renderings are cut with a marker (and a note)."""
MAX_FIELD_CHARS = 20_000
"""A single message or title beyond this is noise (minified bundles, dumped blobs)."""
TRUNCATED = "\n… [truncated]"

FRAMES_OLDEST_FIRST = Cap(MAX_FRAMES, "frames", "the innermost", from_end=True)
FRAMES_NEWEST_FIRST = Cap(MAX_FRAMES, "frames", "the innermost")
CHAIN_OLDEST_FIRST = Cap(MAX_TRACES, "exceptions", "the newest", from_end=True)
CHAIN_NEWEST_FIRST = Cap(MAX_TRACES, "exceptions", "the newest")


def clip(value: str | None, limit: int = MAX_FIELD_CHARS) -> str | None:
    if value is None:
        return None
    return value if len(value) <= limit else value[:limit] + TRUNCATED


def usable(frames: Iterable[Frame]) -> list[Frame]:
    """The frames that point somewhere: a frame with no file, function or module (all of
    its fields absent or of the wrong type) says nothing and is dropped."""
    return [frame for frame in frames if frame.file or frame.function or frame.module]


def omitted(node: Node, key: str, cap: Cap) -> int:
    """How many items of the list at `key` a read through `cap` leaves out."""
    return max(0, len(node.items(key) or []) - cap.limit)


def require(found: object, node: Node, field: str, what: str) -> None:
    """Refuse a payload from which nothing worth diagnosing was extracted."""
    if not found:
        raise IntakeError(f"{node.ctx}: nothing to diagnose: no {what}", field=field)


def make_trace(
    frames: Sequence[Frame],
    *,
    order: FrameOrder,
    exc_type: str | None = None,
    message: str | None = None,
    omitted: int = 0,
) -> Trace:
    """A structured trace; `frames` in the provider's `order`, stored innermost last, at
    most `MAX_FRAMES` (the payload's list is cut before reading: `omitted` outer ones)."""
    ordered = list(frames) if order is FrameOrder.OLDEST_FIRST else list(reversed(frames))
    exception = None
    if exc_type is not None or message is not None:
        exception = TraceException(type=clip(exc_type), message=clip(message))
    return Trace(
        format=TraceFormat.STRUCTURED,
        source_order=order,
        exception=exception,
        frames=tuple(ordered[-MAX_FRAMES:]),
        omitted_frames=omitted + max(0, len(ordered) - MAX_FRAMES),
    )


def exception_line(exception: TraceException | None) -> str:
    if exception is None:
        return ""
    if exception.type and exception.message:
        return f"{exception.type}: {exception.message}"
    return exception.type or exception.message or ""


def frame_line(frame: Frame) -> str:
    where = frame.file or frame.module or "<unknown>"
    if frame.line is not None:
        where += f":{frame.line}"
        if frame.column is not None:
            where += f":{frame.column}"
    if frame.function:
        where += f" in {frame.function}"
    if frame.module and frame.file:
        where += f" [{frame.module}]"
    if frame.in_app:
        where += " (in app)"
    return "  " + where


def render_traces(traces: Sequence[Trace]) -> str:
    blocks: list[str] = []
    for trace in traces:
        lines = [exception_line(trace.exception) or "Stack trace"]
        if trace.frames:
            lines.append("  Frames (most recent call last):")
            if trace.omitted_frames:
                lines.append(f"  … {trace.omitted_frames:,} outer frames not kept")
            lines.extend(frame_line(frame) for frame in trace.frames)
        blocks.append("\n".join(lines))
    if len(blocks) > 1:
        blocks.insert(0, f"Exception chain of {len(blocks)}, oldest cause first:")
    return "\n\n".join(blocks)


def join_text(parts: Sequence[str | None]) -> str:
    return "\n\n".join(part.strip("\n") for part in parts if part and part.strip())


def make_report(
    node: Node,
    *,
    text: str,
    source: Source,
    text_field: str,
    title: str | None = None,
    platform: str | None = None,
    app_version: str | None = None,
    rating: int | None = None,
    url: str | None = None,
    metadata: dict[str, Any] | None = None,
    commit: str | None = None,
    release: str | None = None,
) -> ReportIn:
    """A validated `ReportIn` for the payload `node` belongs to; an empty text is an error
    naming `text_field`, a text over `MAX_TEXT_CHARS` is cut (noted in `node.cuts`)."""
    ctx = node.ctx
    if not text.strip():
        raise IntakeError(f"{ctx}: no report text in {text_field}", field=text_field)
    if len(text) > MAX_TEXT_CHARS:
        node.cuts.append(
            f"{ctx}: report text of {len(text):,} characters; kept the first {MAX_TEXT_CHARS:,}"
        )
        text = text[: MAX_TEXT_CHARS - len(TRUNCATED)] + TRUNCATED
    try:
        return ReportIn(
            text=text,
            source=source,
            title=clip(title, 1_000),
            platform=clip(platform, 200),
            app_version=clip(app_version, 200),
            commit=clip(commit, MAX_REVISION_CHARS),
            release=clip(release, MAX_REVISION_CHARS),
            rating=rating,
            url=clip(url, 4_000),
            metadata={k: v for k, v in (metadata or {}).items() if v is not None},
        )
    except ValidationError as exc:  # a field we failed to pre-check; name it all the same
        field = ".".join(str(part) for part in exc.errors()[0]["loc"])
        raise IntakeError(f"{ctx}: invalid {field}", field=field) from exc
