"""The C allocator, told to hold less: glibc's `malloc` only; elsewhere each call does nothing.

Two habits of glibc's `malloc` cost a long-lived indexing process memory it no longer uses
(docs/benchmarks.md, "Memory"):

- **An arena per allocating thread** (up to eight per core). The service builds an index
  in one thread, diagnoses in others; each arena keeps the pages freed in it for reuse
  by that arena alone. `limit_arenas()`, once at start, caps how many there are.
- **Freed memory goes back to the system only from the top of the heap.** Loading a
  cache or running a diagnosis allocates hundreds of MB that are freed a moment later,
  interleaved with what stays; the freed pages remain resident. `release()` — glibc's
  `malloc_trim` — hands them back; call it after such a peak (an index opened, a
  diagnosis done), not in a loop: it walks the whole heap (milliseconds).
- **A threshold for mapping large blocks that rises.** A block above the threshold is
  mapped on its own and unmapped when freed; but freeing one raises the threshold to its
  size (up to 32 MB), so the index's later arrays of a few MB come from the heap, where
  growing one copies it and freeing it leaves it resident. `map_large_blocks()`, once at
  start, fixes the threshold at MMAP_THRESHOLD_BYTES: on a 20,000-file tree a cold
  diagnosis peaked 22 MB lower and held 10 MB less (docs/benchmarks/memory.md).

`configure()` makes both settings at start.
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform

MALLOC_ARENAS = 2
"""Arenas `limit_arenas` allows: two keeps the job thread and the request threads apart
(one made every thread wait on one lock), while the default is up to 16 on two cores."""
ONE_RUN_ARENAS = 1
"""Arenas for a process that runs one diagnosis and exits (the CLI): its index is parsed
on the main thread and queried on the pipeline's, and with one arena the second reuses
what the first freed — a cold 20,000-file diagnosis peaked 12–17 MB lower
(docs/benchmarks/memory.md)."""
_M_ARENA_MAX = -8
"""`mallopt`'s parameter number for the arena cap (glibc's malloc.h)."""
MMAP_THRESHOLD_BYTES = 1 << 20
"""Blocks of at least this size are mapped on their own (`map_large_blocks`): the index's
arrays, a cache file's parts. Small enough for every array of an index, large enough
that Python's own 1 MB arenas and a request's buffers stay in the heap."""
_M_MMAP_THRESHOLD = -3
"""`mallopt`'s parameter number for the mapping threshold (glibc's malloc.h)."""


@functools.cache
def _glibc() -> ctypes.CDLL | None:
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None  # musl and other C libraries have neither call
    # The process's own symbols, glibc's among them: `ctypes.util.find_library` would
    # run `ldconfig -p` in a child (startup time, and a CLI that a stop signal reaching
    # it then killed before its handler was in place: tests/hostile/test_cli.py).
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


def limit_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """Cap glibc's malloc arenas for this process (best before threads start); whether
    the cap was set. An operator's `MALLOC_ARENA_MAX` wins: glibc read it at start."""
    libc = _glibc()
    if libc is None or "MALLOC_ARENA_MAX" in os.environ:
        return False
    return bool(libc.mallopt(_M_ARENA_MAX, arenas))


def map_large_blocks(threshold: int = MMAP_THRESHOLD_BYTES) -> bool:
    """Fix the size from which glibc maps a block on its own (which also stops it from
    rising); whether it was set. An operator's `MALLOC_MMAP_THRESHOLD_` wins."""
    libc = _glibc()
    if libc is None or "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    return bool(libc.mallopt(_M_MMAP_THRESHOLD, threshold))


def configure(arenas: int = MALLOC_ARENAS) -> None:
    """Both settings, once at the start of a process, before its threads: at most
    `arenas` arenas (`limit_arenas`), large blocks mapped (`map_large_blocks`)."""
    limit_arenas(arenas)
    map_large_blocks()


def release() -> bool:
    """Return freed heap memory to the system; whether any was returned."""
    libc = _glibc()
    return bool(libc is not None and libc.malloc_trim(0))
