from __future__ import annotations

from typing import Any

import pytest

from diagnoser.intake.payloads import IntakeError, from_standard
from diagnoser.intake.report import Source
from tests.diagnoser.intake.payloads._fixtures import load, load_reference


def test_text_is_kept_verbatim_for_the_trace_parsers() -> None:
    payload = load_reference("standardwebhooks_bug.reported.json")
    intake = from_standard(payload)
    assert intake.traces == ()
    assert intake.report.source is Source.WEBHOOK
    assert intake.report.text == payload["data"]["text"]
    assert intake.report.title == "NullPointerException in CheckoutActivity"
    assert intake.report.app_version == "2.3.1"
    assert intake.report.metadata == {
        "provider": "standard_webhooks",
        "type": "bug.reported",
        "timestamp": "2024-05-02T17:41:36Z",
        "origin": "custom-crash-relay",
    }


def test_message_and_stack_are_joined() -> None:
    intake = from_standard(load("standard_crash_message_stack.json"))
    assert intake.report.text == (
        "thread 'main' panicked at src/cart.rs:82:9:\nattempt to divide by zero\n\n"
        "stack backtrace:\n   0: shop::cart::average\n             at ./src/cart.rs:82:9\n"
        "   1: shop::main\n             at ./src/main.rs:14:5"
    )
    assert intake.report.platform == "rust"
    assert intake.report.app_version == "0.9.2"
    assert intake.report.url == "https://relay.example.com/crashes/8812"


def test_rating_passes_through() -> None:
    intake = from_standard({"type": "review", "data": {"text": "meh", "rating": 2}})
    assert intake.report.rating == 2


BROKEN: list[tuple[Any, str]] = [
    ([], ""),
    ({"data": {"text": "x"}}, "type"),
    ({"type": "bug.reported"}, "data"),
    ({"type": "bug.reported", "data": "x"}, "data"),
    ({"type": "bug.reported", "data": {}}, "data.text"),
    ({"type": "bug.reported", "data": {"title": "only a title"}}, "data.text"),
    ({"type": "bug.reported", "data": {"text": "x", "rating": 9}}, "data.rating"),
]


@pytest.mark.parametrize(("payload", "field"), BROKEN)
def test_broken_payloads_name_the_field(payload: Any, field: str) -> None:
    with pytest.raises(IntakeError) as caught:
        from_standard(payload)
    assert caught.value.field == field
    assert str(caught.value).startswith("webhook")
