from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from diagnoser.constants import MAX_FRAMES, MAX_TRACES
from diagnoser.intake import traces
from diagnoser.intake.report import TraceFormat
from diagnoser.intake.traces import FORMATS, PARSERS, find_traces, javascript, parse_traces
from diagnoser.intake.traces._common import MAX_SCANNED_LINES, split_qualified
from tests.diagnoser.intake.traces.conftest import FIXTURES, read_fixture, where

ALL_LINES = sorted(
    {line for path in FIXTURES.iterdir() for line in read_fixture(path.name).splitlines()}
)


def test_public_api() -> None:
    assert {"parse_traces", "PARSERS", "FORMATS"} <= set(traces.__all__)
    assert set(PARSERS) == {
        "python",
        "javascript",
        "jvm",
        "go",
        "rust",
        "ruby",
        "dotnet",
        "swift",
        "php",
        "native",
    }
    assert TraceFormat.STRUCTURED not in FORMATS


def test_every_fixture_yields_a_trace_with_frames() -> None:
    for path in FIXTURES.iterdir():
        found = parse_traces(read_fixture(path.name))
        assert found, path.name
        assert all(t.frames for t in found), path.name


def test_fenced_issue_keeps_only_the_python_trace() -> None:
    text = read_fixture("python_github_issue.md")
    (trace,) = parse_traces(text)
    assert trace.format is TraceFormat.PYTHON
    assert text[trace.start : trace.end].startswith("Traceback")
    assert "```" not in text[trace.start : trace.end]


def test_fence_line_inside_a_trace_does_not_break_it() -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "a.py", line 1, in <module>\n'
        "```\n"
        '  File "b.py", line 2, in f\n'
        "ValueError: x\n"
    )
    (trace,) = parse_traces(text)
    assert where(trace) == [("a.py", 1, "<module>"), ("b.py", 2, "f")]


def test_two_languages_in_one_text_sorted_by_start() -> None:
    text = read_fixture("mixed_python_and_js.md")
    py, js = parse_traces(text)
    assert py.format is TraceFormat.PYTHON
    assert where(py)[-1] == ("/app/api/serializers.py", 7, "serialize")
    assert js.format is TraceFormat.JAVASCRIPT_V8
    assert js.exception is not None
    assert js.exception.message == "Cannot read properties of null (reading 'name')"
    assert [(f.file, f.function) for f in js.frames] == [
        ("https://app.example.com/static/main.js", None),
        ("https://app.example.com/static/profile.js", "renderProfile"),
    ]
    assert py.end < js.start
    assert text[js.start : js.end].startswith("TypeError")


def test_concatenated_fixtures_keep_their_offsets() -> None:
    names = ["go_goroutines.txt", "ruby_3_4.txt", "php_uncaught.txt", "rust_new.txt"]
    text = "\r\n\r\nnoise line\r\n".join(read_fixture(n).replace("\n", "\r\n") for n in names)
    found = parse_traces(text)
    assert [t.format for t in found] == [
        TraceFormat.GO,
        TraceFormat.GO,
        TraceFormat.GO,
        TraceFormat.RUBY,
        TraceFormat.PHP,
        TraceFormat.RUST,
    ]
    assert [t.start for t in found] == sorted(t.start for t in found)
    for trace in found:
        for frame in trace.frames:
            assert frame.file is None or "\r" not in frame.file
    ruby = found[3]
    assert text[ruby.start :].startswith(
        "/srv/shop/app/services/refund.rb:23:in 'Refund#amount_for'"
    )
    assert text[: ruby.end].endswith("bin/refund:5:in '<main>'")


def test_contained_trace_of_another_family_is_dropped() -> None:
    text = read_fixture("rust_new.txt")
    assert javascript.parse(text)  # `at ./src/main.rs:22:9` reads as a V8 frame …
    (trace,) = parse_traces(text)  # … but it lies inside the Rust backtrace
    assert trace.format is TraceFormat.RUST
    assert len(trace.frames) == 4


