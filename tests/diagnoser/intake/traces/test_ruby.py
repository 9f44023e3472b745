from __future__ import annotations

from diagnoser.intake.report import FrameOrder, TraceException, TraceFormat
from diagnoser.intake.traces import ruby
from tests.diagnoser.intake.traces.conftest import read_fixture

REFUND = "/srv/shop/app/services/refund.rb"


def test_ruby_3_3_backquote_quoting_and_error_highlight() -> None:
    text = read_fixture("ruby_3_3.txt")
    (trace,) = ruby.parse(text)
    assert trace.format is TraceFormat.RUBY
    assert trace.source_order is FrameOrder.NEWEST_FIRST
    assert trace.exception == TraceException(
        type="NoMethodError", message="undefined method `cents' for nil"
    )
    assert [(f.module, f.function, f.file, f.line) for f in trace.frames] == [
        (None, "<main>", "bin/refund", 5),
        (None, "call", REFUND, 10),
        (None, "each", REFUND, 10),
        (None, "block in call", REFUND, 11),
        (None, "amount_for", REFUND, 23),
    ]
    assert (trace.start, trace.end) == (0, len(text.rstrip("\n")))


def test_ruby_3_4_quoting_splits_class_and_method() -> None:
    (trace,) = ruby.parse(read_fixture("ruby_3_4.txt"))
    assert trace.exception == TraceException(
        type="NoMethodError", message="undefined method 'cents' for nil"
    )
    assert [(f.module, f.function, f.line) for f in trace.frames] == [
        (None, "<main>", 5),
        ("Refund", "call", 10),
        ("Array", "each", 10),
        ("Refund", "block in call", 11),
        ("Refund", "amount_for", 23),
    ]
    assert all(f.language == "ruby" for f in trace.frames)


def test_namespaced_exception_and_windows_path() -> None:
    text = (
        "C:/app/lib/api.rb:7:in 'Api::Client#get': timeout (Net::ReadTimeout)\n"
        "\tfrom C:/app/main.rb:2:in '<main>'\n"
    )
    (trace,) = ruby.parse(text)
    assert trace.exception == TraceException(type="Net::ReadTimeout", message="timeout")
    assert [(f.file, f.module, f.function) for f in trace.frames] == [
        ("C:/app/main.rb", None, "<main>"),
        ("C:/app/lib/api.rb", "Api::Client", "get"),
    ]


def test_backtrace_line_without_exception_is_ignored() -> None:
    assert ruby.parse("app/models/order.rb:42:in `total'\n") == []
