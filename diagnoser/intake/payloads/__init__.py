"""Provider payloads (parsed JSON) → `Intake`: a `ReportIn` plus its structured traces.

Each adapter is a pure function of the parsed body; signatures, delivery ids and HTTP
live in the API layer. Anything malformed or of an unknown shape raises `IntakeError`
naming the field, never `KeyError`/`TypeError`.

    from_payload("sentry", body, resource=headers.get("Sentry-Hook-Resource"))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from diagnoser.constants import PROVIDERS
from diagnoser.intake.payloads.bugsnag import from_bugsnag
from diagnoser.intake.payloads.crashlytics import from_crashlytics
from diagnoser.intake.payloads.errors import IntakeError, PayloadTooLarge
from diagnoser.intake.payloads.github import from_github
from diagnoser.intake.payloads.nesting import cut_note, cut_paths
from diagnoser.intake.payloads.result import Intake
from diagnoser.intake.payloads.reviews import from_app_store, from_google_play, from_review_text
from diagnoser.intake.payloads.rollbar import from_rollbar
from diagnoser.intake.payloads.sentry import from_sentry
from diagnoser.intake.payloads.standard import from_standard

__all__ = [
    "PROVIDERS",
    "Intake",
    "IntakeError",
    "PayloadTooLarge",
    "from_app_store",
    "from_bugsnag",
    "from_crashlytics",
    "from_github",
    "from_google_play",
    "from_payload",
    "from_review_text",
    "from_rollbar",
    "from_sentry",
    "from_standard",
]

_ONE: dict[str, Callable[[object], Intake]] = {
    "bugsnag": from_bugsnag,
    "rollbar": from_rollbar,
    "github": from_github,
    "standard": from_standard,
    "appfollow": from_review_text,
    "slack": from_review_text,
    "crashlytics": from_crashlytics,
}
_MANY: dict[str, Callable[[object], list[Intake]]] = {
    "app_store": from_app_store,
    "google_play": from_google_play,
}


def from_payload(provider: str, payload: object, *, resource: str | None = None) -> list[Intake]:
    """The reports in one provider payload; `resource` is Sentry's `Sentry-Hook-Resource`."""
    if provider not in PROVIDERS:
        raise IntakeError(
            f"unknown provider {provider!r} (expected one of {', '.join(PROVIDERS)})",
            field="provider",
        )
    if not isinstance(payload, dict | list):
        raise IntakeError(f"{provider}: the payload must be a JSON object or array", field="")
    if provider == "sentry":
        intakes = [from_sentry(payload, resource)]
    elif provider in _MANY:
        intakes = _MANY[provider](payload)
    else:
        intakes = [_ONE[provider](payload)]
    cut = cut_paths(payload)  # nested too deep and not read (what is read was refused)
    if not cut:
        return intakes
    note = cut_note(provider, cut)
    return [replace(intake, truncated=(*intake.truncated, note)) for intake in intakes]
