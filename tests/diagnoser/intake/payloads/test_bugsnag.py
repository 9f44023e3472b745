from __future__ import annotations

from typing import Any

import pytest

from diagnoser.intake.payloads import IntakeError, from_bugsnag
from diagnoser.intake.report import Frame, FrameOrder, Source, TraceException, TraceFormat
from tests.diagnoser.intake.payloads._fixtures import load, load_reference, wrong_types


def test_android_exception_frames_are_reversed_to_innermost_last() -> None:
    intake = from_bugsnag(load("bugsnag_exception_android.json"))
    (trace,) = intake.traces
    assert trace.format is TraceFormat.STRUCTURED
    assert trace.source_order is FrameOrder.NEWEST_FIRST
    assert trace.exception == TraceException(
        type="java.lang.IllegalStateException",
        message="Fragment CheckoutFragment not attached to a context.",
    )
    assert [f.function for f in trace.frames] == [
        "android.os.Handler.dispatchMessage",
        "com.example.shop.PaymentClient$1.onResponse",
        "com.example.shop.CheckoutFragment.onPaid",
        "androidx.fragment.app.Fragment.requireContext",
    ]
    assert [f.in_app for f in trace.frames] == [False, True, True, False]
    assert trace.frames[2] == Frame(
        file="CheckoutFragment.kt",
        line=57,
        function="com.example.shop.CheckoutFragment.onPaid",
        in_app=True,
    )
    report = intake.report
    assert report.source is Source.BUGSNAG
    assert report.app_version == "2.3.1"  # app.version, no appVersion
    assert report.platform == "android"
    assert report.url is not None and report.url.startswith(
        "https://app.bugsnag.com/acme/shop-android/errors/"
    )
    assert report.metadata["trigger"] == "exception"
    assert report.metadata["os_version"] == "14"
    assert "Fragment.java:1011 in androidx.fragment.app.Fragment.requireContext" in report.text


def test_documented_sample() -> None:
    intake = from_bugsnag(load_reference("bugsnag_firstException.json"))
    assert intake.report.app_version == "0.1.0"
    assert intake.report.title == "NoMethodError: Unable to connect to database."
    assert intake.traces[0].frames[-1] == Frame(
        file="controllers/auth/session_controller.rb",
        line=1234,
        column=123,
        function="create",
        in_app=True,
    )


def test_error_without_stack_trace_still_reports() -> None:
    intake = from_bugsnag({"error": {"exceptionClass": "Timeout", "appVersion": 12}})
    assert intake.traces[0].frames == ()
    assert intake.report.app_version == "12"
    assert intake.report.text == "Timeout"


BROKEN: list[tuple[Any, str]] = [
    ([], ""),
    ({}, "error"),
    ({"trigger": "x", "error": {}}, "trigger"),
    ({"error": []}, "error"),
    ({"error": {}}, "error.exceptionClass"),
    ({"error": {"exceptionClass": "E", "stackTrace": {}}}, "error.stackTrace"),
    ({"error": {"exceptionClass": "E", "stackTrace": ["f"]}}, "error.stackTrace[0]"),
    ({"error": {"exceptionClass": "E", "app": 1}}, "error.app"),
]


@pytest.mark.parametrize(("payload", "field"), BROKEN)
def test_broken_payloads_name_the_field(payload: Any, field: str) -> None:
    with pytest.raises(IntakeError) as caught:
        from_bugsnag(payload)
    assert caught.value.field == field
    assert str(caught.value).startswith("bugsnag")


def test_every_field_of_the_wrong_type_is_refused_naming_the_field() -> None:
    payload = wrong_types(load("bugsnag_exception_android.json"))
    with pytest.raises(IntakeError, match="nothing to diagnose") as caught:
        from_bugsnag(payload)
    assert caught.value.field == "error.exceptionClass"


def test_frames_are_cut_to_the_innermost_before_reading_and_noted() -> None:
    frames = [{"file": f"f{i}.kt", "lineNumber": 1, "method": "m"} for i in range(12_000)]
    frames[3] = {"lineNumber": 9}  # points nowhere: dropped
    intake = from_bugsnag({"error": {"exceptionClass": "E", "stackTrace": frames}})
    (trace,) = intake.traces
    # Bugsnag lists the innermost first: f0 is the crash site, stored last.
    assert trace.frames[-1].file == "f0.kt" and trace.frames[0].file == "f511.kt"
    assert len(trace.frames) == 511 and trace.omitted_frames == 11_488
    assert intake.truncated == (
        "bugsnag: 12,000 frames in error.stackTrace; kept the innermost 512",
    )
