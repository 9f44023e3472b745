from __future__ import annotations

from typing import Any

import pytest

from diagnoser.intake.payloads import IntakeError, from_github
from diagnoser.intake.report import Source
from tests.diagnoser.intake.payloads._fixtures import load, load_reference


def test_opened_issue_keeps_markdown_body_verbatim() -> None:
    payload = load_reference("github_issues.opened.json")
    intake = from_github(payload)
    report = intake.report
    assert intake.traces == ()
    assert report.source is Source.GITHUB
    assert report.title == "App crashes on launch after 1.4.0"
    assert report.text == "# App crashes on launch after 1.4.0\n\n" + payload["issue"]["body"]
    assert report.url == "https://github.com/Codertocat/Hello-World/issues/1"
    assert report.metadata["labels"] == ["bug"]
    assert report.metadata["number"] == 1
    assert report.metadata["repository"] == "Codertocat/Hello-World"
    assert report.metadata["author"] == "Codertocat"


def test_edited_issue_with_null_body_uses_the_title() -> None:
    intake = from_github(load("github_issue_edited_no_body.json"))
    assert intake.report.text == "# Crash when the cart is empty"
    assert intake.report.metadata["labels"] == ["bug", "area: checkout"]
    assert intake.report.metadata["action"] == "edited"


def test_reopened_is_accepted() -> None:
    intake = from_github({"action": "reopened", "issue": {"title": "t", "body": "b"}})
    assert intake.report.text == "# t\n\nb"


BROKEN: list[tuple[Any, str, str]] = [
    ([], "", "github issues: the payload must be a JSON object"),
    ({}, "action", "github issues: missing action"),
    ({"action": 1}, "action", "github issues: expected a string at action"),
    ({"action": "closed", "issue": {}}, "action", "github issues closed: unsupported action"),
    ({"action": "opened"}, "issue", "github issues opened: missing issue"),
    ({"action": "opened", "issue": {}}, "issue.title", "github issues opened: missing issue.title"),
    ({"action": "opened", "issue": {"title": "t", "body": 5}}, "issue.body", "expected a string"),
    ({"action": "opened", "issue": {"title": "", "body": ""}}, "issue.body", "no report text"),
    ({"action": "opened", "issue": {"title": "t", "labels": [1]}}, "issue.labels[0]", "object"),
]


@pytest.mark.parametrize(("payload", "field", "message"), BROKEN)
def test_broken_payloads_name_the_field(payload: Any, field: str, message: str) -> None:
    with pytest.raises(IntakeError) as caught:
        from_github(payload)
    assert caught.value.field == field
    assert message in str(caught.value)


def test_labels_and_an_oversized_body_are_cut_and_noted() -> None:
    payload = {
        "action": "opened",
        "issue": {
            "title": "t",
            "body": "x" * 2_500_000,
            "labels": [{"name": f"l{i}"} for i in range(150)],
        },
    }
    intake = from_github(payload)
    assert len(intake.report.text) == 2_000_000
    assert intake.report.metadata["labels"][-1] == "l99"
    assert intake.truncated == (
        "github issues opened: 150 labels in issue.labels; kept the first 100",
        "github issues opened: report text of 2,500,005 characters; kept the first 2,000,000",
    )


def test_a_failed_check_run_is_its_output_at_its_commit() -> None:
    sha = "0123456789abcdef0123456789abcdef01234567"
    intake = from_github({
        "action": "completed", "repository": {"full_name": "acme/app"},
        "check_run": {
            "name": "pytest", "head_sha": sha, "conclusion": "failure",
            "html_url": "https://github.com/acme/app/runs/1",
            "output": {"title": "1 failed", "summary": "FAILED tests/test_app.py::test_divide",
                       "text": "ZeroDivisionError: division by zero"},
        },
    })  # fmt: skip
    report = intake.report
    assert report.commit == sha and report.source is Source.CRASH_LOG
    assert report.text.startswith("# pytest failed (failure)")
    assert "FAILED tests/test_app.py::test_divide" in report.text
    assert "ZeroDivisionError" in report.text
    assert report.metadata["event"] == "check_run"
