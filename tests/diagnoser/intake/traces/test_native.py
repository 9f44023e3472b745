from __future__ import annotations

from diagnoser.constants import MAX_FRAMES
from diagnoser.intake.report import FrameOrder, TraceException, TraceFormat
from diagnoser.intake.traces import native, parse_traces
from tests.diagnoser.intake.traces.conftest import read_fixture, where


def test_asan_report_keeps_the_crash_stack_and_spans_the_rest_up_to_its_summary() -> None:
    text = read_fixture("native_asan.txt")
    (trace,) = native.parse(text)
    assert trace.format is TraceFormat.NATIVE
    assert trace.source_order is FrameOrder.NEWEST_FIRST
    assert trace.exception is not None
    assert trace.exception.type == "heap-use-after-free"
    assert trace.exception.message is not None
    assert trace.exception.message.startswith("on address 0x602000000014 at pc 0x55d0c1")
    assert [(f.module, f.function, f.file, f.line, f.column) for f in trace.frames] == [
        (None, "_start", None, None, None),
        (None, "__libc_start_main", None, None, None),
        (None, "main", None, None, None),
        ("yaml::Emitter", "Write", "/src/yaml-cpp/src/emitter.cpp", 120, 3),
        (None, "png_read_row", "/src/libpng/pngread.c", 534, 9),
    ]
    assert [f.language for f in trace.frames[-2:]] == ["cpp", "c"]
    assert text[trace.start :].startswith("==31337==ERROR: AddressSanitizer")
    # the `freed by` and `previously allocated by` stacks are spanned, not kept
    assert text[: trace.end].endswith("pngread.c:534:9 in png_read_row")
    assert "png_free_row" not in {f.function for f in trace.frames}


def test_asan_report_without_summary_still_spans_its_later_stacks() -> None:
    text = read_fixture("native_asan.txt").split("SUMMARY:")[0]
    (trace,) = parse_traces(text)
    assert text[: trace.end].endswith("png_alloc_row /src/libpng/pngmem.c:41:10")
    assert trace.frames[-1].function == "png_read_row"


def test_sanitizer_kinds_segv_leaks_and_thread_races() -> None:
    text = (
        "==7==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000000 (pc 0x1 T0)\n"
        "==7==The signal is caused by a READ memory access.\n"
        "==7==Hint: address points to the zero page.\n"
        "    #0 0x4f1 in node_value /src/tree.c:9:12\n"
        "    #1 0x4f2 in main /src/main.c:3:5\n"
        "\n"
        "==9==ERROR: LeakSanitizer: detected memory leaks\n"
        "\n"
        "Direct leak of 16 byte(s) in 1 object(s) allocated from:\n"
        "    #0 0x4c1 in malloc (/usr/bin/tool+0x4c1)\n"
        "    #1 0x4c2 in buf_new /src/buf.c:20:9\n"
        "\n"
        "==================\n"
        "WARNING: ThreadSanitizer: data race (pid=4242)\n"
        "  Write of size 4 at 0x7b04 by thread T1:\n"
        "    #0 counter_inc /src/counter.c:14:11 (app+0xd1a2)\n"
        "    #1 worker /src/pool.c:77:5 (app+0xd2b3)\n"
    )
    segv, leak, race = native.parse(text)
    assert segv.exception == TraceException(
        type="SEGV", message="on unknown address 0x000000000000 (pc 0x1 T0)"
    )
    assert where(segv) == [("/src/main.c", 3, "main"), ("/src/tree.c", 9, "node_value")]
    assert leak.exception == TraceException(type="detected memory leaks")
    assert where(leak) == [("/src/buf.c", 20, "buf_new"), (None, None, "malloc")]
    assert race.exception == TraceException(type="data race")
    assert where(race) == [("/src/pool.c", 77, "worker"), ("/src/counter.c", 14, "counter_inc")]


def test_ubsan_one_liner_and_ubsan_with_a_stack() -> None:
    text = (
        "/src/math/sum.c:12:5: runtime error: signed integer overflow: "
        "2147483647 + 1 cannot be represented in type 'int'\n"
        "done\n"
        "\n\n\n\n\n\n\n\n\n\n\n\n\n"
        "lib/scale.cc:40:18: runtime error: division by zero\n"
        "    #0 0x51 in scale::ratio(int, int) lib/scale.cc:40:18\n"
        "    #1 0x52 in main app/main.cc:8:3\n"
    )
    one, stacked = native.parse(text)
    assert one.exception == TraceException(
        type="runtime error",
        message="signed integer overflow: 2147483647 + 1 cannot be represented in type 'int'",
    )
    assert [(f.file, f.line, f.column) for f in one.frames] == [("/src/math/sum.c", 12, 5)]
    assert stacked.exception == TraceException(type="runtime error", message="division by zero")
    assert [(f.module, f.function) for f in stacked.frames] == [
        (None, "main"),
        ("scale", "ratio"),
    ]


