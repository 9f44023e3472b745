"""Bugsnag / Insight Hub webhook → `Intake` (WEBHOOKS.md §2).

The error is `error`, its one stack trace `error.stackTrace[]`; notifiers send the
frames innermost first, so they are reversed here. `inProject` is Bugsnag's `in_app`.
"""

from __future__ import annotations

from dataclasses import replace

from diagnoser.intake.payloads._fields import Node, root
from diagnoser.intake.payloads._render import (
    FRAMES_NEWEST_FIRST,
    clip,
    join_text,
    make_report,
    make_trace,
    omitted,
    render_traces,
    require,
    usable,
)
from diagnoser.intake.payloads.result import Intake
from diagnoser.intake.report import Frame, FrameOrder, Source, Trace


def from_bugsnag(payload: object) -> Intake:
    """One Bugsnag webhook body (`firstException`, `exception`, `reopened`, …)."""
    top = root(payload, "bugsnag")
    trigger = top.maybe_child("trigger")
    ctx = f"bugsnag {trigger.text('type')}" if trigger and trigger.text("type") else "bugsnag"
    error = replace(top, ctx=ctx).child("error")
    exc_class, message = error.text("exceptionClass"), error.text("message")
    traces = _traces(error)
    require(traces, error, error.at("exceptionClass"), "exceptionClass, message or stackTrace")
    app = error.maybe_child("app")
    device = error.maybe_child("device")
    context = error.text("context")
    request_url = error.text("requestUrl")
    title = f"{exc_class}: {message}" if exc_class and message else exc_class or message
    text = join_text(
        [
            trigger.text("message") if trigger else None,
            f"Context: {context}" if context else None,
            f"Request: {request_url}" if request_url else None,
            render_traces(traces),
        ]
    )
    project = top.maybe_child("project")
    report = make_report(
        error,
        text=text,
        source=Source.BUGSNAG,
        text_field=error.at("exceptionClass"),
        title=title,
        platform=app.text("type") if app else None,
        app_version=error.label("appVersion") or (app.label("version") if app else None),
        url=error.text("url"),
        metadata={
            "provider": "bugsnag",
            "trigger": trigger.text("type") if trigger else None,
            "error_id": error.label("errorId") or error.label("id"),
            "project": project.text("name") if project else None,
            "context": context,
            "release_stage": error.text("releaseStage"),
            "severity": error.text("severity"),
            "unhandled": error.flag("unhandled"),
            "request_url": request_url,
            "os": device.text("osName") if device else None,
            "os_version": device.label("osVersion") if device else None,
        },
    )
    return Intake(report=report, traces=tuple(traces), truncated=tuple(error.cuts))


def _traces(error: Node) -> list[Trace]:
    exc_class, message = error.text("exceptionClass"), error.text("message")
    frames = usable(
        Frame(
            file=clip(frame.text("file"), 4_000),
            line=frame.integer("lineNumber"),
            column=frame.integer("columnNumber"),
            function=clip(frame.text("method"), 4_000),
            in_app=frame.flag("inProject"),
        )
        for frame in error.children("stackTrace", FRAMES_NEWEST_FIRST)
    )
    if not (frames or exc_class or message):
        return []
    trace = make_trace(
        frames,
        order=FrameOrder.NEWEST_FIRST,
        exc_type=exc_class,
        message=message,
        omitted=omitted(error, "stackTrace", FRAMES_NEWEST_FIRST),
    )
    return [trace]
