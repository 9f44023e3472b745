"""The frame lines of native stacks, one line → one `Frame`: gdb and sanitizer `#N` frames,
lldb `frame #N:` and valgrind `at`/`by` frames, and the C++ names in them.

A C++ name splits into owner and function: `ns::C::f(int) const` → (`ns::C`, `f`); gdb's
argument values (`f (a=1)`), parameter types and qualifiers are dropped. A frame that
names only a binary (`(/usr/bin/app+0x4f5e)`, `from /lib/libc.so.6`, `(in /usr/bin/app)`)
has no file.
"""

from __future__ import annotations

import re

from diagnoser.intake.report import Frame
from diagnoser.intake.traces._common import language_of, split_location, split_qualified

NUMBERED = re.compile(r"^\s*#(?P<n>\d{1,4})\s+(?P<rest>\S.*)$")
"""A numbered frame line (gdb, sanitizers), before its body is read."""
PRETTY_WITH = re.compile(r" \[with .*\]$")
"""The template arguments C++'s `__PRETTY_FUNCTION__` appends."""
_LLDB_FRAME = re.compile(
    r"^\s*(?:\*\s+)?frame #(?P<n>\d{1,4}): (?:0x[0-9a-fA-F]+ )?"
    r"(?P<image>[^\s`]+)(?:`(?P<rest>.+))?$"
)
_ADDRESS = re.compile(r"^0x[0-9a-fA-F]+\s+")
_BUILD_ID = re.compile(r"\s*\(BuildId: [0-9a-fA-F]+\)\s*$")
_BINARY = re.compile(r"\s*\((?:[^()\s]*)\+0x[0-9a-fA-F]+\)$")
_FROM = re.compile(r" from (?P<lib>\S+)$")
_QUALIFIERS = re.compile(r"(?:\s+(?:const|volatile|&&|&|noexcept))+$")
_NO_FUNCTION = frozenset({"??", "???", "<null>"})


def numbered(text: str) -> tuple[int, Frame] | None:
    """A `#N` frame of a sanitizer (`#0 0x… in f x.c:5:3`, `#1 0x… in main (bin+0x…)`,
    TSan `#0 f x.c:5 (bin+0x…)`) or gdb (`#0  0x… in f (a=1) at x.c:5`, `#1  f () from
    /lib/libc.so.6`)."""
    m = NUMBERED.match(text)
    if m is None:
        return None
    rest = _BUILD_ID.sub("", m.group("rest"))
    address = _ADDRESS.match(rest)
    rest = rest[address.end() :] if address else rest
    called = rest.startswith("in ")
    rest = rest[3:] if called else rest
    file: str | None = None
    line = col = None
    placed = False  # the frame ends as a frame does: a location, a library or a binary
    head, sep, loc = rest.rpartition(" at ")
    if sep and is_location(loc.strip()):
        rest, placed = head, True
        file, line, col = split_location(loc.strip())
    elif (lib := _FROM.search(rest)) is not None:
        rest, placed = rest[: lib.start()], True
    else:
        binary = _BINARY.search(rest)
        if binary is not None:
            rest, placed = rest[: binary.start()], True
        head, _, last = rest.rstrip().rpartition(" ")
        if is_location(last):
            rest, placed = head, True
            file, line, col = split_location(last)
    if not placed and not (address and called):
        return None
    return int(m.group("n")), frame_of(rest, file, line, col)


def lldb_frame(text: str) -> tuple[int, Frame] | None:
    """`frame #0: 0x… a.out\\`ns::f(int) at x.cpp:5:3` / `… libdyld.dylib\\`start + 1`."""
    if "frame #" not in text:
        return None
    m = _LLDB_FRAME.match(text)
    if m is None:
        return None
    rest = m.group("rest") or ""
    file: str | None = None
    line = col = None
    head, sep, loc = rest.rpartition(" at ")
    if sep and is_location(loc.strip()):
        rest = head
        file, line, col = split_location(loc.strip())
    rest = re.sub(r" \+ \d+$", "", rest).rpartition("[inlined] ")[2]
    return int(m.group("n")), frame_of(rest, file, line, col)


def is_location(token: str) -> bool:
    """`x.c:5`, `/src/x.cc:12:3`: a file with a line number."""
    file, line, _ = split_location(token)
    return line is not None and bool(file) and "(" not in file and ")" not in file


def frame_of(name: str, file: str | None, line: int | None, col: int | None) -> Frame:
    module, function = split_function(name)
    default = "cpp" if module or (function and "::" in function) else "c"
    return Frame(
        file=file,
        line=line or None,
        column=col,
        function=function,
        module=module,
        language=language_of(file, default),
    )


def split_function(name: str) -> tuple[str | None, str | None]:
    """`ns::C::f(int) const` → (`ns::C`, `f`); gdb's `f (a=1)` → (None, `f`)."""
    name = name.strip()
    if name.count("(") > name.count(")"):  # cut short (`operator==(QPDFObje`)
        name = name[: name.find("(")].rstrip()
    cut = group_start(name)
    if cut is not None and cut > 0 and name[cut - 1] == " ":  # gdb's argument values
        name = name[: cut - 1].rstrip()
    name = _QUALIFIERS.sub("", name)
    cut = group_start(name)
    if cut is not None and cut > 0:  # the parameter types
        name = name[:cut]
    if not name or name in _NO_FUNCTION:
        return None, None
    return split_qualified(name, "::")


def group_start(text: str) -> int | None:
    """Where the parenthesised group ending `text` opens, if `text` ends with one."""
    if not text.endswith(")"):
        return None
    depth = 0
    for k in range(len(text) - 1, -1, -1):
        if text[k] == ")":
            depth += 1
        elif text[k] == "(":
            depth -= 1
            if depth == 0:
                return k
    return None


def valgrind_frame(rest: str) -> Frame:
    """`foo (test.c:6)`, `free (vg_replace_malloc.c:540)`, `??? (in /usr/bin/app)`."""
    rest = rest.strip()
    cut = group_start(rest)
    file: str | None = None
    line = col = None
    if cut is not None and cut > 0 and rest[cut - 1] == " ":
        where = rest[cut + 1 : -1]
        rest = rest[: cut - 1]
        if not where.startswith("in ") and is_location(where):
            file, line, col = split_location(where)
    return frame_of(rest, file, line, col)


def drop_return_type(pretty: str) -> str:
    """`int ns::f(const char*)` (C++ `__PRETTY_FUNCTION__`) → `ns::f(const char*)`."""
    depth = 0
    cut = -1
    for k, ch in enumerate(_QUALIFIERS.sub("", PRETTY_WITH.sub("", pretty))):
        if ch in "<([":
            depth += 1
        elif ch in ">)]" and depth > 0:
            depth -= 1
        elif ch == " " and depth == 0:
            cut = k
    return pretty[cut + 1 :] if cut >= 0 else pretty