def test_gdb_backtrace_in_an_issue_ignores_headings_references_and_preprocessor_lines() -> None:
    text = read_fixture("native_gdb_issue.md")
    (trace,) = parse_traces(text)
    assert trace.format is TraceFormat.NATIVE
    assert trace.exception == TraceException(type="SIGSEGV", message="Segmentation fault")
    assert [(f.module, f.function, f.file, f.line) for f in trace.frames] == [
        (None, None, None, None),  # `?? ()`
        (None, "__libc_start_main_impl", None, None),  # `from …/libc.so.6`: no file
        (None, "__libc_start_call_main", "../sysdeps/nptl/libc_start_call_main.h", 58),
        (None, "main", "tools/cfgtool.c", 27),
        ("cfg::Loader", "load", "src/cfg/loader.cc", 64),  # inlined: no address
        ("cfg::Loader", "load_section", "src/cfg/loader.cc", 118),  # wrapped on two lines
        (None, "cfg_list_first", "src/cfg/list.c", 42),
    ]
    assert text[trace.start :].startswith("Program received signal SIGSEGV")
    assert text[: trace.end].endswith("#6  0x00005555555550a5 in ?? ()")


def test_markdown_numbered_lines_and_preprocessor_lines_are_not_frames() -> None:
    text = (
        "#0 Overview\n#1 Build it at home\n#2 see src/foo.c\n#123\n"
        "#include <stdio.h>\n#define N 4\n#0 in the list\n"
    )
    assert native.parse(text) == []
    assert parse_traces(text) == []


def test_a_run_without_header_starts_at_frame_zero_and_counts_up_by_one() -> None:
    text = (
        "#3  0x01 in late (x=1) at late.c:3\n"
        "\n"
        "#0  0x02 in first () at a.c:1\n"
        "#1  0x03 in second () at b.c:2\n"
        "#3  0x04 in skipped () at c.c:3\n"
    )
    (trace,) = native.parse(text)
    assert trace.exception is None
    assert where(trace) == [("b.c", 2, "second"), ("a.c", 1, "first")]


def test_gdb_stop_line_is_the_frame_when_no_backtrace_follows() -> None:
    text = (
        "Program received signal SIGFPE, Arithmetic exception.\n"
        "0x000055555555513d in divide (a=1, b=0) at calc.c:7\n"
        "7\t  return a / b;\n"
    )
    (trace,) = native.parse(text)
    assert trace.exception == TraceException(type="SIGFPE", message="Arithmetic exception")
    assert where(trace) == [("calc.c", 7, "divide")]


def test_bt_full_locals_between_frames_are_skipped() -> None:
    text = (
        "#0  0x01 in leaf (n=0) at t.c:4\n"
        "        p = 0x0\n"
        "        i = 3\n"
        "#1  0x02 in run () at t.c:9\n"
        "No locals.\n"
        "#2  0x03 in main () at t.c:12\n"
    )
    (trace,) = native.parse(text)
    assert [f.function for f in trace.frames] == ["main", "run", "leaf"]


def test_lldb_stop_shown_then_backtraced_is_one_trace() -> None:
    text = read_fixture("native_lldb.txt")
    (trace,) = native.parse(text)
    assert trace.exception == TraceException(type="EXC_BAD_ACCESS", message="code=1, address=0x0")
    assert [(f.module, f.function, f.file, f.line, f.column) for f in trace.frames] == [
        (None, "start", None, None, None),
        (None, "main", "main.c", 5, 3),
        ("img::Reader", "open", "reader.cpp", 88, 5),
        (None, "decode_header", "decode.c", 31, 12),
    ]
    assert text[trace.start :].startswith("* thread #1")
    assert text[: trace.end].endswith("dyld`start + 2224")


def test_lldb_signal_stop_reason_and_inlined_frames() -> None:
    text = (
        "* thread #2, name = 'worker', stop reason = signal SIGABRT\n"
        "  * frame #0: 0x00000001 libsystem_kernel.dylib`__pthread_kill + 8\n"
        "    frame #1: 0x00000002 app`pool::drain() [inlined] pool::take(this=0x1)"
        " at pool.cc:30:7\n"
    )
    (trace,) = native.parse(text)
    assert trace.exception == TraceException(type="SIGABRT")
    assert [(f.module, f.function, f.file) for f in trace.frames] == [
        ("pool", "take", "pool.cc"),
        (None, "__pthread_kill", None),
    ]


