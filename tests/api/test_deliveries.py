"""Delivery ids, event names and act/ignore decisions, on inline bodies and the reference
samples; and that the provider handed on is one intake parses the body with."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from api import deliveries
from api.deliveries import (
    BUGSNAG_TRIGGERS,
    MAX_DELIVERY_ID_CHARS,
    ROLLBAR_EVENTS,
    ROUTE_PROVIDERS,
    Delivery,
    body_id,
    inspect,
)
from diagnoser.intake.body import load_json
from diagnoser.intake.payloads import PROVIDERS, IntakeError, from_payload

REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference" / "webhooks"
"""The shared reference samples (../shared beside the repository, as in CI); tests using
them skip where it is absent."""

REQUEST_ID = "88a4a9ad9f3d4e7b8c1f6c2a5e0b7d13"
GITHUB_DELIVERY = "72d3162e-cc78-11e3-81ab-4c9367dc0958"


def body(value: Any) -> bytes:
    return json.dumps(value).encode()


def sentry_headers(resource: str | None) -> dict[str, str]:
    headers = {"Request-ID": REQUEST_ID, "Sentry-Hook-Timestamp": "1714671696"}
    if resource is not None:
        headers["Sentry-Hook-Resource"] = resource
    return headers


def github_headers(event: str | None) -> dict[str, str]:
    headers = {"x-github-delivery": GITHUB_DELIVERY}
    if event is not None:
        headers["x-github-event"] = event
    return headers


SENTRY_EVENT = {
    "exception": {
        "values": [
            {
                "type": "ZeroDivisionError",
                "value": "division by zero",
                "stacktrace": {
                    "frames": [{"filename": "shop/cart.py", "function": "total", "lineno": 42}]
                },
            }
        ]
    },
    "platform": "python",
}
SENTRY_ISSUE = {
    "id": "1170820242",
    "title": "ZeroDivisionError: division by zero",
    "culprit": "shop.cart in total",
    "platform": "python",
}
GITHUB_ISSUE = {
    "title": "Crash on checkout",
    "number": 7,
    "body": '```\nTraceback (most recent call last):\n  File "a.py", line 1, in f\n'
    "ValueError: x\n```",
}
BUGSNAG_ERROR = {
    "exceptionClass": "NullPointerException",
    "message": "boom",
    "stackTrace": [{"file": "Checkout.kt", "lineNumber": 88, "method": "pay", "inProject": True}],
}
ROLLBAR_ITEM = {
    "item": {
        "id": 272716944,
        "title": "ZeroDivisionError: division by zero",
        "environment": "production",
        "level": 40,
        "last_occurrence": {"body": {"message": {"body": "division by zero"}}},
    }
}
APPFOLLOW = {
    "text": "Shop\nApp Store, Acme\n★☆☆☆☆ USA\n*Crashes*\nIt crashes on pay.\n"
    "_by_ *Ann* _for v2.3.1_"
}


def assert_intake_accepts(delivery: Delivery, raw: bytes, headers: dict[str, str]) -> None:
    """The seam: the provider `inspect` chose parses the body in intake."""
    assert delivery.provider in PROVIDERS
    resource = headers.get("Sentry-Hook-Resource") if delivery.provider == "sentry" else None
    assert from_payload(delivery.provider, load_json(raw), resource=resource)


# --- routes and providers --------------------------------------------------------------


def test_every_route_maps_to_an_intake_provider() -> None:
    assert set(ROUTE_PROVIDERS) == {"sentry", "github", "bugsnag", "rollbar", "standard", "reviews"}
    assert set(ROUTE_PROVIDERS.values()) <= set(PROVIDERS)


def test_unknown_route_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown webhook route"):
        inspect("gitlab", {}, b"{}")


# --- Sentry ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("resource", "payload", "event"),
    [
        (
            "event_alert",
            {"action": "triggered", "data": {"event": SENTRY_EVENT}},
            "event_alert.triggered",
        ),
        ("error", {"action": "created", "data": {"error": SENTRY_EVENT}}, "error.created"),
        ("issue", {"action": "created", "data": {"issue": SENTRY_ISSUE}}, "issue.created"),
    ],
)
def test_sentry_acts_on_bug_resources(resource: str, payload: Any, event: str) -> None:
    raw, headers = body(payload), sentry_headers(resource)
    delivery = inspect("sentry", headers, raw)
    assert delivery == Delivery("sentry", REQUEST_ID, event, True)
    assert_intake_accepts(delivery, raw, headers)


@pytest.mark.parametrize("action", ["resolved", "assigned", "archived", "unresolved"])
def test_sentry_ignores_issue_triage(action: str) -> None:
    raw = body({"action": action, "data": {"issue": SENTRY_ISSUE}})
    delivery = inspect("sentry", sentry_headers("issue"), raw)
    assert not delivery.act
    assert delivery.event == f"issue.{action}"
    assert delivery.reason == f"sentry 'issue.{action}' is not acted on"


@pytest.mark.parametrize(
    "resource", ["installation", "metric_alert", "comment", "seer", "preprod-artifacts"]
)
def test_sentry_ignores_other_resources_without_reading_the_body(resource: str) -> None:
    delivery = inspect("sentry", sentry_headers(resource), b"not json at all")
    assert delivery == Delivery(
        "sentry", REQUEST_ID, resource, False, f"sentry resource {resource!r} is not acted on"
    )


def test_sentry_undecidable_deliveries_are_acted_on() -> None:
    assert inspect("sentry", sentry_headers("issue"), b"<html>").act
    assert inspect("sentry", sentry_headers("issue"), body({"data": {}})).act
    no_resource = inspect("sentry", sentry_headers(None), body({"event": SENTRY_EVENT}))
    assert no_resource == Delivery("sentry", REQUEST_ID, "", True)


def test_sentry_without_request_id_uses_the_body_hash() -> None:
    raw = body({"action": "triggered", "data": {"event": SENTRY_EVENT}})
    delivery = inspect("sentry", {"sentry-hook-resource": "event_alert"}, raw)
    assert delivery.delivery_id == "sha256:" + hashlib.sha256(raw).hexdigest()


# --- GitHub ----------------------------------------------------------------------------


@pytest.mark.parametrize("action", ["opened", "reopened"])
def test_github_acts_on_opened_and_reopened_issues(action: str) -> None:
    raw, headers = body({"action": action, "issue": GITHUB_ISSUE}), github_headers("issues")
    delivery = inspect("github", headers, raw)
    assert delivery == Delivery("github", GITHUB_DELIVERY, f"issues.{action}", True)
    assert_intake_accepts(delivery, raw, headers)


@pytest.mark.parametrize("action", ["edited", "closed", "labeled", "assigned", "deleted"])
def test_github_ignores_other_issue_actions(action: str) -> None:
    raw = body({"action": action, "issue": GITHUB_ISSUE})
    delivery = inspect("github", github_headers("issues"), raw)
    assert not delivery.act
    assert delivery.reason == f"github 'issues.{action}' is not acted on"


def test_github_ping_and_other_events_are_ignored() -> None:
    ping = inspect("github", github_headers("ping"), body({"zen": "Design for failure."}))
    assert ping == Delivery("github", GITHUB_DELIVERY, "ping", False, "ping")
    push = inspect("github", github_headers("push"), body({"ref": "refs/heads/main"}))
    assert push == Delivery(
        "github", GITHUB_DELIVERY, "push", False, "github event 'push' is not acted on"
    )
    comment = inspect("github", github_headers("issue_comment"), body({"action": "created"}))
    assert not comment.act


CHECK_RUN = {
    "name": "tests", "head_sha": "0123456789abcdef0123456789abcdef01234567",
    "output": {"title": "1 failed", "summary": "FAILED tests/test_app.py::test_divide"},
}  # fmt: skip


@pytest.mark.parametrize("conclusion", ["failure", "timed_out"])
def test_github_acts_on_a_check_run_that_failed(conclusion: str) -> None:
    run = CHECK_RUN | {"status": "completed", "conclusion": conclusion}
    raw, headers = body({"action": "completed", "check_run": run}), github_headers("check_run")
    delivery = inspect("github", headers, raw)
    assert delivery == Delivery("github", GITHUB_DELIVERY, "check_run.completed", True)
    assert_intake_accepts(delivery, raw, headers)


@pytest.mark.parametrize(
    ("action", "conclusion", "reason"),
    [
        ("completed", "success", "a check run that ended 'success' is not acted on"),
        ("completed", "cancelled", "a check run that ended 'cancelled' is not acted on"),
        ("created", None, "github 'check_run.created' is not acted on"),
        ("rerequested", None, "github 'check_run.rerequested' is not acted on"),
    ],
)
def test_github_ignores_a_check_run_that_did_not_fail(
    action: str, conclusion: str | None, reason: str
) -> None:
    raw = body({"action": action, "check_run": CHECK_RUN | {"conclusion": conclusion}})
    delivery = inspect("github", github_headers("check_run"), raw)
    assert not delivery.act and delivery.reason == reason


def test_github_undecidable_deliveries_are_acted_on() -> None:
    assert inspect("github", github_headers("issues"), b"\xff\xfe not json").act
    assert inspect("github", github_headers("issues"), body({"issue": GITHUB_ISSUE})).act
    no_event = inspect("github", github_headers(None), body({"action": "opened"}))
    assert no_event == Delivery("github", GITHUB_DELIVERY, "", True)


# --- Bugsnag and Rollbar ---------------------------------------------------------------


@pytest.mark.parametrize("trigger", sorted(BUGSNAG_TRIGGERS))
def test_bugsnag_acts_on_error_triggers(trigger: str) -> None:
    raw = body({"trigger": {"type": trigger}, "error": BUGSNAG_ERROR})
    delivery = inspect("bugsnag", {}, raw)
    assert delivery == Delivery("bugsnag", body_id(raw), trigger, True)
    assert_intake_accepts(delivery, raw, {})


@pytest.mark.parametrize(
    "trigger",
    [
        "projectSpiking",
        "comment",
        "release",
        "errorStateManualChange",
        "projectApproachingRateLimit",
    ],
)
def test_bugsnag_ignores_other_triggers(trigger: str) -> None:
    delivery = inspect("bugsnag", {}, body({"trigger": {"type": trigger}}))
    assert not delivery.act
    assert delivery.reason == f"bugsnag event {trigger!r} is not acted on"


def test_bugsnag_undecidable_deliveries_are_acted_on() -> None:
    assert inspect("bugsnag", {}, b"plain text").act
    assert inspect("bugsnag", {}, body({"error": BUGSNAG_ERROR})).act
    assert inspect("bugsnag", {}, body({"trigger": "firstException"})).act


@pytest.mark.parametrize("event", sorted(ROLLBAR_EVENTS))
def test_rollbar_acts_on_item_events(event: str) -> None:
    raw = body({"event_name": event, "data": ROLLBAR_ITEM})
    delivery = inspect("rollbar", {}, raw)
    assert delivery == Delivery("rollbar", body_id(raw), event, True)


@pytest.mark.parametrize("event", ["resolved_item", "deploy", "test"])
def test_rollbar_ignores_the_rest(event: str) -> None:
    delivery = inspect("rollbar", {}, body({"event_name": event, "data": {}}))
    assert not delivery.act
    assert delivery.reason == f"rollbar event {event!r} is not acted on"


def test_rollbar_undecidable_deliveries_are_acted_on() -> None:
    assert inspect("rollbar", {}, b"<xml/>").act
    assert inspect("rollbar", {}, body({"data": ROLLBAR_ITEM})).act


def test_body_id_is_the_same_for_a_retry_and_differs_otherwise() -> None:
    raw = body({"event_name": "new_item", "data": ROLLBAR_ITEM})
    first, retry = inspect("rollbar", {}, raw), inspect("rollbar", {}, bytes(raw))
    assert first.delivery_id == retry.delivery_id == "sha256:" + hashlib.sha256(raw).hexdigest()
    other = inspect("rollbar", {}, raw.replace(b"272716944", b"272716945"))
    assert other.delivery_id != first.delivery_id


# --- Standard Webhooks and reviews -----------------------------------------------------


def test_standard_acts_on_every_type_with_webhook_id() -> None:
    headers = {"Webhook-Id": "msg_2bT6", "webhook-timestamp": "1714671696"}
    raw = body({"type": "bug.reported", "data": {"text": "TypeError: x is undefined"}})
    delivery = inspect("standard", headers, raw)
    assert delivery == Delivery("standard", "msg_2bT6", "bug.reported", True)
    assert_intake_accepts(delivery, raw, headers)
    other = inspect("standard", headers, body({"type": "anything.else", "data": {}}))
    assert other.act
    assert other.event == "anything.else"
    assert inspect("standard", headers, b"not json") == Delivery("standard", "msg_2bT6", "", True)


def test_an_over_long_id_header_is_hashed() -> None:
    long_id = "m" * (MAX_DELIVERY_ID_CHARS + 1)
    delivery = inspect("standard", {"webhook-id": long_id}, b"{}")
    assert delivery.delivery_id == "sha256:" + hashlib.sha256(long_id.encode()).hexdigest()
    fits = "m" * MAX_DELIVERY_ID_CHARS
    assert inspect("standard", {"webhook-id": fits}, b"{}").delivery_id == fits


@pytest.mark.parametrize(
    ("payload", "provider"),
    [
        (APPFOLLOW, "appfollow"),
        ({"attachments": [{"title": "1★ review", "text": "Crashes on pay."}]}, "appfollow"),
        (
            {
                "reviews": [
                    {
                        "reviewId": "gp:1",
                        "comments": [
                            {"userComment": {"text": "Crash\tIt crashes on pay.", "starRating": 1}}
                        ],
                    }
                ]
            },
            "google_play",
        ),
        (
            {
                "data": [
                    {
                        "type": "customerReviews",
                        "id": "1",
                        "attributes": {"rating": 1, "title": "Crash", "body": "It crashes on pay."},
                    }
                ]
            },
            "app_store",
        ),
    ],
)
def test_reviews_are_acted_on_with_the_provider_of_their_shape(payload: Any, provider: str) -> None:
    raw = body(payload)
    delivery = inspect("reviews", {}, raw)
    assert delivery == Delivery(provider, body_id(raw), "review", True)
    assert_intake_accepts(delivery, raw, {})


def test_reviews_that_are_not_json_go_to_the_text_adapter() -> None:
    assert inspect("reviews", {}, b"1 star, crashes") == Delivery(
        "appfollow", body_id(b"1 star, crashes"), "review", True
    )


def test_hostile_bodies_never_raise() -> None:
    for raw in (b"[" * 100_000, b'{"action": ' + b"9" * 5_000 + b"}", b"\x00" * 1000, b""):
        for route in ROUTE_PROVIDERS:
            assert inspect(route, sentry_headers("issue") | github_headers("issues"), raw).act


# --- reading one field of a big body ----------------------------------------------------

PEEKS = [
    ("github", b'{"action": "opened", "issue": {"action": "closed"}}'),  # nested: not top-level
    ("github", b'{"action": "opened", "x": 1, "action": "closed"}'),  # the parse keeps the last
    ("github", b'{"action": "opened", "\\u0061ction": "closed"}'),  # the same key, escaped
    ("github", b'{"action": "opened", "x": "\\u00e9"}'),  # an escape that cannot spell it
    ("github", b'{"action": "closed", "issue": {}}'),  # ignored: confirmed by the parse
    ("github", b'{"action": "closed", "issue": '),  # ... which says it is not JSON: acted on
    ("github", b'{"action": "opened", "issue": '),  # not JSON, acted on either way
    ("github", b'\xef\xbb\xbf \n{ "action" : "reopened" }'),
    ("github", b'{"issue": {}, "action": "closed"}'),  # not first: parsed
    ("github", b'{"action": "op\\u0065ned"}'),  # an escaped value: parsed
    ("sentry", b'{"action": "resolved", "data": {}}'),
    ("sentry", b'{"action": "created", "data": {"action": "resolved"}}'),
    ("rollbar", b'{"event_name": "new_item", "data": {}}'),
    ("rollbar", b'{"event_name": "new_item", "event_name": "deploy"}'),
    ("rollbar", b'{"event_name": "deploy", "data": {}}'),
    ("standard", b'{"type": "bug.reported", "data": {}}'),
]


@pytest.mark.parametrize(("route", "raw"), PEEKS)
def test_reading_a_field_from_the_raw_body_decides_as_the_parse(
    route: str, raw: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    headers = sentry_headers("issue") | github_headers("issues") | {"webhook-id": "msg_1"}
    peeked = inspect(route, headers, raw)
    monkeypatch.setattr(deliveries, "_peek", lambda *_: None)
    parsed = inspect(route, headers, raw)
    assert peeked.act == parsed.act and peeked.reason == parsed.reason
    try:
        load_json(raw)
    except IntakeError:
        return  # not JSON: only the label may differ (the peek read one)
    assert peeked == parsed


def test_a_big_body_is_decided_without_parsing_it(monkeypatch: pytest.MonkeyPatch) -> None:
    issue = {**GITHUB_ISSUE, "body": str(GITHUB_ISSUE["body"]) + "\nlog line\n" * 200_000}
    raw = body({"action": "opened", "issue": issue})
    monkeypatch.setattr(deliveries, "load_json", _unparsed)
    delivery = inspect("github", github_headers("issues"), raw)
    assert delivery == Delivery("github", GITHUB_DELIVERY, "issues.opened", True)
    rollbar = body({"event_name": "new_item", "data": {"item": {"title": "x" * 2_000_000}}})
    assert inspect("rollbar", {}, rollbar).act


def _unparsed(*_: object, **__: object) -> object:
    raise AssertionError("the body was parsed")


# --- the reference samples -------------------------------------------------------------

SAMPLES = [
    ("sentry_issue.created.json", "sentry", sentry_headers("issue"), "issue.created"),
    ("sentry_error.created.json", "sentry", sentry_headers("error"), "error.created"),
    ("github_issues.opened.json", "github", github_headers("issues"), "issues.opened"),
    ("bugsnag_firstException.json", "bugsnag", {}, "firstException"),
    ("rollbar_new_item.json", "rollbar", {}, "new_item"),
    ("standardwebhooks_bug.reported.json", "standard", {"webhook-id": "msg_1"}, "bug.reported"),
    ("googleplay_reviews_poll.json", "reviews", {}, "review"),
    ("appstoreconnect_customerReviews_poll.json", "reviews", {}, "review"),
]


@pytest.mark.parametrize(("name", "route", "headers", "event"), SAMPLES)
def test_reference_samples_are_acted_on(
    name: str, route: str, headers: dict[str, str], event: str
) -> None:
    path = REFERENCE / name
    if not path.exists():
        pytest.skip(f"reference sample {name} not available")
    raw = path.read_bytes()
    delivery = inspect(route, headers, raw)
    assert delivery.act
    assert delivery.event == event
    assert delivery.delivery_id == (
        headers.get("Request-ID")
        or headers.get("x-github-delivery")
        or headers.get("webhook-id")
        or body_id(raw)
    )
    assert_intake_accepts(delivery, raw, headers)
