"""Standard Webhooks generic body → `Intake` (WEBHOOKS.md §7).

`{type, timestamp, data}` from our own forwarders and relays. `data` carries the report
as `text` (or `body`/`description`), or as `message`/`title` with a `stack`/`stacktrace`
string; the text is kept verbatim so the trace parsers see the runtime's own format.
"""

from __future__ import annotations

from dataclasses import replace

from diagnoser.intake.payloads._fields import Node, root
from diagnoser.intake.payloads._render import join_text, make_report
from diagnoser.intake.payloads.errors import IntakeError
from diagnoser.intake.payloads.result import Intake
from diagnoser.intake.report import Source

TEXT_KEYS = ("text", "body", "description")
MESSAGE_KEYS = ("message", "error", "exception")
STACK_KEYS = ("stack", "stacktrace", "stack_trace", "trace", "backtrace")
VERSION_KEYS = ("app_version", "appVersion", "version", "release")
MIN_RATING, MAX_RATING = 1, 5


def from_standard(payload: object) -> Intake:
    """One Standard Webhooks body, e.g. `{"type": "bug.reported", "data": {...}}`."""
    top = root(payload, "webhook")
    kind = top.required_text("type")
    ctx = f"webhook {kind}"
    data = replace(top, ctx=ctx).child("data")
    title = data.text("title")
    text = _first(data, TEXT_KEYS)
    if text is None:
        text = join_text([_first(data, MESSAGE_KEYS), _first(data, STACK_KEYS)])
    if not text:
        raise IntakeError(
            f"{ctx}: missing data.text (or data.message/data.stack)", field="data.text"
        )
    rating = data.integer("rating")
    if rating is not None and not MIN_RATING <= rating <= MAX_RATING:
        raise data.fail("rating", "rating out of 1..5 in")
    report = make_report(
        data,
        text=text,
        source=Source.WEBHOOK,
        text_field="data.text",
        title=title,
        platform=data.text("platform"),
        app_version=next((v for key in VERSION_KEYS if (v := data.label(key))), None),
        rating=rating,
        url=data.text("url"),
        metadata={
            "provider": "standard_webhooks",
            "type": kind,
            "timestamp": top.label("timestamp"),
            "origin": data.text("source"),
        },
    )
    return Intake(report=report, traces=(), truncated=tuple(data.cuts))


def _first(data: Node, keys: tuple[str, ...]) -> str | None:
    return next((value for key in keys if (value := data.text(key))), None)
