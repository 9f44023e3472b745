from __future__ import annotations

import time

from diagnoser.intake.report import Frame, FrameOrder, TraceException, TraceFormat
from diagnoser.intake.traces import jvm
from diagnoser.intake.traces.jvm import MAX_INTERLEAVED
from tests.diagnoser.intake.traces.conftest import read_fixture


def _view(frames: tuple[Frame, ...]) -> list[tuple[str | None, str | None, str | None, int | None]]:
    return [(f.module, f.function, f.file, f.line) for f in frames]


def test_suppressed_and_caused_by_are_separate_traces() -> None:
    text = read_fixture("java_suppressed.txt")
    top, suppressed, cause = jvm.parse(text)
    assert top.exception == TraceException(
        type="com.example.billing.InvoiceException", message="cannot render invoice 981"
    )
    assert _view(top.frames) == [
        ("java.lang.Thread", "run", "Thread.java", 1583),
        ("com.example.billing.InvoiceController", "pdf", "InvoiceController.kt", 33),
        ("com.example.billing.InvoiceService", "render", "InvoiceService.java", 120),
    ]
    assert [f.language for f in top.frames] == ["java", "kotlin", "java"]
    assert suppressed.exception == TraceException(
        type="java.io.IOException", message="stream closed"
    )
    assert _view(suppressed.frames)[-1] == (
        "com.example.billing.pdf.PdfWriter",
        "close",
        "PdfWriter.java",
        77,
    )
    assert cause.exception == TraceException(type="java.lang.NullPointerException", message=None)
    assert _view(cause.frames) == [
        ("com.example.billing.InvoiceService", "render", "InvoiceService.java", 112),
        ("com.example.billing.pdf.Fonts$Loader", "load", "Fonts.java", 31),
    ]
    assert top.source_order is FrameOrder.NEWEST_FIRST
    assert top.format is TraceFormat.JAVA
    assert text[top.start :].startswith('Exception in thread "http-nio-8080-exec-3"')
    assert text[: cause.end].endswith("... 2 more")
    assert top.end < suppressed.start < suppressed.end < cause.start


def test_logcat_threadtime_with_other_tags_interleaved() -> None:
    text = read_fixture("logcat_threadtime.txt")
    top, cause = jvm.parse(text)
    assert top.exception is not None
    assert top.exception.type == "java.lang.RuntimeException"
    assert _view(top.frames) == [
        ("com.android.internal.os.ZygoteInit", "main", "ZygoteInit.java", 1003),
        ("android.os.Looper", "loop", "Looper.java", 288),
        ("android.app.ActivityThread", "handleResumeActivity", "ActivityThread.java", 4835),
        ("android.app.ActivityThread", "performResumeActivity", "ActivityThread.java", 4802),
    ]
    assert cause.exception == TraceException(
        type="java.lang.IllegalStateException", message="note 17 not found"
    )
    assert _view(cause.frames) == [
        ("android.app.Activity", "performResume", "Activity.java", 8461),
        ("com.example.notes.EditorActivity", "onResume", "EditorActivity.kt", 48),
        ("com.example.notes.data.NoteRepository", "require", "NoteRepository.kt", 64),
    ]
    assert text[cause.start :].startswith("Caused by: java.lang.IllegalStateException")
    assert text[: cause.end].endswith("... 12 more")


def test_legacy_logcat_prefix_and_unknown_source() -> None:
    text = (
        "E/AndroidRuntime( 2211): FATAL EXCEPTION: main\n"
        "E/AndroidRuntime( 2211): java.lang.IllegalArgumentException: coupon is null\n"
        "E/AndroidRuntime( 2211): \tat com.example.shop.CouponValidator.validate"
        "(Unknown Source:2)\n"
        "I/ActivityManager(  512): Process com.example.shop has died\n"
        "E/AndroidRuntime( 2211): \tat java.lang.reflect.Method.invoke(Native Method)\n"
        "E/AndroidRuntime( 2211): \tat com.example.shop.Main.run(Main.kt:9)\n"
    )
    (trace,) = jvm.parse(text)
    assert _view(trace.frames) == [
        ("com.example.shop.Main", "run", "Main.kt", 9),
        ("java.lang.reflect.Method", "invoke", None, None),
        ("com.example.shop.CouponValidator", "validate", None, 2),
    ]
    assert trace.exception == TraceException(
        type="java.lang.IllegalArgumentException", message="coupon is null"
    )


def test_android_studio_logcat_prefix() -> None:
    prefix = "2024-03-14 09:21:44.104 12345-12345 AndroidRuntime          com.example.shop   E  "
    text = (
        f"{prefix}java.lang.NullPointerException: boom\n"
        f"{prefix}\tat com.example.shop.Cart.total(Cart.kt:41)\n"
        f"{prefix}\tat com.example.shop.Main.main(Main.kt:3)\n"
    )
    (trace,) = jvm.parse(text)
    assert _view(trace.frames) == [
        ("com.example.shop.Main", "main", "Main.kt", 3),
        ("com.example.shop.Cart", "total", "Cart.kt", 41),
    ]


def test_dotted_word_with_colon_alone_is_not_a_trace() -> None:
    assert jvm.parse("see docs.example.com: it explains\nnothing else\n") == []


def test_cause_with_only_elided_frames_is_kept() -> None:
    text = (
        "java.lang.IllegalStateException: outer\n"
        "\tat com.x.A.run(A.java:3)\n"
        "Caused by: java.io.EOFException\n"
        "\t... 1 more\n"
    )
    outer, cause = jvm.parse(text)
    assert [(f.module, f.function) for f in outer.frames] == [("com.x.A", "run")]
    assert cause.exception == TraceException(type="java.io.EOFException", message=None)
    assert cause.frames == ()


def test_a_log_of_distinct_tags_is_not_rescanned_per_header() -> None:
    # Each header skipped every later line of another tag: 8,000 lines took 6 s.
    text = "".join(f"E/Tag{i}: com.x.Boom: message {i}\n" for i in range(20_000))
    started = time.monotonic()
    assert jvm.parse(text) == []
    assert time.monotonic() - started < 5


def test_a_crash_resumes_after_a_few_interleaved_lines_but_not_after_many() -> None:
    head = "E/AndroidRuntime: java.lang.IllegalStateException: x\n"
    frame = "E/AndroidRuntime: \tat com.x.A.f(A.java:1)\n"
    other = "I/Other: chatter\n"
    (trace,) = jvm.parse(head + other * MAX_INTERLEAVED + frame)
    assert len(trace.frames) == 1
    assert jvm.parse(head + other * (MAX_INTERLEAVED + 1) + frame) == []


LOGGED = """2023-01-13 12:45:47,690 main WARN The style attribute is incorrect. \
java.lang.IllegalArgumentException: No enum constant AnsiEscape.X
\tat java.base/java.lang.Enum.valueOf(Enum.java:274)
\tat org.apache.logging.log4j.core.pattern.AnsiEscape.createSequence(AnsiEscape.java:486)
"""


def test_an_exception_at_the_end_of_a_log_line_heads_the_frames_below_it() -> None:
    (trace,) = jvm.parse(LOGGED)
    assert trace.exception is not None
    assert (trace.exception.type, trace.exception.message) == (
        "java.lang.IllegalArgumentException",
        "No enum constant AnsiEscape.X",
    )
    assert [(f.file, f.line) for f in trace.frames] == [
        ("AnsiEscape.java", 486),
        ("Enum.java", 274),
    ]


def test_a_dotted_exception_name_in_prose_without_frames_is_no_trace() -> None:
    assert jvm.parse("We then saw java.lang.IllegalStateException: closed in the log.\n") == []
