from __future__ import annotations

from typing import Any

import pytest

from diagnoser.intake.payloads import IntakeError, from_sentry
from diagnoser.intake.report import Frame, FrameOrder, Source, TraceException, TraceFormat
from tests.diagnoser.intake.payloads._fixtures import load, load_reference


def test_event_alert_chain_is_oldest_cause_first_with_frames_innermost_last() -> None:
    intake = from_sentry(load("sentry_event_alert_chained.json"), resource="event_alert")
    report = intake.report
    assert report.source is Source.SENTRY
    assert report.title == "RuntimeError: checkout failed for order 17"
    assert report.app_version == "shop-api@2.4.1"
    assert report.platform == "python"
    assert report.url == (
        "https://acme.sentry.io/issues/1117540176/events/e4874d664c3540c1a32eab185f12c5ab/"
    )
    assert [t.exception for t in intake.traces] == [
        TraceException(type="KeyError", message="'sku'"),
        TraceException(type="ValueError", message="invalid cart item"),
        TraceException(type="RuntimeError", message="checkout failed for order 17"),
    ]
    assert all(t.format is TraceFormat.STRUCTURED for t in intake.traces)
    assert all(t.source_order is FrameOrder.OLDEST_FIRST for t in intake.traces)
    top = intake.traces[-1]
    assert [(f.file, f.line, f.function, f.in_app) for f in top.frames] == [
        ("flask/app.py", 867, "full_dispatch_request", False),
        ("flask/app.py", 852, "dispatch_request", False),
        ("shop/views.py", 58, "checkout", True),
    ]
    assert top.frames[-1].module == "shop.views"
    assert top.frames[-1].language == "python"
    assert report.metadata["issue_id"] == "1117540176"
    assert report.metadata["environment"] == "production"
    assert report.metadata["dist"] == "412"
    assert report.metadata["mechanism"] == "flask"
    assert report.metadata["handled"] is False


def test_event_alert_text_is_readable() -> None:
    text = from_sentry(load("sentry_event_alert_chained.json")).report.text
    assert text.startswith("RuntimeError: checkout failed for order 17\n\nCulprit: shop.views")
    assert "KeyError: 'sku'\n  Frames (most recent call last):\n" in text
    assert "  shop/views.py:58 in checkout [shop.views] (in app)" in text
    assert text.index("KeyError") < text.index("ValueError: invalid") < text.rindex("Runtime")
    assert "os: Linux 6.1.0" in text
    # Not in a runtime's own trace format: the text parsers must not find these frames again.
    assert 'File "' not in text
    assert "    at " not in text


def test_auto_detect_matches_explicit_resource() -> None:
    payload = load("sentry_event_alert_chained.json")
    assert from_sentry(payload).traces == from_sentry(payload, "event_alert").traces


def test_error_created_flat_exception_list_and_release_object() -> None:
    intake = from_sentry(load("sentry_error_flat_list.json"), resource="error")
    assert intake.report.app_version == "web@7.3.0"
    assert intake.report.platform == "javascript"
    (trace,) = intake.traces
    assert trace.exception == TraceException(
        type="TypeError", message="Cannot read properties of undefined (reading 'price')"
    )
    assert trace.frames[-1] == Frame(
        file="app/cart/Cart.tsx",
        line=9,
        column=33,
        function="total",
        in_app=True,
        language="javascript",
    )
    assert [f.in_app for f in trace.frames] == [False, True, True]
    assert intake.report.metadata["issue_id"] == "4401223"


def test_native_crash_takes_frames_from_the_crashed_thread() -> None:
    intake = from_sentry(load("sentry_native_threads.json"))
    (trace,) = intake.traces
    assert trace.exception == TraceException(
        type="EXC_BAD_ACCESS", message="KERN_INVALID_ADDRESS at 0x10"
    )
    assert [f.function for f in trace.frames] == [
        "start",
        "UIApplicationMain",
        "CheckoutViewController.payTapped(_:)",
        "Cart.total.getter",
    ]
    assert trace.frames[-1].file == "Cart.swift"
    assert trace.frames[-1].line == 41
    assert trace.frames[-1].in_app is True
    assert trace.frames[-1].language == "native"
    assert trace.frames[0].language == "cocoa"
    assert intake.report.app_version == "3.2.0"  # contexts.app, release being null
    assert "device: iPhone14,5" in intake.report.text


def test_issue_created_has_text_but_no_frames() -> None:
    intake = from_sentry(load_reference("sentry_issue.created.json"), resource="issue")
    assert intake.traces == ()
    assert intake.report.text == (
        "ReferenceError: blooopy is not defined\n\nCulprit: ?(runner)\n\nFile: /runner"
    )
    assert intake.report.url == "https://sentry.io/organizations/test-org/issues/1170820242/"
    assert intake.report.metadata["short_id"] == "FRONT-END-9"


def test_issue_with_missing_optional_fields() -> None:
    intake = from_sentry(load("sentry_issue_minimal.json"))
    assert intake.report.text == "<unlabeled event>"
    assert intake.report.platform == "go"
    assert intake.report.url is None
    assert intake.traces == ()


