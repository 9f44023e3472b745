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
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform

MALLOC_ARENAS = 2
"""Arenas `limit_arenas` allows: two keeps the job thread and the request threads apart
(one made every thread wait on one lock), while the default is up to 16 on two cores."""
_M_ARENA_MAX = -8
"""`mallopt`'s parameter number for the arena cap (glibc's malloc.h)."""


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


def release() -> bool:
    """Return freed heap memory to the system; whether any was returned."""
    libc = _glibc()
    return bool(libc is not None and libc.malloc_trim(0))
