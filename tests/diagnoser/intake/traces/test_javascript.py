from __future__ import annotations

from diagnoser.intake.report import Frame, FrameOrder, TraceException, TraceFormat
from diagnoser.intake.traces import javascript
from tests.diagnoser.intake.traces.conftest import read_fixture


def test_node_v8_frames_are_reversed_and_prefixes_dropped() -> None:
    text = read_fixture("node_v8.txt")
    (trace,) = javascript.parse(text)
    assert trace.format is TraceFormat.JAVASCRIPT_V8
    assert trace.source_order is FrameOrder.NEWEST_FIRST
    assert [(f.file, f.line, f.column, f.function) for f in trace.frames] == [
        ("node:internal/process/task_queues", 95, 5, "process.processTicksAndRejections"),
        ("/srv/api/src/server.js", 88, 11, None),
        (None, None, None, "Array.map"),
        ("/srv/api/src/orders/handler.js", 17, 10, "getOrder"),
        ("/srv/api/src/orders/view.js", 12, 18, "OrderView"),
        ("/srv/api/src/orders/handler.js", 41, 31, "computeTotal"),
    ]
    assert trace.exception == TraceException(
        type="TypeError", message="Cannot read properties of undefined (reading 'reduce')"
    )
    assert text[trace.start :].startswith("TypeError: Cannot read")
    assert text[: trace.end].endswith("task_queues:95:5)")
    assert trace.frames[-1].language == "javascript"


def test_gecko_frames_and_uncaught_prefix() -> None:
    (trace,) = javascript.parse(read_fixture("firefox_gecko.txt"))
    assert trace.format is TraceFormat.JAVASCRIPT_GECKO
    assert trace.source_order is FrameOrder.NEWEST_FIRST
    url = "https://shop.example.com/assets/app.3f9c1e.js"
    assert trace.frames == (
        Frame(file=url, line=1, column=120, language="javascript"),
        Frame(file=url, line=1, column=39877, function="onCartChanged/<", language="javascript"),
        Frame(file=url, line=1, column=40211, function="updateBadge", language="javascript"),
    )
    assert trace.exception == TraceException(type="TypeError", message="cart.items is undefined")


def test_safari_native_code_frame() -> None:
    text = "map@[native code]\nrender@https://x.test/app.js:10:4\n"
    (trace,) = javascript.parse(text)
    assert [(f.file, f.function) for f in trace.frames] == [
        ("https://x.test/app.js", "render"),
        (None, "map"),
    ]
    assert trace.exception is None


def test_windows_file_path_in_v8_frame() -> None:
    (trace,) = javascript.parse("Error: boom\n    at main (C:\\app\\index.js:3:9)\n")
    assert trace.frames == (
        Frame(file="C:\\app\\index.js", line=3, column=9, function="main", language="javascript"),
    )
    assert trace.exception == TraceException(type="Error", message="boom")


def test_prose_is_not_a_stack() -> None:
    text = "Look at this (really)\nmail me at dev@example.com\nat home\n"
    assert javascript.parse(text) == []


LONG_STACK = """ObjectParameterError: Parameter "obj" to Document() must be an object
    at new ObjectParameterError (node_modules/mongoose/lib/error/objectParameter.js:23:11)
    at Embedded.castForQuery (node_modules/mongoose/lib/schema/embedded.js:218:10)
    at process.nextTick (node_modules/kareem/index.js:333:33)
From previous event:
    at Object.promiseOrCallback (node_modules/mongoose/lib/utils.js:233:10)
    at model.Query.exec (node_modules/mongoose/lib/query.js:3549:16)
"""


def test_a_long_stack_trace_is_one_trace_with_the_async_origin_outermost() -> None:
    (trace,) = javascript.parse(LONG_STACK)
    assert [f.function for f in trace.frames] == [
        "model.Query.exec",
        "Object.promiseOrCallback",
        "process.nextTick",
        "Embedded.castForQuery",
        "ObjectParameterError",
    ]
    assert trace.exception is not None and trace.exception.type == "ObjectParameterError"


def test_a_continuation_line_without_frames_after_it_ends_the_trace() -> None:
    text = "Error: boom\n    at main (/srv/app/index.js:3:9)\nFrom previous event:\nthen prose\n"
    (trace,) = javascript.parse(text)
    assert [f.function for f in trace.frames] == ["main"]
    assert text[: trace.end].endswith("index.js:3:9)")


def test_chromes_console_location_before_uncaught_is_not_the_error() -> None:
    text = (
        "VM296:4 Uncaught TypeError: Cannot read properties of undefined (reading 'a')\n"
        "    at prog (handlebars.js:1206:13)\n"
    )
    (trace,) = javascript.parse(text)
    assert trace.exception == TraceException(
        type="TypeError", message="Cannot read properties of undefined (reading 'a')"
    )
