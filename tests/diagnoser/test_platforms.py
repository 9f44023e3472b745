"""Which platforms a report names and which a file is written for."""

from __future__ import annotations

import pytest

from diagnoser.platforms import UNIX, for_other_platforms, named_platforms, path_platforms


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("[Ubuntu 20.04] net_if_stats() reports a wrong speed", {"linux"}),
        ("[macOS] p.cmdline() fails with OSError", {"macos"}),
        ("Crashes on Windows 10 (MSVC build)", {"windows"}),
        ("Python 3.12 on riscv64 segfaults", {"riscv"}),
        ("uname: Linux 5.4.0-100-generic x86_64", {"linux", "x86"}),
        ("all windows close and the MAC address is wrong", set()),
        ("the arm of the chart, a twin axis", set()),
    ],
)
def test_a_report_names_platforms_by_their_usual_names(text: str, named: set[str]) -> None:
    assert named_platforms(text) == named


@pytest.mark.parametrize(
    ("path", "written_for"),
    [
        ("psutil/_pslinux.py", {"linux"}),
        ("psutil/_psosx.py", {"macos"}),
        ("psutil/arch/freebsd/proc.c", {"bsd"}),
        ("sys_windows.go", {"windows"}),
        ("switch_x64_msvc.h", {"x86", "windows"}),
        ("src/mac/window.m", {"macos"}),
        ("switch_arm_unix.h", {"arm", *UNIX}),
        ("src/twin.c", set()),
        ("crypto/hmac.c", set()),
        ("src/print.c", set()),
        ("lib/farm.go", set()),
    ],
)
def test_a_path_names_the_platforms_its_file_is_for(path: str, written_for: set[str]) -> None:
    assert path_platforms(path) == written_for


def test_only_files_for_other_platforms_of_a_named_family_are_ruled_out() -> None:
    linux = named_platforms("On Ubuntu 22.04")
    assert for_other_platforms("psutil/_psaix.py", linux)
    assert for_other_platforms("sys_windows.go", linux)
    assert not for_other_platforms("psutil/_pslinux.py", linux)
    assert not for_other_platforms("sys_unix.go", linux)
    assert not for_other_platforms("switch_arm_unix.h", linux)  # no processor was named
    assert not for_other_platforms("psutil/_common.py", linux)
    riscv = named_platforms("On Debian, riscv64")
    assert for_other_platforms("switch_arm_unix.h", riscv)
    assert not for_other_platforms("switch_riscv_unix.h", riscv)
