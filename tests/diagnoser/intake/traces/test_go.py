from __future__ import annotations

from diagnoser.intake.report import Frame, FrameOrder, TraceException, TraceFormat
from diagnoser.intake.traces import go
from tests.diagnoser.intake.traces.conftest import read_fixture


def test_panic_with_several_goroutines() -> None:
    text = read_fixture("go_goroutines.txt")
    panicking, main, server = go.parse(text)
    assert panicking.exception == TraceException(
        type="panic", message="assignment to entry in nil map"
    )
    assert panicking.format is TraceFormat.GO
    assert panicking.source_order is FrameOrder.NEWEST_FIRST
    api = "github.com/acme/ledger/internal/api"
    assert panicking.frames == (
        Frame(
            file="/build/ledger/internal/api/entries.go",
            line=37,
            function="postEntry",
            module=api,
            language="go",
        ),
        Frame(
            file="/build/ledger/internal/api/entries.go",
            line=39,
            function="postEntry.func1",
            module=api,
            language="go",
        ),
        Frame(
            file="/build/ledger/internal/book/book.go",
            line=64,
            function="(*Book).Post",
            module="github.com/acme/ledger/internal/book",
            language="go",
        ),
    )
    assert text[panicking.start :].startswith("panic: assignment")
    assert main.exception is None
    assert [(f.module, f.function, f.line) for f in main.frames] == [("main", "main", 51)]
    assert [(f.module, f.function) for f in server.frames] == [("net/http", "(*conn).serve")]
    assert text[: server.end].endswith("server.go:2039 +0x5e8")


def test_fatal_error_and_windows_path() -> None:
    text = (
        "fatal error: all goroutines are asleep - deadlock!\n\n"
        "goroutine 1 [chan receive]:\n"
        "main.main()\n"
        "\tC:/Users/dev/app/main.go:9 +0x25\n"
    )
    (trace,) = go.parse(text)
    assert trace.exception == TraceException(
        type="fatal error", message="all goroutines are asleep - deadlock!"
    )
    assert [(f.file, f.line) for f in trace.frames] == [("C:/Users/dev/app/main.go", 9)]
