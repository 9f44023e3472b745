"""Intake: whatever arrives (text, webhook payloads) → a normalized `Report`, before any model.

Text goes straight to `build_report(ReportIn(text=...), files=..., index=...)`; a webhook
goes through `from_payload(provider, payload)` first, whose structured frames and notes
are passed on as `build_report(intake.report, traces=intake.traces,
truncated=intake.truncated, ...)`. Bodies from the network or stdin are read with
`read_limited` (`MAX_REPORT_BYTES` for text, `MAX_PAYLOAD_BYTES` for JSON) and JSON parsed
with `load_json`; both raise `IntakeError` (`PayloadTooLarge` for size).
"""

from __future__ import annotations

from diagnoser.intake.body import load_json, read_limited
from diagnoser.intake.intake import (
    build_report,
    exception_chain,
    report_fingerprint,
    report_schema,
)
from diagnoser.intake.payloads import PROVIDERS, Intake, IntakeError, PayloadTooLarge, from_payload
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
    "PROVIDERS",
    "Classification",
    "ExceptionInfo",
    "Frame",
    "Intake",
    "IntakeError",
    "Kind",
    "MappedFrame",
    "Mentioned",
    "PayloadTooLarge",
    "Report",
    "ReportIn",
    "Source",
    "Trace",
    "build_report",
    "exception_chain",
    "from_payload",
    "load_json",
    "parse_traces",
    "read_limited",
    "report_fingerprint",
    "report_schema",
]
