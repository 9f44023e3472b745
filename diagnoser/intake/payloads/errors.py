"""The errors of intake.

    DiagnoserError
    └── IntakeError (also a ValueError)   a body or payload is malformed or of an unknown
        │                                 shape (HTTP 400)
        └── PayloadTooLarge               a body is over its size limit (HTTP 413)

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


class PayloadTooLarge(IntakeError):
    """A body is larger than its limit; nothing beyond the limit was read."""

    def __init__(self, message: str, *, limit: int) -> None:
        super().__init__(message)
        self.limit = limit
        """The limit in bytes (or characters, for a `str` body)."""