LOGCAT = """E/AndroidRuntime: FATAL EXCEPTION: main
    java.lang.ArrayIndexOutOfBoundsException: length=7216; index=7216
        at com.google.zxing.common.BitMatrix.get(BitMatrix.java:162)
        at com.google.zxing.maxicode.MaxiCodeReader.decode(MaxiCodeReader.java:64)
"""


def test_of_two_families_reading_the_same_frames_the_one_with_lines_wins() -> None:
    assert PARSERS["dotnet"](LOGCAT)  # `at A.b(…)` reads as .NET, without a line …
    (trace,) = parse_traces(LOGCAT)  # … but Java's `(BitMatrix.java:162)` is a location
    assert trace.format is TraceFormat.JAVA
    assert [(f.file, f.line) for f in trace.frames] == [
        ("MaxiCodeReader.java", 64),
        ("BitMatrix.java", 162),
    ]


def test_same_family_chains_are_all_kept() -> None:
    found = parse_traces(read_fixture("dotnet_inner_async.txt"))
    assert [t.exception.type for t in found if t.exception] == [
        "System.InvalidOperationException",
        "System.Collections.Generic.KeyNotFoundException",
    ]


def test_plain_prose_has_no_traces() -> None:
    text = "The app crashes at checkout: see https://x.test/a.js:1 or email dev@x.test.\n"
    assert parse_traces(text) == []


def test_long_lines_are_ignored_quickly() -> None:
    hostile = "\n".join(
        [
            "_" * 5000,
            "    at " + "a (" * 3000,
            "thread 'm' panicked at '" + "', a" * 1500,
            "Fatal error: " * 500,
            "a:1:in `b': " + " (" * 3000,
        ]
        * 50
    )
    began = time.perf_counter()
    assert parse_traces(hostile) == []
    assert time.perf_counter() - began < 5


def test_long_lines_before_frames_and_panics_are_read_quickly() -> None:
    hostile = "\n".join(
        [
            "org.a" * 3000 + "Error" + "x" * 3000,  # a logged exception, frames below
            "\tat a.b(C.java:1)",
            "Panicked at " + "a/" * 3000 + ".r",
            'File "' + "a" * 5000,
            "Current thread 0x1 (most recent call first):",
            '  File "' + '"' * 5000 + '", line 1 in f',
        ]
        * 50
    )
    began = time.perf_counter()
    assert all(len(t.frames) <= MAX_FRAMES for t in parse_traces(hostile))
    assert time.perf_counter() - began < 5


@settings(deadline=None, max_examples=200)
@given(st.text())
def test_never_raises_on_arbitrary_text(text: str) -> None:
    for trace in parse_traces(text):
        assert 0 <= trace.start <= trace.end <= len(text)


def _mutate(line: str, how: int, cut: int, noise: str) -> str:
    if how == 0:
        return line[:cut]
    if how == 1:
        return line[cut:]
    if how == 2:
        return line[:cut] + noise + line[cut:]
    return line


@settings(deadline=None, max_examples=200)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(ALL_LINES),
            st.integers(0, 3),
            st.integers(0, 80),
            st.text(max_size=5),
        ),
        max_size=40,
    ),
    st.sampled_from(["\n", "\r\n", "\r"]),
)
def test_never_raises_on_mutated_fixture_lines(
    parts: list[tuple[str, int, int, str]], newline: str
) -> None:
    text = newline.join(_mutate(*part) for part in parts)
    found = parse_traces(text)
    for trace in found:
        assert 0 <= trace.start <= trace.end <= len(text)
        assert trace.frames or trace.exception is not None
    assert [t.start for t in found] == sorted(t.start for t in found)


def _python_trace(frames: int, name: str = "f") -> str:
    lines = [f'  File "{name}{i}.py", line {i + 1}, in g{i}' for i in range(frames)]
    return "\n".join(["Traceback (most recent call last):", *lines, "ValueError: x"]) + "\n"


