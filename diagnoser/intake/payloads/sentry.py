"""Sentry payloads → `Intake`.

Accepted shapes (see WEBHOOKS.md §1):
- Integration Platform: `event_alert.triggered` (`data.event`), `error.created`
  (`data.error`), `issue.*` (`data.issue`, no frames);
- the legacy Webhooks plugin and project Service Hooks (`event.created`/`event.alert`):
  a top-level `event`, with the link in the top-level `url` where given;
- a bare event (the SDK event schema) — useful for relays and tests.

Events carry frames in `exception.values[]` (or a flat list, or the API's `entries[]`),
in the crashed thread of `threads.values[]` for native crashes, or in a top-level
`stacktrace`. Sentry lists chains and frames oldest first, as `Trace` wants them.
"""

from __future__ import annotations

import json
from dataclasses import replace
from types import UnionType
from typing import Any

from diagnoser.constants import MAX_METADATA_CHARS, MAX_THREADS
from diagnoser.intake.payloads._fields import Cap, Node, nodes_of, root
from diagnoser.intake.payloads._render import (
    CHAIN_OLDEST_FIRST,
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

RESOURCE_KEYS = {"event_alert": "event", "error": "error", "issue": "issue"}
"""`Sentry-Hook-Resource` → the key under `data` holding the bug data."""
BARE_EVENT_KEYS = ("exception", "threads", "stacktrace", "entries", "event_id")
ENTRY_KEYS = ("exception", "threads", "stacktrace")
"""`entries[].type` values (API event serializer) that map onto event-schema keys."""
THREADS = Cap(MAX_THREADS, "threads", "the first")


def from_sentry(payload: object, resource: str | None = None) -> Intake:
    """One Sentry webhook body; `resource` is the `Sentry-Hook-Resource` header if known."""
    top = root(payload, "sentry")
    if resource is not None:
        key = RESOURCE_KEYS.get(resource)
        if key is None:
            raise IntakeError(
                f"sentry: unsupported resource {resource!r} (expected one of "
                f"{', '.join(RESOURCE_KEYS)})",
                field="Sentry-Hook-Resource",
            )
        hook_data = replace(top, ctx=f"sentry {resource}").child("data")
        return _from_resource(resource, hook_data.child(key))
    data = top.maybe_child("data")
    if data is not None:
        for name, key in RESOURCE_KEYS.items():
            if data.has(key):
                return _from_resource(name, replace(data, ctx=f"sentry {name}").child(key))
        raise IntakeError(
            "sentry: missing data.event, data.error or data.issue", field="data.event"
        )
    if top.has("event"):
        hook = replace(top, ctx="sentry service hook")
        group = hook.maybe_child("group")
        link = hook.text("url") or (group.text("url") if group else None)
        return _from_event(hook.child("event"), resource="service_hook", link=link)
    if any(top.has(key) for key in BARE_EVENT_KEYS):
        return _from_event(replace(top, ctx="sentry event"), resource="event", link=None)
    raise IntakeError("sentry: missing data.event, data.error, data.issue or event", field="data")


def _from_resource(resource: str, node: Node) -> Intake:
    if resource == "issue":
        return _from_issue(node)
    return _from_event(node, resource=resource, link=None)


def _from_issue(issue: Node) -> Intake:
    meta = issue.maybe_child("metadata")
    exc_type = meta.text("type") if meta else None
    exc_value = meta.text("value") if meta else None
    title = issue.text("title")
    summary = f"{exc_type}: {exc_value}" if exc_type and exc_value else exc_type or exc_value
    culprit = issue.text("culprit")
    filename = meta.text("filename") if meta else None
    text = join_text(
        [
            title,
            summary if summary != title else None,
            f"Culprit: {culprit}" if culprit else None,
            f"File: {filename}" if filename else None,
        ]
    )
    project = issue.maybe_child("project")
    require(title or summary, issue, issue.at("title"), "title or metadata.type/value")
    report = make_report(
        issue,
        text=text,
        source=Source.SENTRY,
        text_field=issue.at("title"),
        title=title or summary,
        platform=issue.text("platform") or (project.text("platform") if project else None),
        url=issue.text("web_url") or issue.text("permalink") or issue.text("url"),
        metadata={
            "provider": "sentry",
            "resource": "issue",
            "issue_id": issue.label("id"),
            "short_id": issue.text("shortId"),
            "level": issue.text("level"),
            "status": issue.text("status"),
            "substatus": issue.text("substatus"),
            "project": project.text("slug") if project else None,
            "culprit": culprit,
        },
    )
    return Intake(report=report, traces=(), truncated=tuple(issue.cuts))


def _from_event(event: Node, *, resource: str, link: str | None) -> Intake:
    event = _with_entries(event)
    platform = event.text("platform")
    values = _exception_values(event)
    traces = _event_traces(event, values, platform)
    meta = event.maybe_child("metadata")
    summary = None
    if meta is not None:
        mtype, mvalue = meta.text("type"), meta.text("value")
        summary = f"{mtype}: {mvalue}" if mtype and mvalue else mtype or mvalue
    message = _message(event)
    title = event.text("title") or summary or message
    require(traces or title, event, event.at("exception"), "exception, frame, title or message")
    culprit = event.text("culprit")
    text = join_text(
        [
            title,
            f"Culprit: {culprit}" if culprit else None,
            message if message != title else None,
            render_traces(traces),
            _context_lines(event),
        ]
    )
    report = make_report(
        event,
        text=text,
        source=Source.SENTRY,
        text_field=event.at("exception"),
        title=title,
        platform=platform,
        app_version=_release(event),
        url=event.text("web_url") or event.text("url") or link,
        metadata=_event_metadata(event, values, resource, culprit),
    )
    return Intake(report=report, traces=tuple(traces), truncated=tuple(event.cuts))


def _with_entries(event: Node) -> Node:
    """The API serializer's `entries: [{type, data}]` folded back into schema keys."""
    if any(event.has(key) for key in ENTRY_KEYS) or not event.has("entries"):
        return event
    merged: dict[str, object] = dict(event.value)
    for entry in event.children("entries"):
        kind = entry.text("type")
        if kind in ENTRY_KEYS and entry.has("data"):
            merged[kind] = entry.value["data"]
    return replace(event, value=merged)


def _event_traces(event: Node, values: list[Node], platform: str | None) -> list[Trace]:
    """One trace per exception with anything in it; the crashed thread's frames go on the
    top-level exception when it has none of its own."""
    traces = [
        trace
        for exc in values
        if (trace := _exception_trace(exc, platform)).frames or trace.exception
    ]
    crashed = _crashed_thread(event)
    if crashed is not None:
        frames = _frames(crashed, platform)
        if traces and not traces[-1].frames and frames:
            last = traces[-1].exception
            traces[-1] = make_trace(
                frames,
                order=FrameOrder.OLDEST_FIRST,
                exc_type=last.type if last else None,
                message=last.message if last else None,
                omitted=omitted(crashed, "frames", FRAMES_OLDEST_FIRST),
            )
        elif not traces and frames:
            traces.append(_stack_trace(crashed, frames))
    stack = event.maybe_child("stacktrace")
    if not traces and stack is not None and (frames := _frames(stack, platform)):
        traces.append(_stack_trace(stack, frames))
    return traces


def _stack_trace(stack: Node, frames: list[Frame]) -> Trace:
    omitted_frames = omitted(stack, "frames", FRAMES_OLDEST_FIRST)
    return make_trace(frames, order=FrameOrder.OLDEST_FIRST, omitted=omitted_frames)


def _exception_values(event: Node) -> list[Node]:
    raw = event.value.get("exception")
    if raw is None:
        return []
    if isinstance(raw, list):
        return nodes_of(raw, event, event.at("exception"), CHAIN_OLDEST_FIRST)
    if not isinstance(raw, dict):
        raise event.fail("exception", "expected an object or a list at")
    return event.child("exception").children("values", CHAIN_OLDEST_FIRST)


def _exception_trace(exc: Node, platform: str | None) -> Trace:
    stack = exc.maybe_child("stacktrace")
    frames = _frames(stack, platform) if stack is not None else []
    return make_trace(
        frames,
        order=FrameOrder.OLDEST_FIRST,
        exc_type=exc.text("type"),
        message=exc.text("value"),
        omitted=omitted(stack, "frames", FRAMES_OLDEST_FIRST) if stack is not None else 0,
    )


def _crashed_thread(event: Node) -> Node | None:
    """The stack trace of the crashed thread (else the current one), if any."""
    raw = event.value.get("threads")
    if raw is None:
        return None
    if isinstance(raw, list):
        threads = nodes_of(raw, event, event.at("threads"), THREADS)
    elif isinstance(raw, dict):
        threads = event.child("threads").children("values", THREADS)
    else:
        raise event.fail("threads", "expected an object or a list at")
    for wanted in ("crashed", "current"):
        for thread in threads:
            if thread.flag(wanted) and thread.has("stacktrace"):
                return thread.child("stacktrace")
    return None


def _frames(stack: Node, platform: str | None) -> list[Frame]:
    """Frames in either spelling: the event schema's (`lineno`, `in_app`) or the API
    serializer's camelCase (`lineNo`, `inApp`) that service hooks send. Only the
    innermost `MAX_FRAMES` are read; frames pointing nowhere are dropped."""
    return usable(
        Frame(
            file=clip(
                frame.text("filename") or frame.text("abs_path") or frame.text("absPath"), 4_000
            ),
            line=_first_int(frame, "lineno", "lineNo"),
            column=_first_int(frame, "colno", "colNo"),
            function=clip(
                frame.text("function") or frame.text("raw_function") or frame.text("rawFunction"),
                4_000,
            ),
            module=clip(frame.text("module"), 4_000),
            in_app=_first_flag(frame, "in_app", "inApp"),
            language=frame.text("platform") or platform,
        )
        for frame in stack.children("frames", FRAMES_OLDEST_FIRST)
    )


def _first_int(node: Node, *keys: str) -> int | None:
    return next((found for key in keys if (found := node.integer(key)) is not None), None)


def _first_flag(node: Node, *keys: str) -> bool | None:
    return next((found for key in keys if (found := node.flag(key)) is not None), None)


def _message(event: Node) -> str | None:
    logentry = event.maybe_child("logentry")
    if logentry is not None:
        found = logentry.text("formatted") or logentry.text("message")
        if found:
            return clip(found)
    return clip(event.text("message"))


def _release(event: Node) -> str | None:
    raw = event.value.get("release")
    if isinstance(raw, dict):
        release = event.child("release")
        return release.text("version") or release.text("shortVersion")
    found = event.label("release")
    if found:
        return found
    contexts = event.maybe_child("contexts")
    app = contexts.maybe_child("app") if contexts else None
    return app.label("app_version") if app else None


def _context_lines(event: Node) -> str | None:
    contexts = event.maybe_child("contexts")
    if contexts is None:
        return None
    lines = []
    for key in ("os", "runtime", "browser", "device", "app"):
        ctx = contexts.maybe_child(key) if isinstance(contexts.value.get(key), dict) else None
        if ctx is None:
            continue
        name = ctx.text("name") or ctx.text("model") or ctx.text("app_name")
        version = ctx.label("version") or ctx.label("app_version")
        described = " ".join(part for part in (name, version) if part)
        if described:
            lines.append(f"{key}: {described}")
    return "Context:\n" + "\n".join(f"  {line}" for line in lines) if lines else None


def _mechanism(values: list[Node]) -> tuple[str | None, bool | None]:
    """Type and `handled` of the top-level exception's mechanism (`onerror`, False)."""
    mechanism = values[-1].maybe_child("mechanism") if values else None
    if mechanism is None:
        return None, None
    return mechanism.text("type"), mechanism.flag("handled")


def _event_metadata(
    event: Node, values: list[Node], resource: str, culprit: str | None
) -> dict[str, Any]:
    sdk = event.value.get("sdk")
    mechanism, handled = _mechanism(values)
    return {
        "mechanism": mechanism,
        "handled": handled,
        "provider": "sentry",
        "resource": resource,
        "event_id": event.text("event_id") or event.text("eventID"),
        "issue_id": event.label("issue_id") or event.label("group_id") or event.label("groupID"),
        "level": event.text("level"),
        "environment": event.text("environment"),
        "dist": event.label("dist"),
        "culprit": culprit,
        "sdk": Node(sdk, event.ctx).text("name") if isinstance(sdk, dict) else None,
        "contexts": _free_form(event, "contexts", dict),
        "tags": _free_form(event, "tags", list | dict),
    }


def _free_form(event: Node, key: str, kinds: type | UnionType) -> object | None:
    """A metadata value copied as sent, unless it serializes to more than
    `MAX_METADATA_CHARS` (then dropped, and noted)."""
    raw = event.value.get(key)
    if not isinstance(raw, kinds):
        return None
    size = len(json.dumps(raw, ensure_ascii=False, default=str))
    if size > MAX_METADATA_CHARS:
        event.cuts.append(
            f"{event.ctx}: {event.at(key)} of {size:,} characters left out of metadata "
            f"(at most {MAX_METADATA_CHARS:,})"
        )
        return None
    return raw
