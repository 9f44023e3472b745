from __future__ import annotations

from typing import Any

import pytest

from diagnoser.intake.payloads import IntakeError, from_rollbar
from diagnoser.intake.report import Frame, FrameOrder, Source, TraceException, TraceFormat
from tests.diagnoser.intake.payloads._fixtures import load, load_reference, wrong_types


def test_trace_chain_is_reversed_to_oldest_cause_first() -> None:
    intake = from_rollbar(load("rollbar_trace_chain.json"))
    assert [t.exception for t in intake.traces] == [
        TraceException(type="KeyError", message="'sku'"),
        TraceException(type="RuntimeError", message="checkout failed for order 17"),
    ]
    cause, top = intake.traces
    assert all(t.source_order is FrameOrder.OLDEST_FIRST for t in intake.traces)
    assert all(t.format is TraceFormat.STRUCTURED for t in intake.traces)
    assert cause.frames[-1] == Frame(
        file="/srv/app/shop/cart.py", line=31, column=12, function="line_total", language="python"
    )
    assert [f.function for f in top.frames] == ["dispatch_request", "checkout"]
    report = intake.report
    assert report.source is Source.ROLLBAR
    assert report.app_version == "9f2c1e7"  # server.code_version, code_version being null
    assert report.platform == "python"
    assert report.url == "https://rollbar.com/acme/shop-api/items/412/occurrences/211092748501/"
    assert report.metadata["request_url"] == "https://shop.example.com/checkout"
    assert report.metadata["event_name"] == "occurrence"
    assert report.text.startswith("RuntimeError: checkout failed for order 17\n\n")
    assert "  /srv/app/shop/cart.py:31:12 in line_total" in report.text


def test_item_last_occurrence_trace_and_client_code_version() -> None:
    intake = from_rollbar(load("rollbar_reactivated_js_trace.json"))
    (trace,) = intake.traces
    assert trace.exception == TraceException(type="TypeError", message="x.map is not a function")
    assert [(f.line, f.column, f.function) for f in trace.frames] == [
        (1, 48211, "render"),
        (1, 51002, "ProductList"),
    ]
    assert intake.report.app_version == "web-7.3.0"
    assert intake.report.platform == "browser"


def test_crash_report_raw_goes_into_text_without_traces() -> None:
    intake = from_rollbar(load("rollbar_ios_crash_report.json"))
    assert intake.traces == ()
    assert "Thread 0 Crashed:\n0   Shop" in intake.report.text
    assert intake.report.app_version == "3.2.0"


def test_message_occurrence_sample() -> None:
    intake = from_rollbar(load_reference("rollbar_new_item.json"))
    assert intake.traces == ()
    assert intake.report.text == "testing aobg98wrwe"
    assert intake.report.metadata["level"] == "40"


def test_item_without_occurrence_uses_the_title() -> None:
    intake = from_rollbar({"event_name": "resolved_item", "data": {"item": {"title": "Boom"}}})
    assert intake.report.text == "Boom"
    assert intake.traces == ()


BROKEN: list[tuple[Any, str]] = [
    ("x", ""),
    ({}, "data"),
    ({"event_name": "deploy", "data": {"deploy": {}}}, "event_name"),
    ({"data": {}}, "data.item"),
    ({"data": {"item": []}}, "data.item"),
    ({"data": {"item": {"title": "t", "last_occurrence": {}}}}, "data.item.last_occurrence.body"),
    ({"data": {"item": {"title": "t"}, "occurrence": {"body": 1}}}, "data.occurrence.body"),
    (
        {"data": {"item": {}, "occurrence": {"body": {"trace_chain": {}}}}},
        "data.occurrence.body.trace_chain",
    ),
    (
        {"data": {"item": {}, "occurrence": {"body": {"trace_chain": [3]}}}},
        "data.occurrence.body.trace_chain[0]",
    ),
    (
        {"data": {"item": {}, "occurrence": {"body": {"trace": {"frames": [[]]}}}}},
        "data.occurrence.body.trace.frames[0]",
    ),
    ({"data": {"item": {}}}, "data.item.title"),
]


@pytest.mark.parametrize(("payload", "field"), BROKEN)
def test_broken_payloads_name_the_field(payload: Any, field: str) -> None:
    with pytest.raises(IntakeError) as caught:
        from_rollbar(payload)
    assert caught.value.field == field
    assert str(caught.value).startswith("rollbar")


def test_every_field_of_the_wrong_type_is_refused_naming_the_field() -> None:
    payload = wrong_types(load("rollbar_trace_chain.json"))
    with pytest.raises(IntakeError, match="nothing to diagnose") as caught:
        from_rollbar(payload)
    assert caught.value.field == "data.item.title"


def test_chain_and_frame_caps_keep_the_newest_and_innermost_and_say_so() -> None:
    frames = [{"filename": f"f{i}.js", "lineno": 1} for i in range(600)]
    chain = [{"exception": {"class": f"E{k}"}, "frames": frames} for k in range(40)]
    payload = {
        "event_name": "new_item",
        "data": {"item": {"title": "t", "last_occurrence": {"body": {"trace_chain": chain}}}},
    }
    intake = from_rollbar(payload)
    assert len(intake.traces) == 32
    top = intake.traces[-1]  # Rollbar lists the raised exception first
    assert top.exception is not None and top.exception.type == "E0"
    assert top.frames[-1].file == "f599.js" and top.omitted_frames == 88
    assert intake.truncated[0] == (
        "rollbar new_item: 40 exceptions in data.item.last_occurrence.body.trace_chain; "
        "kept the newest 32"
    )
    assert len(intake.truncated) == 33  # and one note per trace for its frames