def test_a_runaway_trace_keeps_its_innermost_frames_and_says_so() -> None:
    parsed = find_traces(_python_trace(2_000))
    (trace,) = parsed.traces
    assert len(trace.frames) == MAX_FRAMES and trace.omitted_frames == 2_000 - MAX_FRAMES
    assert trace.frames[-1].file == "f1999.py"  # the crash site
    assert trace.frames[0].file == f"f{2_000 - MAX_FRAMES}.py"
    assert parsed.truncated == [
        "text: 2,000 frames in the python trace at character 0; kept the innermost 512"
    ]


def test_a_newest_first_runaway_trace_keeps_its_first_frames() -> None:
    frames = "".join(f"\tat com.x.C.m{i}(C.java:{i + 1})\n" for i in range(1_000))
    (trace,) = parse_traces("java.lang.IllegalStateException: boom\n" + frames)
    assert trace.frames[-1].function == "m0" and trace.frames[0].function == "m511"
    assert trace.omitted_frames == 1_000 - MAX_FRAMES


def test_traces_beyond_the_cap_are_ignored_and_counted() -> None:
    parsed = find_traces("\n".join(_python_trace(1, f"t{k}_") for k in range(40)))
    assert len(parsed.traces) == MAX_TRACES
    assert parsed.traces[-1].frames[0].file == "t31_0.py"  # the first ones, in text order
    assert parsed.truncated == ["text: 8 traces beyond the first 32 ignored"]
    flood = find_traces(_python_trace(1) * 500)
    assert flood.truncated == ["text: at least 168 traces beyond the first 32 ignored"]


def test_lines_beyond_the_scan_limit_are_not_searched_and_that_is_said() -> None:
    text = "x\n" * MAX_SCANNED_LINES + _python_trace(3)
    parsed = find_traces(text)
    assert parsed.traces == []
    assert parsed.truncated == [
        f"text: not searched for traces beyond its first {MAX_SCANNED_LINES:,} lines "
        f"(character {2 * MAX_SCANNED_LINES - 1:,} on)"
    ]
    assert find_traces("x\n" * (MAX_SCANNED_LINES - 5) + _python_trace(3)).traces
    assert find_traces("\n" * 2 * MAX_SCANNED_LINES).truncated == []  # nothing there


def test_unicode_digits_that_int_refuses_are_not_positions() -> None:
    # `"²".isdigit()` is true, `int("²")` raises: these crashed every caller of the parsers.
    for text in ("Error: x\n    at f (a.js:1:²)\n", "f@a.js:²\ng@b.js:1:2\n"):
        assert all(f.line != "²" for t in parse_traces(text) for f in t.frames)
    (trace,) = parse_traces("Error: x\n    at f (a.js:٣:1)\n")  # Arabic-Indic 3 is a digit
    assert trace.frames[0].line == 3


@settings(deadline=None, max_examples=100)
@given(
    st.text(
        alphabet=st.characters(categories=["Nd", "No", "Nl"]) | st.sampled_from(":\n @a"),
        max_size=60,
    )
)
def test_never_raises_on_text_full_of_unicode_digits(text: str) -> None:
    parse_traces("at f (a.js:" + text + ")\n" + text)


def _split_by_walking(name: str, sep: str) -> tuple[str | None, str]:
    """`split_qualified` as it was first written: the last `sep` outside brackets."""
    depth, cut, i = 0, -1, 0
    while i < len(name):
        if name[i] in "<[(":
            depth += 1
        elif name[i] in ">])" and depth > 0:
            depth -= 1
        elif depth == 0 and name.startswith(sep, i):
            cut, i = i, i + len(sep)
            continue
        i += 1
    return (None, name) if cut <= 0 else (name[:cut], name[cut + len(sep) :])


@given(st.text(alphabet="ab.:$<>[]()", max_size=12), st.sampled_from([".", ":", "::", "$"]))
def test_split_qualified_splits_at_the_last_separator_outside_brackets(name: str, sep: str) -> None:
    assert split_qualified(name, sep) == _split_by_walking(name, sep)
    assert split_qualified("a.b.C$1.run", ".") == ("a.b.C$1", "run")
    assert split_qualified("a.B<T.U>.m(x.y)", ".") == ("a.B<T.U>", "m(x.y)")
