from __future__ import annotations

import time

from diagnoser.intake.report import Frame, FrameOrder, TraceException, TraceFormat
from diagnoser.intake.traces import swift
from diagnoser.intake.traces._common import MAX_TRACES_PER_FAMILY
from tests.diagnoser.intake.traces.conftest import read_fixture


def test_ios_crash_report_crashed_thread_only() -> None:
    text = read_fixture("ios_crash.txt")
    (trace,) = swift.parse(text)
    assert trace.format is TraceFormat.SWIFT
    assert trace.source_order is FrameOrder.NEWEST_FIRST
    assert trace.exception == TraceException(
        type="EXC_CRASH (SIGABRT)",
        message="*** -[__NSArrayM objectAtIndex:]: index 3 beyond bounds [0 .. 2]",
    )
    view = [(f.module, f.function, f.file, f.line) for f in trace.frames]
    assert view[0] == ("NotesPlus", "main", "AppDelegate.swift", 10)
    assert view[2] == (
        "NotesPlus",
        "@objc NoteListViewController.tableView(_:didSelectRowAt:)",
        None,
        None,
    )
    assert view[3] == (
        "NotesPlus",
        "NoteListViewController.tableView(_:didSelectRowAt:)",
        "NoteListViewController.swift",
        88,
    )
    assert view[-1] == ("CoreFoundation", "__exceptionPreprocess", "NSException.m", 249)
    assert len(view) == 7
    assert text[trace.start :].startswith("Exception Type:")
    assert text[: trace.end].endswith("(AppDelegate.swift:10)")
    assert "start_wqthread" not in text[trace.start : trace.end]


def test_application_specific_information_is_the_message() -> None:
    text = (
        "Exception Type:  EXC_BREAKPOINT (SIGTRAP)\n\n"
        "Application Specific Information:\n"
        "Shop/Cart.swift:58: Fatal error: Unexpectedly found nil\n\n"
        "Thread 0 Crashed:\n"
        "0   Shop   0x00000001045a8f3c Cart.total.getter + 412 (Cart.swift:58)\n"
        "1   Shop   0x00000001045a8b10 closure #1 in Cart.load() + 96 (<compiler-generated>:0)\n"
    )
    (trace,) = swift.parse(text)
    assert trace.exception == TraceException(
        type="EXC_BREAKPOINT (SIGTRAP)",
        message="Shop/Cart.swift:58: Fatal error: Unexpectedly found nil",
    )
    assert [(f.function, f.file, f.line) for f in trace.frames] == [
        ("closure #1 in Cart.load()", "<compiler-generated>", None),
        ("Cart.total.getter", "Cart.swift", 58),
    ]


def test_runtime_fatal_errors_new_and_old_forms() -> None:
    new, old = swift.parse(read_fixture("swift_fatal.txt"))
    assert new.exception == TraceException(type="Fatal error", message="Index out of range")
    assert new.frames == (
        Frame(file="Swift/ContiguousArrayBuffer.swift", line=600, language="swift"),
    )
    assert old.exception == TraceException(
        type="Fatal error", message="Unexpectedly found nil while unwrapping an Optional value"
    )
    assert old.frames == (Frame(file="NotesKit/Store.swift", line=212, language="swift"),)


def test_many_crashed_threads_are_parsed_in_linear_time_and_capped() -> None:
    # Each crash used to copy the rest of the lines and every line was checked against
    # every crash: 4,000 crashes took 2.7 s, 70,000 would take a quarter of an hour.
    text = "Thread 0 Crashed:\n0 a 0x1 f\nFatal error: x: file a.swift, line 1\n" * 20_000
    started = time.monotonic()
    found = swift.parse(text)
    assert time.monotonic() - started < 5
    assert len(found) == MAX_TRACES_PER_FAMILY
    assert [t.exception.message if t.exception else None for t in found[:2]] == [None, "x"]


def test_a_fatal_error_line_inside_a_crashed_thread_is_not_a_second_trace() -> None:
    text = "Thread 0 Crashed:\n0 a 0x1 f\n1 b 0x2 Fatal error: x: file a.swift, line 1\n"
    (trace,) = swift.parse(text)
    assert len(trace.frames) == 2
