"""GitHub `issues` webhook → `Intake` (WEBHOOKS.md §6).

Only the text is taken: the markdown body is kept as written (traces sit in ``` fences
and are parsed later from `report.text`), so `traces` is always empty. An issue carries no
ref or SHA of its own; the commit or release its body states as a field (an issue
form's `### Version`, a `Commit: …` line) is the report's (`intake.stated`).
"""

from __future__ import annotations

from dataclasses import replace

from diagnoser.constants import MAX_LABELS
from diagnoser.intake.payloads._fields import Cap, root
from diagnoser.intake.payloads._render import clip, join_text, make_report
from diagnoser.intake.payloads.errors import IntakeError
from diagnoser.intake.payloads.result import Intake
from diagnoser.intake.report import Source
from diagnoser.intake.stated import stated_revision

ACCEPTED_ACTIONS = ("opened", "edited", "reopened")
"""Actions whose issue text is worth diagnosing; closing, labelling etc. are not."""
LABELS = Cap(MAX_LABELS, "labels", "the first")


def from_github(payload: object) -> Intake:
    """One `X-GitHub-Event: issues` body, or a `check_run` one (it holds a `check_run`)."""
    if isinstance(payload, dict) and isinstance(payload.get("check_run"), dict):
        return _from_check_run(payload)
    top = root(payload, "github issues")
    action = top.required_text("action")
    ctx = f"github issues {action}"
    if action not in ACCEPTED_ACTIONS:
        raise IntakeError(
            f"{ctx}: unsupported action (expected one of {', '.join(ACCEPTED_ACTIONS)})",
            field="action",
        )
    issue = replace(top, ctx=ctx).child("issue")
    title = issue.required_text("title")
    body = issue.value.get("body")
    if body is not None and not isinstance(body, str):
        raise issue.fail("body", "expected a string at")
    labels = [label.text("name") for label in issue.children("labels", LABELS)]
    user = issue.maybe_child("user")
    repository = top.maybe_child("repository")
    stated = stated_revision(body or "")
    report = make_report(
        issue,
        text=join_text([f"# {title}" if title.strip() else None, body]),
        source=Source.GITHUB,
        text_field=issue.at("body"),
        title=clip(title),
        url=issue.text("html_url"),
        commit=stated.commit,
        release=stated.release,
        metadata={
            "provider": "github",
            "action": action,
            "number": issue.integer("number"),
            "labels": [name for name in labels if name],
            "author": user.text("login") if user else None,
            "repository": repository.text("full_name") if repository else None,
            "state": issue.text("state"),
        },
    )
    return Intake(report=report, traces=(), truncated=tuple(issue.cuts))


def _from_check_run(payload: object) -> Intake:
    """A failed CI check: its name and output (title, summary, text: where a CI puts the
    failing test and its traceback), at the commit it ran on (`head_sha`)."""
    top = root(payload, "github check_run")
    run = replace(top, ctx="github check_run").child("check_run")
    name = run.text("name") or "check"
    output = run.maybe_child("output")
    parts = [output.text(key) for key in ("title", "summary", "text")] if output else []
    repository = top.maybe_child("repository")
    report = make_report(
        run,
        text=join_text([f"# {name} failed ({run.text('conclusion') or 'failure'})", *parts]),
        source=Source.CRASH_LOG,
        text_field=run.at("output"),
        title=clip(f"{name} failed"),
        url=run.text("html_url"),
        commit=run.text("head_sha"),
        metadata={
            "provider": "github",
            "event": "check_run",
            "conclusion": run.text("conclusion"),
            "repository": repository.text("full_name") if repository else None,
        },
    )
    return Intake(report=report, traces=(), truncated=tuple(run.cuts))