def test_valgrind_error_keeps_its_first_stack_and_spans_the_block_stacks() -> None:
    text = read_fixture("native_valgrind.txt")
    (trace,) = parse_traces(text)
    assert trace.format is TraceFormat.NATIVE
    assert trace.exception == TraceException(type="Invalid read", message="Invalid read of size 4")
    assert where(trace) == [
        ("main.c", 21, "main"),
        ("parser.c", 140, "parse_expr"),
        ("lexer.c", 77, "token_next"),
    ]
    assert text[trace.start :].startswith("==4821== Invalid read of size 4")
    assert text[: trace.end].endswith("token_new (lexer.c:40)")


def test_valgrind_signal_leak_and_binary_only_frames() -> None:
    text = (
        "==12== Process terminating with default action of signal 11 (SIGSEGV)\n"
        "==12==  Access not within mapped region at address 0x0\n"
        "==12==    at 0x10914D: Shape::area() const (shape.cpp:18)\n"
        "==12==    by 0x4A2DD8F: (below main) (libc_start_call_main.h:58)\n"
        "==12==    by 0x109060: ??? (in /home/u/app)\n"
        "==12==\n"
        "==12== 40 bytes in 1 blocks are definitely lost in loss record 1 of 1\n"
        "==12==    at 0x4848899: malloc (in /usr/libexec/valgrind/vgpreload_memcheck.so)\n"
        "==12==    by 0x1091A2: make_list (list.c:11)\n"
    )
    crash, leak = native.parse(text)
    assert crash.exception is not None and crash.exception.type == "SIGSEGV"
    assert [(f.module, f.function, f.file) for f in crash.frames] == [
        (None, None, None),
        (None, "(below main)", "libc_start_call_main.h"),
        ("Shape", "area", "shape.cpp"),
    ]
    assert leak.exception is not None and leak.exception.type == "definitely lost"
    assert where(leak) == [("list.c", 11, "make_list"), (None, None, "malloc")]


def test_failed_asserts_glibc_cpp_and_bsd() -> None:
    text = (
        "cfgtool: src/parser.c:123: parse_value: Assertion `n > 0' failed.\n"
        "Aborted (core dumped)\n"
        "app: lib/tree.cc:88: void tree::Node::attach(tree::Node*): "
        "Assertion 'child != nullptr' failed.\n"
        "Assertion failed: (len < cap), function buf_push, file buf.c, line 41.\n"
    )
    glibc, cpp, bsd = native.parse(text)
    assert glibc.exception == TraceException(type="assertion failed", message="n > 0")
    assert where(glibc) == [("src/parser.c", 123, "parse_value")]
    assert [(f.module, f.function, f.file, f.line) for f in cpp.frames] == [
        ("tree::Node", "attach", "lib/tree.cc", 88)
    ]
    assert bsd.exception == TraceException(type="assertion failed", message="len < cap")
    assert where(bsd) == [("buf.c", 41, "buf_push")]


def test_cpp_names_templates_operators_and_qualifiers() -> None:
    text = (
        "#0 0x1 in std::vector<int, std::allocator<int> >::at(unsigned long) const "
        "/usr/include/c++/12/bits/stl_vector.h:1124:2\n"
        "#1 0x2 in Grid::operator()(int, int) /src/grid.cc:9:3\n"
        "#2 0x3 in operator==(Obj, Obj) (/usr/lib/libobj.so+0x10)\n"
        "#3 0x4 in main::$_0::operator()() const /src/main.cc:5:1\n"
        "#4 0x5 in run(Grid&) (\n"
    )
    (trace,) = native.parse(text)
    assert [(f.module, f.function) for f in trace.frames] == [
        (None, "run"),  # cut short: the parameters are dropped
        ("main::$_0", "operator()"),
        (None, "operator=="),
        ("Grid", "operator()"),
        ("std::vector<int, std::allocator<int> >", "at"),
    ]


def test_a_runaway_recursion_keeps_the_innermost_frames() -> None:
    text = "".join(f"    #{i} 0x{i:x} in f{i} /src/r.c:{i + 1}:1\n" for i in range(700))
    (trace,) = native.parse("==1==ERROR: AddressSanitizer: stack-overflow on address 0x1\n" + text)
    assert len(trace.frames) == MAX_FRAMES and trace.omitted_frames == 700 - MAX_FRAMES
    assert trace.frames[-1].function == "f0"
    assert trace.exception is not None and trace.exception.type == "stack-overflow"
