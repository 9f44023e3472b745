from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from repomap import allocator

GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"
FRAGMENTED_HEAP = """
import sys
from pathlib import Path
from repomap import allocator

def rss_mb():
    status = Path("/proc/self/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0]) // 1024

blobs = [bytes(2048) + i.to_bytes(4, "little") for i in range(40_000)]  # ~80 MB
kept = blobs[::50]  # one in fifty stays: the freed rest is pinned behind them
del blobs
before = rss_mb()
released = allocator.release()
print(before, rss_mb(), released, allocator.limit_arenas())
"""


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc only")
def test_release_hands_freed_heap_back_to_the_system() -> None:
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    out = subprocess.run(
        [sys.executable, "-c", FRAGMENTED_HEAP], env=env, capture_output=True, text=True,
        check=True,
    )  # fmt: skip
    before, after, released, limited = out.stdout.split()
    assert released == "True" and limited == "True"
    assert int(before) - int(after) >= 40  # freed but resident until released


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc only")
def test_an_operators_arena_setting_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert allocator.limit_arenas() is False


def test_without_glibc_both_calls_do_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(allocator, "_glibc", lambda: None)
    assert allocator.release() is False
    assert allocator.limit_arenas() is False