def test_legacy_plugin_top_level_event_stacktrace() -> None:
    intake = from_sentry(load_reference("sentry_legacy_plugin_event.json"))
    (trace,) = intake.traces
    assert trace.exception is None
    assert [f.function for f in trace.frames] == ["build_msg", "main"]
    assert intake.report.title == "This is an example Python exception"
    assert intake.report.url == (
        "https://nitk-46.sentry.io/issues/4218258981/?referrer=webhooks_plugin"
    )


def test_service_hook_with_api_entries_and_camel_case_frames() -> None:
    intake = from_sentry(load("sentry_service_hook.json"))
    (trace,) = intake.traces
    assert trace.exception == TraceException(type="ZeroDivisionError", message="division by zero")
    assert [(f.file, f.line, f.in_app) for f in trace.frames] == [
        ("billing/jobs.py", 12, True),
        ("billing/invoice.py", 40, True),
    ]
    assert intake.report.url == (
        "https://acme.sentry.io/issues/77/events/c1a0d6f6c8d74b43a5c0e0b1f2a3b4c5/"
    )
    assert intake.report.metadata["event_id"] == "c1a0d6f6c8d74b43a5c0e0b1f2a3b4c5"
    assert intake.report.metadata["resource"] == "service_hook"


def test_bare_schema_event() -> None:
    intake = from_sentry(load_reference("sentry_event_schema_chained_python.json"))
    assert [t.exception.type for t in intake.traces if t.exception] == ["KeyError", "ValueError"]
    assert intake.report.title == "checkout failed"


def test_huge_values_are_clipped_and_frames_capped() -> None:
    frames = [{"filename": f"f{i}.py", "lineno": i + 1} for i in range(5_000)]
    payload = {
        "data": {
            "error": {
                "title": "E" * 3_000_000,
                "exception": {
                    "values": [
                        {"type": "E", "value": "x" * 3_000_000, "stacktrace": {"frames": frames}}
                    ]
                },
            }
        }
    }
    intake = from_sentry(payload)
    (trace,) = intake.traces
    assert len(trace.frames) == 512
    assert trace.frames[-1].file == "f4999.py"  # the innermost are kept
    assert trace.exception is not None and trace.exception.message is not None
    assert len(trace.exception.message) < 30_000
    assert len(intake.report.text) <= 2_000_000
    assert intake.report.title is not None and len(intake.report.title) < 1_100


def test_lenient_scalars_are_dropped_not_fatal() -> None:
    payload = {
        "data": {
            "event": {
                "exception": {
                    "values": [
                        {
                            "type": 5,
                            "value": "boom",
                            "stacktrace": {
                                "frames": [{"filename": "a.py", "lineno": "12", "in_app": "yes"}]
                            },
                        }
                    ]
                },
                "release": 1.5,
            }
        }
    }
    intake = from_sentry(payload)
    assert intake.traces[0].exception == TraceException(message="boom")
    assert intake.traces[0].frames == (Frame(file="a.py", line=12),)
    assert intake.report.app_version == "1.5"


BROKEN: list[tuple[Any, str | None, str]] = [
    ([], None, ""),
    ({}, None, "data"),
    ({"data": {}}, None, "data.event"),
    ({"data": []}, None, "data"),
    ({"data": {"issue": {}}}, "event_alert", "data.event"),
    ({"action": "triggered"}, "event_alert", "data"),
    ({"data": {"event": "x"}}, "event_alert", "data.event"),
    ({"data": {"event": {"exception": 3}}}, None, "data.event.exception"),
    ({"data": {"event": {"exception": {"values": {}}}}}, None, "data.event.exception.values"),
    ({"data": {"event": {"exception": {"values": [1]}}}}, None, "data.event.exception.values[0]"),
    (
        {"data": {"error": {"exception": [{"stacktrace": {"frames": [None]}}]}}},
        None,
        "data.error.exception[0].stacktrace.frames[0]",
    ),
    ({"data": {"event": {"threads": "t"}}}, None, "data.event.threads"),
    ({"data": {"event": {}}}, None, "data.event.exception"),
    ({"data": {"issue": {}}}, None, "data.issue.title"),
    ({"data": {"issue": {"metadata": []}}}, None, "data.issue.metadata"),
    ({"event": []}, None, "event"),
    ({"data": {"metric_alert": {}}}, "metric_alert", "Sentry-Hook-Resource"),
]


@pytest.mark.parametrize(("payload", "resource", "field"), BROKEN)
def test_broken_payloads_name_the_field(payload: Any, resource: str | None, field: str) -> None:
    with pytest.raises(IntakeError) as caught:
        from_sentry(payload, resource)
    assert caught.value.field == field
    assert str(caught.value).startswith("sentry")
    assert isinstance(caught.value, ValueError)


def test_error_message_names_resource_and_path() -> None:
    with pytest.raises(IntakeError, match=r"^sentry event_alert: missing data\.event$"):
        from_sentry({"data": {}}, "event_alert")
