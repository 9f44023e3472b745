"""The input side of a diagnosis: `ReportIn` (what a caller sends) and `Report` (what
intake derives from it). Derived fields — frames, exception, mentions, classification,
fingerprint — are always computed by us; a caller's values for them are ignored.

Frames are normalised to innermost-last (the crash site is `frames[-1]`), whatever order
the source format uses; `Trace.source_order` records the original one.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from diagnoser.constants import MAX_REPORT_BYTES, MAX_REVISION_CHARS


class Source(StrEnum):
    CRASH_LOG = "crash_log"
    BUG_REPORT = "bug_report"
    REVIEW = "review"
    SENTRY = "sentry"
    GITHUB = "github"
    BUGSNAG = "bugsnag"
    ROLLBAR = "rollbar"
    CRASHLYTICS = "crashlytics"
    APP_STORE = "app_store"
    GOOGLE_PLAY = "google_play"
    WEBHOOK = "webhook"
    OTHER = "other"


class TraceFormat(StrEnum):
    PYTHON = "python"
    JAVASCRIPT_V8 = "javascript_v8"
    JAVASCRIPT_GECKO = "javascript_gecko"  # Firefox and Safari: `fn@file:line:col`
    JAVA = "java"  # Java, Kotlin and Android logcat
    GO = "go"
    RUST = "rust"
    RUBY = "ruby"
    DOTNET = "dotnet"
    SWIFT = "swift"  # Apple crash reports
    PHP = "php"
    NATIVE = "native"  # C and C++: sanitizers, gdb, lldb, valgrind, failed asserts
    STRUCTURED = "structured"  # frames from a JSON payload (Sentry, Bugsnag, Rollbar)


class FrameOrder(StrEnum):
    OLDEST_FIRST = "oldest_first"  # Python, Sentry, Rollbar: the crash site is last
    NEWEST_FIRST = "newest_first"  # Java, V8, .NET, Go, Rust, Ruby, PHP, Apple, native


class Frame(BaseModel):
    """One stack frame, as the trace named it."""

    model_config = ConfigDict(frozen=True)

    file: str | None = None
    """The path as written in the trace (absolute, relative, a URL or a module file)."""
    line: int | None = None
    column: int | None = None
    function: str | None = None
    module: str | None = None
    """Dotted module / package / class where the format gives one (Java `com.x.Y`)."""
    in_app: bool | None = None
    """The source's own verdict when it has one (Sentry `in_app`, Bugsnag `inProject`)."""
    language: str | None = None


class TraceException(BaseModel):
    model_config = ConfigDict(frozen=True)

    type: str | None = None
    message: str | None = None


class Trace(BaseModel):
    """One exception's stack trace found in a text or a payload."""

    model_config = ConfigDict(frozen=True)

    format: TraceFormat
    source_order: FrameOrder
    exception: TraceException | None = None
    frames: tuple[Frame, ...] = ()
    """Innermost last; at most `MAX_FRAMES`."""
    omitted_frames: int = 0
    """Outer frames beyond `MAX_FRAMES` that were not kept (a runaway recursion)."""
    start: int = 0
    """Character offsets of the trace in the text it was parsed from (0, 0 for payloads)."""
    end: int = 0


