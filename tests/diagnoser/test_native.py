"""Which reports name a failure only native code can have, and which files are native."""

from __future__ import annotations

import pytest

from diagnoser.native import describes_native_failure, is_native


@pytest.mark.parametrize(
    "text",
    [
        "Segmentation fault (core dumped)",
        "regex.search segfaults on a fuzzy pattern",
        "Program received signal SIGSEGV, Segmentation fault.",
        "crashes with SIGBUS on arm64",
        "==123==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x6020",
        "a use-after-free in the iterator",
        "free(): double free detected in tcache 2",
        "Exception code 0xC0000005 (access violation) on Windows",
        "Thread 1: EXC_BAD_ACCESS (code=1, address=0x0)",
        "calling it crashes the Python interpreter",
        "Fatal Python error: Segmentation fault",
        "a buffer overflow in the CSM loader",
    ],
)
def test_failures_of_memory_safety_are_native(text: str) -> None:
    assert describes_native_failure(text)


@pytest.mark.parametrize(
    "text",
    [
        "TypeError: Cannot read properties of undefined (reading 'length')",
        "memory keeps growing when observers are disposed",  # a managed program leaks too
        "the app crashes on start with a NullPointerException",
        "ValueError: buffer is too small",
        "the default faulty value is wrong",
    ],
)
def test_other_failures_are_not(text: str) -> None:
    assert not describes_native_failure(text)


def test_native_files_by_extension() -> None:
    native = ["src/_regex.c", "src/core/object.cpp", "include/x.h", "src/lib.rs", "a/b.hpp"]
    managed = ["regex/regex.py", "lib/index.js", "src/index.ts", "Foo.java", "main.go", "README"]
    assert all(map(is_native, native))
    assert not any(map(is_native, managed))
