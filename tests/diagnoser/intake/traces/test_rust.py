from __future__ import annotations

from diagnoser.constants import MAX_FRAMES
from diagnoser.intake.report import Frame, FrameOrder, TraceException, TraceFormat
from diagnoser.intake.traces import rust
from tests.diagnoser.intake.traces.conftest import read_fixture


def test_new_panic_form_with_backtrace() -> None:
    text = read_fixture("rust_new.txt")
    (trace,) = rust.parse(text)
    assert trace.format is TraceFormat.RUST
    assert trace.source_order is FrameOrder.NEWEST_FIRST
    assert trace.exception == TraceException(
        type="panic", message="index out of bounds: the len is 3 but the index is 7"
    )
    rustc = "/rustc/07dca489ac2d933c78d3c5158e3f43beefeb02ce/library"
    assert [(f.module, f.function, f.file, f.line, f.column) for f in trace.frames] == [
        ("csvtool", "main", "./src/main.rs", 22, 9),
        ("csvtool::parser::Parser", "field", "./src/parser.rs", 118, 27),
        ("core::panicking", "panic_bounds_check", f"{rustc}/core/src/panicking.rs", 208, 5),
        (None, "rust_begin_unwind", f"{rustc}/std/src/panicking.rs", 645, 5),
    ]
    assert text[trace.start :].startswith("thread 'main' panicked at src/parser.rs:118:27:")
    assert text[: trace.end].endswith("at ./src/main.rs:22:9")


def test_old_panic_form_without_backtrace_uses_panic_location() -> None:
    (trace,) = rust.parse(read_fixture("rust_old.txt"))
    assert trace.exception is not None
    assert trace.exception.message == (
        "called `Result::unwrap()` on an `Err` value: "
        'Os { code: 2, kind: NotFound, message: "No such file or directory" }'
    )
    assert trace.frames == (Frame(file="src/store.rs", line=40, column=52, language="rust"),)


def test_full_backtrace_addresses_hashes_and_generics() -> None:
    text = (
        "thread 'main' panicked at src/main.rs:5:10:\n"
        "boom\n"
        "stack backtrace:\n"
        "   0:     0x55d5c1c0a1b2 - core::option::Option<T>::unwrap::h0123456789abcdef\n"
        "                               at /rustc/x/library/core/src/option.rs:935:21\n"
        "   1:     0x55d5c1c0a1ff - app::main::h89abcdef01234567\n"
        "                               at ./src/main.rs:5:10\n"
    )
    (trace,) = rust.parse(text)
    assert [(f.module, f.function, f.line) for f in trace.frames] == [
        ("app", "main", 5),
        ("core::option::Option<T>", "unwrap", 935),
    ]


def test_a_capped_backtrace_puts_each_location_on_its_own_frame() -> None:
    frames = "".join(
        f"   {i}: app::f{i}\n             at ./src/f{i}.rs:{i + 1}:1\n" for i in range(600)
    )
    text = "thread 'main' panicked at src/f0.rs:1:1:\nboom\nstack backtrace:\n" + frames
    (trace,) = rust.parse(text)
    assert len(trace.frames) == MAX_FRAMES and trace.omitted_frames == 600 - MAX_FRAMES
    assert all(f.file == f"./src/{f.function}.rs" for f in trace.frames)
    assert trace.frames[-1].function == "f0"


def test_a_backtrace_longer_than_is_read_is_counted_not_kept() -> None:
    count = rust.MAX_LISTED + 100
    frames = "".join(
        f"   {i}: app::f{i}\n             at ./src/f{i}.rs:1:1\n" for i in range(count)
    )
    text = "thread 'main' panicked at src/f0.rs:1:1:\nboom\nstack backtrace:\n" + frames
    (trace,) = rust.parse(text)
    assert len(trace.frames) == MAX_FRAMES and trace.omitted_frames == count - MAX_FRAMES
    assert trace.frames[-1].function == "f0" and trace.frames[-1].file == "./src/f0.rs"


HOOKED = """error: Panicked while linting /tmp/x.py: This indicates a bug in Ruff.

panicked at crates/ruff_diagnostics/src/edit.rs:42:9:
Prefer `Fix::deletion`
Backtrace:    0: ruff::panic::catch_unwind::{{closure}}
             at ./ruff/crates/ruff/src/panic.rs:31:25
   1: std::panicking::rust_panic_with_hook
             at /rustc/9b00956e/library/std/src/panicking.rs:783:13
"""


def test_a_panic_hooks_header_and_backtrace_without_the_hooks_own_frames() -> None:
    (trace,) = rust.parse(HOOKED)
    assert trace.exception == TraceException(type="panic", message="Prefer `Fix::deletion`")
    # the hook's closure (newer than rust_panic_with_hook) is not where it failed; the
    # backtrace was cut before the failing frame, so the panic location stands for it
    assert [(f.function, f.file, f.line) for f in trace.frames] == [
        ("rust_panic_with_hook", "/rustc/9b00956e/library/std/src/panicking.rs", 783),
        (None, "crates/ruff_diagnostics/src/edit.rs", 42),
    ]


def test_the_panic_location_is_not_added_twice() -> None:
    text = (
        "thread 'main' panicked at src/parser.rs:118:27:\nboom\nstack backtrace:\n"
        "   0: std::panicking::rust_panic_with_hook\n"
        "   1: core::panicking::panic_fmt\n"
        "   2: csvtool::parser::Parser::field\n             at ./src/parser.rs:118:27\n"
        "   3: csvtool::main\n             at ./src/main.rs:22:9\n"
    )
    (trace,) = rust.parse(text)
    assert [f.function for f in trace.frames] == [
        "main", "field", "panic_fmt", "rust_panic_with_hook",
    ]  # fmt: skip


def test_a_panic_location_inside_a_programs_own_message() -> None:
    text = "panic: Panicked at crates/sem/src/definition.rs:285:26 when checking `a.py`: `boom`\n"
    (trace,) = rust.parse(text)
    assert trace.exception is not None
    assert trace.exception.message == "when checking `a.py`: `boom`"
    assert [(f.file, f.line, f.column) for f in trace.frames] == [
        ("crates/sem/src/definition.rs", 285, 26)
    ]


def test_panicked_without_a_rust_location_is_prose() -> None:
    assert rust.parse("It panicked at startup, see the log.\n") == []
