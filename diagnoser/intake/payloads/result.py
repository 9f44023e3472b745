"""`Intake`: what a payload adapter returns — the report and its structured traces."""

from __future__ import annotations

from dataclasses import dataclass

from diagnoser.intake.report import ReportIn, Trace


@dataclass(frozen=True)
class Intake:
    """One report taken from a provider payload."""

    report: ReportIn
    """The caller-side report; `text` is a readable rendering of the payload."""
    traces: tuple[Trace, ...] = ()
    """Structured traces from the payload, one per exception, oldest cause first; each
    trace's frames innermost last. Empty for text-only sources (issues, reviews)."""
    truncated: tuple[str, ...] = ()
    """What the adapter cut from an oversized payload (pass on to `build_report`)."""
