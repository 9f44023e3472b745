"""Stored inputs → `Intake`: the request body exactly as it arrived, turned into reports
inside the job (never in the request, which only stores and queues).

Sources: `diagnose` (a `ReportIn` as JSON, from a JSON or a text body) and the intake
providers of webhook deliveries.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import ValidationError

from api.errors import describe
from diagnoser.intake import Intake, IntakeError, ReportIn, from_payload, load_json

DIAGNOSE = "diagnose"
RESOURCE_HEADER = "sentry-hook-resource"


def read_input(source: str, raw: bytes, headers: Mapping[str, str]) -> list[Intake]:
    """The reports in one stored input; IntakeError saying what is wrong with it.
    `source` is `diagnose` or the intake provider a webhook delivery was
    found to be (`api.deliveries.inspect`)."""
    if source == DIAGNOSE:
        try:
            return [Intake(report=ReportIn.model_validate_json(raw))]
        except ValidationError as exc:  # one line, as for every other source
            raise IntakeError(f"report: {describe(exc.errors(include_url=False))}") from None
    return from_payload(source, load_json(raw), resource=headers.get(RESOURCE_HEADER))
