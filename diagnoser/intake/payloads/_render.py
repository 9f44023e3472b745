"""Shared building blocks: frame lists → `Trace`, traces → readable text, fields → `ReportIn`.

The rendered text is for people and models, not for the text trace parsers: frames are
written as `path:line:col in function`, a shape none of the runtime formats uses, so the
structured traces are not found a second time in `report.text`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

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

MAX_TEXT_CHARS = 2_000_000
"""`ReportIn.text` limit; longer renderings are cut with a marker."""
MAX_FIELD_CHARS = 20_000
"""A single message or title beyond this is noise (minified bundles, dumped blobs)."""
MAX_FRAMES = 512
"""Per trace; the innermost frames are kept, as Sentry itself trims the outer ones."""
MAX_TRACES = 32
"""Per report; the newest exceptions of a chain are kept."""
TRUNCATED = "\n… [truncated]"


def clip(value: str | None, limit: int = MAX_FIELD_CHARS) -> str | None:
    if value is None:
        return None
    return value if len(value) <= limit else value[:limit] + TRUNCATED


def make_trace(
    frames: Sequence[Frame],
    *,
    order: FrameOrder,
    exc_type: str | None = None,
    message: str | None = None,
) -> Trace:
    """A structured trace; `frames` in the provider's `order`, stored innermost last."""
    ordered = list(frames) if order is FrameOrder.OLDEST_FIRST else list(reversed(frames))
    exception = None
    if exc_type is not None or message is not None:
        exception = TraceException(type=clip(exc_type), message=clip(message))
    return Trace(
        format=TraceFormat.STRUCTURED,
        source_order=order,
        exception=exception,
        frames=tuple(ordered[-MAX_FRAMES:]),
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
            lines.extend(frame_line(frame) for frame in trace.frames)
        blocks.append("\n".join(lines))
    if len(blocks) > 1:
        blocks.insert(0, f"Exception chain of {len(blocks)}, oldest cause first:")
    return "\n\n".join(blocks)


def join_text(parts: Sequence[str | None]) -> str:
    return "\n\n".join(part.strip("\n") for part in parts if part and part.strip())


def make_report(
    ctx: str,
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
) -> ReportIn:
    """A validated `ReportIn`; an empty text is an error naming `text_field`."""
    if not text.strip():
        raise IntakeError(f"{ctx}: no report text in {text_field}", field=text_field)
    if len(text) > MAX_TEXT_CHARS:
        text = text[: MAX_TEXT_CHARS - len(TRUNCATED)] + TRUNCATED
    try:
        return ReportIn(
            text=text,
            source=source,
            title=clip(title, 1_000),
            platform=clip(platform, 200),
            app_version=clip(app_version, 200),
            rating=rating,
            url=clip(url, 4_000),
            metadata={k: v for k, v in (metadata or {}).items() if v is not None},
        )
    except ValidationError as exc:  # a field we failed to pre-check; name it all the same
        field = ".".join(str(part) for part in exc.errors()[0]["loc"])
        raise IntakeError(f"{ctx}: invalid {field}", field=field) from exc
