from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnoser.errors import DiagnoserError
from diagnoser.intake import payloads
from diagnoser.intake.payloads import PROVIDERS, Intake, IntakeError, from_payload
from diagnoser.intake.report import Source
from tests.diagnoser.intake.payloads._fixtures import PROVIDER_CASES, load


def test_every_provider_is_covered() -> None:
    assert sorted(PROVIDERS) == sorted(name for name, *_ in PROVIDER_CASES)


@pytest.mark.parametrize(("provider", "fixture", "source", "count"), PROVIDER_CASES)
def test_dispatch(provider: str, fixture: str, source: Source, count: int) -> None:
    intakes = from_payload(provider, load(fixture))
    assert len(intakes) == count
    assert all(isinstance(i, Intake) and i.report.source is source for i in intakes)


def test_sentry_resource_is_passed_through() -> None:
    with pytest.raises(IntakeError, match=r"^sentry issue: missing data\.issue$"):
        from_payload("sentry", load("sentry_event_alert_chained.json"), resource="issue")


@pytest.mark.parametrize("payload", ["text", 3, None, 2.5, True])
def test_payload_must_be_json_object_or_array(payload: Any) -> None:
    with pytest.raises(IntakeError, match="must be a JSON object or array"):
        from_payload("sentry", payload)


def test_unknown_provider() -> None:
    with pytest.raises(IntakeError) as caught:
        from_payload("jira", {})
    assert caught.value.field == "provider"
    assert "unknown provider 'jira'" in str(caught.value)


def test_intake_error_is_a_diagnoser_value_error() -> None:
    assert issubclass(IntakeError, DiagnoserError)
    assert issubclass(IntakeError, ValueError)


JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
KEYS = st.sampled_from(
    [
        "data",
        "event",
        "error",
        "issue",
        "exception",
        "values",
        "stacktrace",
        "frames",
        "threads",
        "crashed",
        "item",
        "occurrence",
        "last_occurrence",
        "body",
        "trace",
        "trace_chain",
        "message",
        "crash_report",
        "raw",
        "stackTrace",
        "action",
        "title",
        "text",
        "type",
        "payload",
        "reviews",
        "comments",
        "userComment",
        "starRating",
        "attributes",
        "rating",
        "lineno",
        "in_app",
        "release",
        "entries",
        "labels",
        "trendingIssues",
        "logentry",
        "metadata",
        "contexts",
        "app",
        "exceptionClass",
    ]
) | st.text(max_size=8)
JSON = st.recursive(
    JSON_SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(KEYS, children, max_size=6),
    max_leaves=30,
)
"""Random JSON, biased to the keys the adapters look for so it reaches deep code."""


@settings(deadline=None, max_examples=200)
@given(
    provider=st.sampled_from(PROVIDERS),
    payload=JSON,
    resource=st.none() | st.sampled_from(["event_alert", "error", "issue", "comment"]),
)
def test_random_json_gives_intakes_or_intake_error(
    provider: str, payload: object, resource: str | None
) -> None:
    try:
        intakes = from_payload(provider, payload, resource=resource)
    except IntakeError as exc:
        assert str(exc)
        return
    assert all(i.report.text.strip() for i in intakes)


@settings(deadline=None, max_examples=200)
@given(
    provider=st.sampled_from(PROVIDERS),
    data=st.dictionaries(
        st.sampled_from(["data", "event", "error", "item", "issue", "payload", "reviews"]),
        JSON,
        max_size=3,
    ),
)
def test_random_envelopes_give_intakes_or_intake_error(provider: str, data: object) -> None:
    for payload in (data, {"data": data}, {"action": "opened", "issue": data}):
        with contextlib.suppress(IntakeError):
            from_payload(provider, payload)


def _mutate(value: Any, data: st.DataObject) -> Any:
    """`value` with one nested value (chosen by `data`) replaced by random JSON."""
    if isinstance(value, dict) and value and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(value)))
        return {**value, key: _mutate(value[key], data)}
    if isinstance(value, list) and value and data.draw(st.booleans()):
        index = data.draw(st.integers(0, len(value) - 1))
        return [*value[:index], _mutate(value[index], data), *value[index + 1 :]]
    return data.draw(JSON)


@settings(deadline=None, max_examples=200)
@given(case=st.sampled_from(PROVIDER_CASES), data=st.data())
def test_mutated_fixtures_give_intakes_or_intake_error(
    case: tuple[str, str, Source, int], data: st.DataObject
) -> None:
    provider, fixture, *_ = case
    payload = load(fixture)
    for _ in range(data.draw(st.integers(1, 3))):
        payload = _mutate(payload, data)
    try:
        intakes = from_payload(provider, payload)
    except IntakeError as exc:
        assert exc.field is not None
        return
    assert all(i.report.text.strip() for i in intakes)


def test_every_provider_the_cli_lists_has_an_adapter_and_no_adapter_is_unlisted() -> None:
    """The CLI names the providers without importing the adapters (`diagnoser.constants`)."""
    assert set(payloads.PROVIDERS) == {"sentry", *payloads._ONE, *payloads._MANY}
    assert len(payloads.PROVIDERS) == len(set(payloads.PROVIDERS))
