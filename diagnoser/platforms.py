"""Operating systems and processor families: which a report names, and which a file is
written for. Pure.

Portable code keeps one file per platform (`_pslinux.py` and `_psaix.py`, Go's
`sys_linux.go` and `sys_windows.go`, `arch/osx/proc.c`, `switch_riscv_unix.h`), and every
one of them defines the same names, so a report's words match them all alike. A report
that says where it failed ("On Ubuntu 20.04", "[macOS]", "on riscv64") rules out the
files written only for the others (`diagnoser.relevance` weighs them less).
"""

from __future__ import annotations

import re

PLATFORMS: dict[str, tuple[str, str, str]] = {
    "linux": (
        r"linux|ubuntu|debian|fedora|centos|rhel|red\s?hat|alpine|manjaro|glibc|musl|wsl",
        r"linux",
        r"linux",
    ),
    "macos": (r"mac\s?os|os\s?x|darwin|macbook|apple\s+silicon|xcode", r"mac", r"osx|darwin|macos"),
    "windows": (
        r"(?-i:Windows)|win(?:32|64|10|11)|msvc|mingw|cygwin",
        r"win",
        r"windows|win32|win64|msvc|mingw",
    ),
    "bsd": (r"(?:free|open|net)?bsd|dragonfly", r"", r"(?:free|open|net)?bsd|dragonfly"),
    "aix": (r"aix", r"", r"aix"),
    "sunos": (r"solaris|sunos|illumos|smartos", r"", r"sunos|solaris|illumos"),
    "riscv": (r"risc-?v(?:32|64)?", r"", r"riscv(?:32|64)?"),
    "arm": (r"aarch64|arm64|armv\d\w*", r"arm|arm32", r"aarch64|arm64"),
    "x86": (r"x86(?:_64)?|amd64|i[3-6]86", r"x64|i386|ia32", r"x86(?:_64)?|amd64"),
    "ppc": (r"ppc(?:64)?(?:le)?|power\s?pc", r"", r"ppc(?:64)?(?:le)?|powerpc"),
    "s390": (r"s390x?", r"", r"s390x?"),
    "mips": (r"mips(?:64)?(?:el)?", r"", r"mips(?:64)?(?:el)?"),
}
"""Each platform: how a report names it (whole words, any case but `Windows`: a GUI's
"windows" are not the system), and how a path does — a whole part of it (a folder, or a
file name's part between `_`, `-` and `.`: `arch/mac/`, `switch_arm_unix.h`), or the
longer names also after a short prefix (psutil's `_pslinux.py`, `_psosx.py`). Processor
families count as platforms too: an `x86_64` in a report's version line is the machine
it ran on."""
UNIX = frozenset({"linux", "macos", "bsd", "aix", "sunos"})
"""What a `unix` or `posix` file is written for."""

_REPORT = {
    name: re.compile(rf"(?<![\w-])(?:{said})(?![\w-])", re.IGNORECASE)
    for name, (said, _, _) in PLATFORMS.items()
}
_PATH = {
    name: re.compile(
        rf"(?:^|[/_.-])(?:{whole}{'|' if whole else ''}[a-z]{{0,3}}(?:{fused}))(?=$|[/_.-])",
        re.IGNORECASE,
    )
    for name, (_, whole, fused) in PLATFORMS.items()
}
_UNIX_PATH = re.compile(r"(?:^|[/_.-])(?:unix|posix)(?=$|[/_.-])", re.IGNORECASE)
_OS = frozenset({"linux", "macos", "windows", "bsd", "aix", "sunos"})


def named_platforms(text: str) -> frozenset[str]:
    """The platforms a report names (`linux` for "Ubuntu 20.04", `arm` for "aarch64")."""
    return frozenset(name for name, said in _REPORT.items() if said.search(text))


def path_platforms(path: str) -> frozenset[str]:
    """The platforms a file is written for, by its path (`arch/osx/proc.c` → macos,
    `sys_unix.go` → every Unix)."""
    found = frozenset(name for name, part in _PATH.items() if part.search(path))
    return found | UNIX if _UNIX_PATH.search(path) else found


def for_other_platforms(path: str, named: frozenset[str]) -> bool:
    """Whether a file is written only for platforms other than the named ones, in a family
    the report names (operating systems, processors): `_psaix.py` when the report says
    Linux, `switch_arm_unix.h` when it says riscv64; not `_pslinux.py`, not `sys_unix.go`
    for Linux, and not a portable file."""
    written_for = path_platforms(path)
    for family in {_family(name) for name in named}:
        mine = {name for name in written_for if _family(name) == family}
        if mine and not mine & named:
            return True
    return False


def _family(platform: str) -> str:
    return "os" if platform in _OS else "cpu"
