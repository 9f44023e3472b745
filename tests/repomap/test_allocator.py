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


THREAD_HEAPS = """
import sys
import threading
from repomap import allocator

allocator.configure(int(sys.argv[1]))


def heaps():
    # A thread arena is a heap of its own: a 64 MB reservation, mostly inaccessible.
    found = 0
    for line in open("/proc/self/maps"):
        fields = line.split()
        start, end = (int(x, 16) for x in fields[0].split("-"))
        found += fields[1] == "---p" and len(fields) == 5 and end - start > (1 << 20)
    return found


kept = []
threads = [threading.Thread(target=lambda: kept.extend(bytearray(200) for _ in range(2000)))]
threads[0].start()
threads[0].join()
print(heaps())
"""


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc only")
def test_a_one_run_process_allocates_every_thread_from_one_arena() -> None:
    """The CLI's setting (`ONE_RUN_ARENAS`): its pipeline thread reuses what the parse
    freed on the main thread; the service's (`MALLOC_ARENAS`) gives the thread its own."""
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}

    def heaps(arenas: int) -> int:
        command = [sys.executable, "-c", THREAD_HEAPS, str(arenas)]
        run = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
        return int(run.stdout)

    assert heaps(allocator.ONE_RUN_ARENAS) == 0
    assert heaps(allocator.MALLOC_ARENAS) == 1


HEAP_BLOCKS = """
import sys
from pathlib import Path
from repomap import allocator

def rss_mb():
    status = Path("/proc/self/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0]) // 1024

if sys.argv[1] == "fixed":
    print(allocator.map_large_blocks())
big = bytearray(16 << 20)
del big  # glibc's own threshold rises to 16 MB
blocks = [bytearray(2 << 20) for _ in range(40)]  # 80 MB
before = rss_mb()
del blocks[::2]  # 40 MB freed, between blocks that stay
print(before - rss_mb())
"""


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc only")
def test_large_blocks_go_back_to_the_system_when_freed() -> None:
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_MMAP_THRESHOLD_"}

    def left(mode: str) -> list[str]:
        command = [sys.executable, "-c", HEAP_BLOCKS, mode]
        return subprocess.run(
            command, env=env, capture_output=True, text=True, check=True
        ).stdout.split()

    assert int(left("default")[0]) < 10  # what glibc does unless told: still resident
    set_it, returned = left("fixed")
    assert set_it == "True" and int(returned) >= 35


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc only")
def test_an_operators_threshold_setting_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "65536")
    assert allocator.map_large_blocks() is False


def test_without_glibc_every_call_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(allocator, "_glibc", lambda: None)
    assert allocator.release() is False
    assert allocator.limit_arenas() is False
    assert allocator.map_large_blocks() is False
