from __future__ import annotations

from diagnoser.intake.report import Frame
from diagnoser.intake.traces._native_frames import (
    drop_return_type,
    lldb_frame,
    numbered,
    split_function,
    valgrind_frame,
)


def test_cpp_names_split_into_owner_and_function() -> None:
    assert split_function("yaml::Emitter::Write(std::string const&)") == ("yaml::Emitter", "Write")
    assert split_function("Foo::bar (this=0x1, x=1)") == ("Foo", "bar")
    assert split_function("objecthandle_equal(QPDFObjectHandle, QPDFObjectHandle) ()") == (
        None,
        "objecthandle_equal",
    )
    assert split_function("std::map<int, std::pair<int, int> >::at(int const&) const") == (
        "std::map<int, std::pair<int, int> >",
        "at",
    )
    assert split_function("??") == (None, None)
    assert split_function("(below main)") == (None, "(below main)")


def test_pretty_function_loses_its_return_type() -> None:
    assert drop_return_type("int parse_value(const char*)") == "parse_value(const char*)"
    assert drop_return_type("std::vector<int, A> ns::C::get() const") == "ns::C::get() const"
    assert drop_return_type("parse_value") == "parse_value"


def test_a_binary_is_not_a_file_and_a_source_location_is() -> None:
    assert numbered("    #2 0x7f in __libc_start_main (/lib/libc.so.6+0x21b96)") == (
        2,
        Frame(function="__libc_start_main", language="c"),
    )
    assert numbered("#5  0x7f in start_thread () from /lib/libpthread.so.0") == (
        5,
        Frame(function="start_thread", language="c"),
    )
    assert numbered("    #0 0x55 in png_read_row /src/libpng/pngread.c:534:9") == (
        0,
        Frame(
            file="/src/libpng/pngread.c", line=534, column=9, function="png_read_row", language="c"
        ),
    )
    assert valgrind_frame("??? (in /usr/bin/app)") == Frame(language="c")


def test_lines_that_only_look_numbered_are_not_frames() -> None:
    for text in ("#1 Introduction", "#42", "#0 fix it at once", "#2 see src/foo.c"):
        assert numbered(text) is None, text
    assert lldb_frame("frame #1 of the film") is None
