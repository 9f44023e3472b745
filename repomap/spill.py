"""Bytes set aside while an index is built: written to an unnamed scratch file in the
cache directory (`cachefile.scratch`) and read back when needed, rather than held.

A cold build of a 20,000-file tree holds two large things only for a while: every file's
packed words until words.bin is written (57 MB), and a term index's postings until they
are laid out by term (21 MB). Held, they grew the heap, and once freed they stayed
resident in holes between what the build keeps (docs/benchmarks/memory.md).

    spill = Spill(directory)  # OSError: keep the bytes in memory instead
    kept = spill.add(data)    # a `Spilled`, or `data` itself once a write has failed
    read_back(kept)           # the bytes again
"""

from __future__ import annotations

import os
import weakref
import zlib
from pathlib import Path
from typing import TypeAlias

from repomap import cachefile
from repomap.cachefile import CacheError


class Spill:
    """An unnamed scratch file, appended to. It goes when the spill and the last
    `Spilled` of it do, or with the process."""

    def __init__(self, directory: Path) -> None:
        file = cachefile.scratch(directory)  # OSError: the caller keeps its bytes in memory
        weakref.finalize(self, file.close)
        self._fd, self._end, self._failed = file.fileno(), 0, False

    def add(self, data: bytes) -> Aside:
        """`data`, written aside: its place in the spill — or `data` itself once a write
        has failed (a full disk), so nothing is lost."""
        if self._failed:
            return data
        try:
            done = 0
            while done < len(data):
                done += os.pwrite(self._fd, memoryview(data)[done:], self._end + done)
        except OSError:
            self._failed = True
            return data
        spilled = Spilled(self, self._end, len(data), zlib.crc32(data))
        self._end += len(data)
        return spilled

    def read(self, start: int, length: int) -> bytes:
        """The `length` bytes at `start`; CacheError if the spill ends first."""
        chunks, done = [], 0
        while done < length:
            chunk = os.pread(self._fd, length - done, start + done)
            if not chunk:
                raise CacheError("bytes set aside were cut short")
            chunks.append(chunk)
            done += len(chunk)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)


class Spilled:
    """Bytes in a `Spill`: their place, length and CRC-32."""

    __slots__ = ("_spill", "crc", "length", "start")

    def __init__(self, spill: Spill, start: int, length: int, crc: int) -> None:
        self._spill, self.start, self.length, self.crc = spill, start, length, crc

    def __len__(self) -> int:
        return self.length

    def read(self) -> bytes:
        """The bytes; CacheError (or OSError) when the spill cannot give them."""
        return self._spill.read(self.start, self.length)


Aside: TypeAlias = bytes | Spilled
"""Bytes in memory, or written aside (`Spill`)."""


def read_back(aside: Aside) -> bytes:
    """The bytes, read back if they were spilled."""
    return aside.read() if isinstance(aside, Spilled) else aside


def spill_in(directory: Path | None) -> Spill | None:
    """A spill in `directory`; None (keep the bytes in memory) without one, or when it
    cannot take a file."""
    if directory is None:
        return None
    try:
        return Spill(directory)
    except OSError:
        return None