class ReportIn(BaseModel):
    """What a caller sends: the report and what it knows about it. Nothing derived."""

    model_config = ConfigDict(extra="ignore")  # so a caller's `truncated` etc. are dropped

    text: str = Field(min_length=1, max_length=MAX_REPORT_BYTES)
    """The crash log, review or issue body."""
    source: Source = Source.BUG_REPORT
    title: str | None = None
    platform: str | None = None
    app_version: str | None = None
    commit: str | None = Field(default=None, max_length=MAX_REVISION_CHARS)
    """The commit the failure happened at (a SHA or a ref): a git repository is
    diagnosed at it (`diagnoser.mirror`)."""
    release: str | None = Field(default=None, max_length=MAX_REVISION_CHARS)
    """The release it happened in (`1.2.3`, `v1.2.3`, `app@1.2.3`): a git repository is
    diagnosed at the tag that names it."""
    rating: int | None = Field(default=None, ge=1, le=5)
    url: str | None = None
    received_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Anything else the caller knows, as JSON: finite numbers only."""

    @field_validator("metadata")
    @classmethod
    def _finite(cls, value: dict[str, Any]) -> dict[str, Any]:
        where = non_finite_at(value)
        if where is not None:  # not JSON (RFC 8259), though Python's and pydantic's read it
            raise PydanticCustomError(
                "finite_number", "NaN and Infinity are not JSON numbers (at {where})",
                {"where": where},
            )  # fmt: skip
        return value


def revision(report: ReportIn) -> str | None:
    """What a report says it happened at, most precise first: its commit, its release,
    its app's version (a Sentry event's `release` arrives as that)."""
    return report.commit or report.release or report.app_version


def non_finite_at(value: object) -> str | None:
    """Where in `value` (nested dicts and lists) a NaN or infinite float is, as a dotted
    path (`a.b.0`), or None. Walked without recursion: a deep value cannot overflow."""
    stack: list[tuple[str, object]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return path or "the top"
        stack += [(f"{path}.{key}" if path else str(key), child) for key, child in _items(item)]
    return None


def _items(value: object) -> list[tuple[object, object]]:
    if isinstance(value, dict):
        return list(value.items())
    return list(enumerate(value)) if isinstance(value, list | tuple) else []


class ExceptionInfo(BaseModel):
    """The top-level exception and its causes (oldest first, as chained)."""

    type: str | None = None
    message: str | None = None
    causes: list[TraceException] = Field(default_factory=list)


class MappedFrame(BaseModel):
    """A frame and where it lands in the repository (if it does)."""

    frame: Frame
    repo_path: str | None = None
    symbol: str | None = None
    """Qualified name of the enclosing definition at that line."""
    in_app: bool = False
    unmapped_reason: str | None = None


class Mentioned(BaseModel):
    files: list[str] = Field(default_factory=list)
    """Paths written in the text (as written)."""
    modules: list[str] = Field(default_factory=list)
    """Dotted module names (`django.db.models.query`)."""
    identifiers: list[str] = Field(default_factory=list)
    """Names in backticks or code, CamelCase or snake_case words."""


class Kind(StrEnum):
    CRASH = "crash"
    BUG = "bug"
    PERFORMANCE = "performance"
    FEATURE_REQUEST = "feature_request"
    QUESTION = "question"
    PRAISE = "praise"
    NOISE = "noise"


class Classification(BaseModel):
    kind: Kind
    confidence: float = Field(ge=0.0, le=1.0)
    signals: list[str] = Field(default_factory=list)
    """What the verdict rests on, e.g. `prior:review`, `rule:failure`, `trace:python`,
    `failure:freezes`, `rating:1`."""
    prior: str = "neutral"
    """What the report's source made us expect: `review` (store reviews: a defect only
    when a concrete failure is named), `developer` (issue trackers and crash tools: a
    defect unless clearly a request or a question) or `neutral`."""

    @property
    def actionable(self) -> bool:
        return self.kind in {Kind.CRASH, Kind.BUG, Kind.PERFORMANCE}


class Report(ReportIn):
    """A report after intake: the caller's fields plus everything we derived."""

    traces: list[Trace] = Field(default_factory=list)
    frames: list[MappedFrame] = Field(default_factory=list)
    """Frames of the top-level exception, innermost last, mapped onto the repository."""
    exception: ExceptionInfo | None = None
    mentioned: Mentioned = Field(default_factory=Mentioned)
    classification: Classification
    fingerprint: str
    truncated: list[str] = Field(default_factory=list)
    """What intake cut from an oversized input, one note each, e.g. `sentry event: 12,000
    frames in exception.values[0].stacktrace.frames; kept the innermost 512`."""
