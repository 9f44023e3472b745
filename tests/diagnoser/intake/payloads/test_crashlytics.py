from __future__ import annotations

from typing import Any

import pytest

from diagnoser.intake.payloads import IntakeError, from_crashlytics
from diagnoser.intake.report import Source
from tests.diagnoser.intake.payloads._fixtures import load, load_reference


def test_alert_data_body() -> None:
    intake = from_crashlytics(load_reference("firebase_crashlytics_newFatalIssue.json"))
    assert intake.traces == ()
    report = intake.report
    assert report.source is Source.CRASHLYTICS
    assert report.title == "com.example.shop.CheckoutActivity.validateCoupon"
    assert report.text.startswith(
        "com.example.shop.CheckoutActivity.validateCoupon\n\njava.lang.NullPointerException - "
    )
    assert report.app_version == "2.3.1 (412)"
    assert report.platform is None  # the body alone does not say
    assert report.metadata["issue_id"] == "123456"


def test_structured_cloud_event_gives_platform_and_alert_type() -> None:
    intake = from_crashlytics(load("crashlytics_regression_cloudevent.json"))
    report = intake.report
    assert report.platform == "ios"
    assert report.app_version == "3.2.0 (518)"
    assert (
        report.text == "Cart.swift line 41 Cart.total.getter\n\nEXC_BAD_ACCESS KERN_INVALID_ADDRESS"
    )
    assert report.metadata["alert_type"] == "crashlytics.regression"


def test_stability_digest_lists_trending_issues() -> None:
    intake = from_crashlytics(load("crashlytics_stability_digest.json"))
    assert intake.report.text == (
        "Crashlytics stability digest\n\n"
        "- CheckoutActivity.validateCoupon — java.lang.NullPointerException (812 events)\n\n"
        "- ImageCache.load — Input dispatching timed out (95 events)"
    )


BROKEN: list[tuple[Any, str]] = [
    ([], ""),
    ({}, "payload"),
    ({"payload": []}, "payload"),
    ({"payload": {}}, "payload.issue"),
    ({"payload": {"issue": {}}}, "payload.issue.title"),
    ({"alerttype": "crashlytics.velocity", "data": {}}, "data.payload"),
    ({"payload": {"trendingIssues": [{}]}}, "payload.trendingIssues[0].issue"),
    ({"payload": {"trendingIssues": "x"}}, "payload.trendingIssues"),
]


@pytest.mark.parametrize(("payload", "field"), BROKEN)
def test_broken_payloads_name_the_field(payload: Any, field: str) -> None:
    with pytest.raises(IntakeError) as caught:
        from_crashlytics(payload)
    assert caught.value.field == field
    assert str(caught.value).startswith("crashlytics")


def test_a_digest_whose_issues_name_nothing_is_refused() -> None:
    payload = {"data": {"payload": {"trendingIssues": [{"issue": {"title": 1}}, {"issue": {}}]}}}
    with pytest.raises(IntakeError, match="nothing to diagnose") as caught:
        from_crashlytics(payload)
    assert caught.value.field == "data.payload.trendingIssues"
