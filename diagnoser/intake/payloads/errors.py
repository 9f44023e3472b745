"""The one error of payload intake.

    DiagnoserError
    └── IntakeError (also a ValueError)   a payload is malformed or of an unknown shape

The message names the provider, the event and the field path, e.g.
`sentry event_alert: missing data.event`, so the API can return it as a 4xx verbatim.
"""

from __future__ import annotations

from diagnoser.errors import DiagnoserError


class IntakeError(DiagnoserError, ValueError):
    """A payload could not be turned into a report; `field` is the offending path."""

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.field = field
        """Dotted path of the missing or invalid field (`data.event`, `reviews[0].comments`)."""
