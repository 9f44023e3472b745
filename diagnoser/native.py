"""Native code beside a managed wrapper: which reports describe a failure only native code
can have, and which files are native. Pure.

A package that binds C, C++ or Rust to Python, JavaScript or Ruby (a CPython extension,
pyo3, N-API) is mostly wrapper files by count, and a report against it names the
wrapper's functions (`psutil.net_if_stats()`, `regex.compile(…)`), so the wrapper's
words match best. But a segmentation fault, a double free, a buffer overflow or a
sanitizer's report cannot happen in the managed code: its runtime checks that. Such a
report's fault is in the native files (`diagnoser.candidates` puts them first).

The words are the failure's own names, in any project: a memory leak is not among them
(a managed program leaks too).
"""

from __future__ import annotations

import re

from repomap import language_for

NATIVE_LANGUAGES = frozenset({"c", "cpp", "rust"})
"""Compiled without a memory-safe runtime around them (Rust: its `unsafe` blocks, FFI)."""

_NATIVE_FAILURE = re.compile(
    r"segmentation\s+fault|seg-?fault|\bSIG(?:SEGV|BUS|ILL)\b|core\s+dumped"
    r"|access\s+violation|\bEXC_BAD_ACCESS\b|0xC0000005"
    r"|(?:heap|stack|global)-buffer-overflow|\bbuffer\s+overflow|use[- ]after[- ]free"
    r"|double[- ]free|\b(?:Address|Memory|Thread|UndefinedBehavior)Sanitizer\b"
    r"|null\s+pointer\s+dereference|free\(\):\s+invalid|malloc\(\):\s+\w"
    r"|crash(?:es|ed)?\s+the\s+(?:\w+\s+)?interpreter|Fatal\s+Python\s+error",
    re.IGNORECASE,
)
"""A failure of memory safety, as reports and runtimes name it: a segfault (`SIGSEGV`,
`core dumped`, Windows' access violation, Apple's `EXC_BAD_ACCESS`), a sanitizer's report
(`heap-buffer-overflow`, `use-after-free`), glibc's allocator aborts (`double free`,
`free(): invalid pointer`), and an interpreter killed by its extension (`Fatal Python
error`, "crashes the interpreter")."""


def describes_native_failure(text: str) -> bool:
    """Whether the report names a failure that only code outside a memory-safe runtime
    can have (`Segmentation fault`, `SIGSEGV`, `double free`, `heap-buffer-overflow`)."""
    return _NATIVE_FAILURE.search(text) is not None


def is_native(path: str) -> bool:
    """A C, C++ or Rust source or header, by its extension."""
    return language_for(path) in NATIVE_LANGUAGES
