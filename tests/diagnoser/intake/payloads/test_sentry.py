from __future__ import annotations

from typing import Any

import pytest

from diagnoser.intake.payloads import IntakeError, from_sentry
from diagnoser.intake.report import Frame, FrameOrder, Source, TraceException, TraceFormat
from tests.diagnoser.intake.payloads._fixtures import load, load_reference, wrong_types


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


def test_every_field_of_the_wrong_type_is_refused_naming_the_field() -> None:
    payload = wrong_types(load("sentry_event_alert_chained.json"))
    with pytest.raises(IntakeError, match="nothing to diagnose") as caught:
        from_sentry(payload)
    assert caught.value.field == "data.event.exception"


def test_frames_pointing_nowhere_are_dropped() -> None:
    frames = [{"lineno": 3, "in_app": True}, {"filename": 7}, {"filename": "a.py", "lineno": 1}]
    payload = {"exception": {"values": [{"type": "E", "stacktrace": {"frames": frames}}]}}
    (trace,) = from_sentry(payload).traces
    assert [(f.file, f.line) for f in trace.frames] == [("a.py", 1)]


def test_only_frames_pointing_nowhere_and_no_exception_is_refused() -> None:
    payload = {"exception": {"values": [{"stacktrace": {"frames": [{"lineno": 1}] * 3}}]}}
    with pytest.raises(IntakeError, match="nothing to diagnose"):
        from_sentry(payload)


def test_frame_and_chain_caps_keep_the_innermost_and_newest_and_say_so() -> None:
    frames = [{"filename": f"f{i}.py", "lineno": 1} for i in range(12_000)]
    values = [{"type": f"E{k}", "value": "v"} for k in range(39)]
    values.append({"type": "Top", "stacktrace": {"frames": frames}})
    intake = from_sentry({"exception": {"values": values}})
    assert [t.exception.type for t in intake.traces if t.exception][:2] == ["E8", "E9"]
    assert len(intake.traces) == 32
    top = intake.traces[-1]
    assert len(top.frames) == 512 and top.omitted_frames == 11_488
    assert (top.frames[0].file, top.frames[-1].file) == ("f11488.py", "f11999.py")
    assert intake.truncated == (
        "sentry event: 40 exceptions in exception.values; kept the newest 32",
        "sentry event: 12,000 frames in exception.values[39].stacktrace.frames; "
        "kept the innermost 512",
    )
    assert "  … 11,488 outer frames not kept" in intake.report.text


def test_oversized_contexts_and_tags_are_left_out_of_metadata_and_noted() -> None:
    payload = {
        "exception": {"values": [{"type": "E", "value": "v"}]},
        "contexts": {"os": {"name": "Linux"}, "blob": {"x": "y" * 30_000}},
        "tags": [["k", "v"]],
    }
    intake = from_sentry(payload)
    assert intake.report.metadata.get("contexts") is None
    assert intake.report.metadata["tags"] == [["k", "v"]]
    (note,) = intake.truncated
    assert note.startswith("sentry event: contexts of 30,0") and "left out of metadata" in note
    assert "os: Linux" in intake.report.text  # still read for the readable context lines


def test_many_threads_are_cut_before_reading() -> None:
    threads = [{"id": i, "stacktrace": {"frames": [{"function": f"t{i}"}]}} for i in range(1_500)]
    threads[3]["crashed"] = True
    intake = from_sentry({"event_id": "x", "threads": {"values": threads}})
    assert [f.function for f in intake.traces[0].frames] == ["t3"]
    assert intake.truncated == (
        "sentry event: 1,500 threads in threads.values; kept the first 1,000",
    )
