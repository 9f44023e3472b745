"""Firebase Crashlytics alert → `Intake` (WEBHOOKS.md §3). Alerts carry no frames.

Accepts the AlertData body (`{createTime, endTime, payload:{issue:{…}}}`, as Eventarc
delivers it in binary mode or a forwarder re-posts it) and the CloudEvents structured
form (`{type, alerttype, appid, data: AlertData}`). The platform shows only in `appid`
(`1:…:android:…`). A stability digest has `trendingIssues[]` instead of one `issue`.
"""

from __future__ import annotations

from dataclasses import replace

from diagnoser.intake.payloads._fields import Node, root
from diagnoser.intake.payloads._render import join_text, make_report, require
from diagnoser.intake.payloads.errors import IntakeError
from diagnoser.intake.payloads.result import Intake
from diagnoser.intake.report import Source

PLATFORMS = ("android", "ios", "web")
"""The platform segment of a Firebase app id."""


def from_crashlytics(payload: object) -> Intake:
    """One Crashlytics alert (AlertData body or a structured CloudEvent)."""
    top = root(payload, "crashlytics")
    alert_type = top.text("alerttype")
    ctx = f"crashlytics {alert_type}" if alert_type else "crashlytics"
    node = replace(top, ctx=ctx)
    data = node.child("data") if node.has("data") and not node.has("payload") else node
    body = data.child("payload")
    issue = body.maybe_child("issue")
    if issue is not None:
        title, subtitle = issue.text("title"), issue.text("subtitle")
        text = join_text([title, subtitle])
        version = issue.label("appVersion")
        field = issue.at("title")
    elif body.has("trendingIssues"):
        title, subtitle, version = "Crashlytics stability digest", None, None
        trending = _trending(body)
        require(trending, body, body.at("trendingIssues"), "title or subtitle in trendingIssues")
        text = join_text([title, *trending])
        field = body.at("trendingIssues")
    else:
        raise body.fail("issue", "missing")
    app_id = top.text("appid")
    report = make_report(
        body,
        text=text,
        source=Source.CRASHLYTICS,
        text_field=field,
        title=title,
        platform=_platform(app_id),
        app_version=version,
        metadata={
            "provider": "crashlytics",
            "alert_type": alert_type,
            "app_id": app_id,
            "issue_id": issue.label("id") if issue else None,
            "subtitle": subtitle,
            "payload_type": body.text("@type"),
            "create_time": data.text("createTime"),
            "crash_count": body.label("crashCount"),
            "crash_percentage": body.label("crashPercentage"),
            "first_version": body.label("firstVersion"),
        },
    )
    return Intake(report=report, traces=(), truncated=tuple(body.cuts))


def _trending(body: Node) -> list[str]:
    lines = []
    for entry in body.children("trendingIssues"):
        issue = entry.maybe_child("issue")
        if issue is None:
            raise IntakeError(f"{body.ctx}: missing {entry.at('issue')}", field=entry.at("issue"))
        described = " — ".join(p for p in (issue.text("title"), issue.text("subtitle")) if p)
        if not described:
            continue  # an entry without a title or subtitle names nothing
        count = entry.label("eventCount")
        lines.append(f"- {described}" + (f" ({count} events)" if count else ""))
    return lines


def _platform(app_id: str | None) -> str | None:
    parts = app_id.split(":") if app_id else []
    return next((part for part in parts if part in PLATFORMS), None)
