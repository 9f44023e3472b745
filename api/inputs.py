"""Stored inputs → `Intake`: the request body exactly as it arrived, turned into reports
inside the job (never in the request, which only stores and queues).

Sources: `diagnose` (a `ReportIn` as JSON, from a JSON or a text body) and the intake
providers of webhook deliveries.
"""

from __future__ import annotations

from collections.abc import Mapping

from diagnoser.intake import Intake, ReportIn, from_payload, load_json

DIAGNOSE = "diagnose"
RESOURCE_HEADER = "sentry-hook-resource"


def read_input(source: str, raw: bytes, headers: Mapping[str, str]) -> list[Intake]:
    """The reports in one stored input; IntakeError saying what is wrong with it.
    `source` is `diagnose` or the intake provider a webhook delivery was
    found to be (`api.deliveries.inspect`)."""
    if source == DIAGNOSE:
        return [Intake(report=ReportIn.model_validate_json(raw))]
    return from_payload(source, load_json(raw), resource=headers.get(RESOURCE_HEADER))
