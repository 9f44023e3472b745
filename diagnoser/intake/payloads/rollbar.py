"""Rollbar webhook → `Intake` (WEBHOOKS.md §4).

The item is `data.item`; the occurrence `data.occurrence` (`occurrence` events) or
`data.item.last_occurrence` (`*_item` events). Its body holds one of `trace`,
`trace_chain` (top-level exception first, then its causes — reversed here to oldest
first), `message.body` or `crash_report.raw` (iOS text, parsed later from the report text).
Frames are oldest first (the most recent call last).
"""

from __future__ import annotations

from dataclasses import replace

from diagnoser.intake.payloads._fields import Node, nodes_of, root
from diagnoser.intake.payloads._render import (
    CHAIN_NEWEST_FIRST,
    FRAMES_OLDEST_FIRST,
    clip,
    join_text,
    make_report,
    make_trace,
    omitted,
    render_traces,
    require,
    usable,
)
from diagnoser.intake.payloads.errors import IntakeError
from diagnoser.intake.payloads.result import Intake
from diagnoser.intake.report import Frame, FrameOrder, Source, Trace

UNSUPPORTED_EVENTS = frozenset({"deploy"})
"""Events that carry no bug: a deploy notification has `data.deploy`, not `data.item`."""


def from_rollbar(payload: object) -> Intake:
    """One Rollbar webhook body (`new_item`, `occurrence`, `reactivated_item`, …)."""
    top = root(payload, "rollbar")
    event_name = top.text("event_name")
    ctx = f"rollbar {event_name}" if event_name else "rollbar"
    if event_name in UNSUPPORTED_EVENTS:
        raise IntakeError(f"{ctx}: event carries no item (unsupported)", field="event_name")
    data = replace(top, ctx=ctx).child("data")
    item = data.child("item")
    occurrence = data.maybe_child("occurrence") or item.maybe_child("last_occurrence")
    traces: list[Trace] = []
    body_text = None
    language = None
    if occurrence is not None:
        language = occurrence.text("language")
        body = occurrence.child("body")
        traces = _body_traces(body, language)
        body_text = _body_text(body)
    title = item.text("title")
    require(title or body_text or traces, item, item.at("title"), "title, message or trace")
    text = join_text([title, body_text if body_text != title else None, render_traces(traces)])
    report = make_report(
        item,
        text=text,
        source=Source.ROLLBAR,
        text_field=item.at("title"),
        title=title,
        platform=(occurrence.text("platform") or language) if occurrence else None,
        app_version=_code_version(occurrence) if occurrence else None,
        url=data.text("url") or item.text("url"),
        metadata=_metadata(item, occurrence, event_name),
    )
    return Intake(report=report, traces=tuple(traces), truncated=tuple(item.cuts))


def _body_traces(body: Node, language: str | None) -> list[Trace]:
    chain = body.items("trace_chain")
    if chain is not None:
        # Rollbar lists the raised exception first and its causes after it.
        nodes = nodes_of(chain, body, body.at("trace_chain"), CHAIN_NEWEST_FIRST)
        traces = [_trace(node, language) for node in reversed(nodes)]
    else:
        trace = body.maybe_child("trace")
        traces = [_trace(trace, language)] if trace is not None else []
    return [trace for trace in traces if trace.frames or trace.exception]


def _trace(trace: Node, language: str | None) -> Trace:
    exception = trace.maybe_child("exception")
    frames = usable(
        Frame(
            file=clip(frame.text("filename"), 4_000),
            line=frame.integer("lineno"),
            column=frame.integer("colno"),
            function=clip(frame.text("method"), 4_000),
            language=language,
        )
        for frame in trace.children("frames", FRAMES_OLDEST_FIRST)
    )
    return make_trace(
        frames,
        order=FrameOrder.OLDEST_FIRST,
        omitted=omitted(trace, "frames", FRAMES_OLDEST_FIRST),
        exc_type=exception.text("class") if exception else None,
        message=(exception.text("message") or exception.text("description")) if exception else None,
    )


def _body_text(body: Node) -> str | None:
    message = body.maybe_child("message")
    if message is not None and message.text("body"):
        return clip(message.text("body"))
    crash = body.maybe_child("crash_report")
    if crash is not None:
        return crash.text("raw")
    return None


def _code_version(occurrence: Node) -> str | None:
    found = occurrence.label("code_version")
    if found:
        return found
    server = occurrence.maybe_child("server")
    if server is not None and server.label("code_version"):
        return server.label("code_version")
    client = occurrence.maybe_child("client")
    javascript = client.maybe_child("javascript") if client else None
    return javascript.label("code_version") if javascript else None


def _metadata(item: Node, occurrence: Node | None, event_name: str | None) -> dict[str, object]:
    request = occurrence.maybe_child("request") if occurrence else None
    return {
        "provider": "rollbar",
        "event_name": event_name,
        "item_id": item.label("id"),
        "counter": item.label("counter"),
        "environment": item.text("environment")
        or (occurrence.text("environment") if occurrence else None),
        "level": item.label("level"),
        "occurrence_uuid": occurrence.text("uuid") if occurrence else None,
        "framework": occurrence.text("framework") if occurrence else None,
        "request_url": request.text("url") if request else None,
    }
