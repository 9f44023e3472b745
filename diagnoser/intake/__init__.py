"""Intake: whatever arrives (text, webhook payloads) → a normalized `Report`, before any model.

Text goes straight to `build_report(ReportIn(text=...), files=..., index=...)`; a webhook
goes through `from_payload(provider, payload)` first, whose structured frames are passed
on as `build_report(intake.report, traces=intake.traces, ...)`.
"""

from __future__ import annotations

from diagnoser.intake.intake import build_report, exception_chain, report_schema
from diagnoser.intake.payloads import Intake, IntakeError, from_payload
from diagnoser.intake.report import (
    Classification,
    ExceptionInfo,
    Frame,
    Kind,
    MappedFrame,
    Mentioned,
    Report,
    ReportIn,
    Source,
    Trace,
)
from diagnoser.intake.traces import parse_traces

__all__ = [
    "Classification",
    "ExceptionInfo",
    "Frame",
    "Intake",
    "IntakeError",
    "Kind",
    "MappedFrame",
    "Mentioned",
    "Report",
    "ReportIn",
    "Source",
    "Trace",
    "build_report",
    "exception_chain",
    "from_payload",
    "parse_traces",
    "report_schema",
]
