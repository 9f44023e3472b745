"""A cache file on disk: a checked header around a `marshal` payload, read without
trusting the file system, written atomically. What the cache holds is `cache.py`'s business.

Format: magic, format version, key (what the payload was derived from), then the length
and CRC-32 of the head and of the tail, then the head and the tail. The head is the
`marshal`led payload, except that large byte strings at its top level (a graph's arrays)
are moved to the tail, raw, one after another: `read` reads each straight into a
`bytearray` of its own, so loading a 300 MB graph costs 300 MB, not the file's bytes
plus `marshal`'s copy of them (the peak was twice what stayed). A tail part can also be
written from chunks (`Stream`) and read a range at a time (`open_ranges`, or `read`'s
`leave`): a file's word counts, 57 MB on 20,000 files, and a text index's postings are
never held whole. Files are opened without
following links and without blocking (`O_NOFOLLOW | O_NONBLOCK`), must be regular files,
and are read up to the size `fstat` gave (at most MAX_CACHE_FILE_BYTES): a FIFO, a link
to `/dev/zero` or a planted directory is a `CacheError`, never a hang. Writes go to a
temporary file and `os.replace`, which replaces a link in the way rather than writing
through it.
"""

from __future__ import annotations

import contextlib
import errno
import marshal
import os
import shutil
import stat
import struct
import tempfile
import weakref
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from repomap.constants import CACHE_FORMAT_VERSION, MAX_CACHE_FILE_BYTES

MAGIC = b"RMAPv1\0\0"
HEADER = struct.Struct("<8sIIQIQI")  # magic, version, key, head length, crc32, tail length, crc32
TAIL_MIN_BYTES = 1 << 16
"""A top-level `bytes` value of at least this size goes to the tail (read without a copy);
smaller ones stay in the head, where `marshal` reads them fastest."""
CHUNK_BYTES = 1 << 20
"""How much of a part left in its file (`read`'s `leave`) is read at a time to check it."""
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)  # a link in place of a cache file is a miss, not a path
    | getattr(os, "O_NONBLOCK", 0)  # opening a FIFO must not wait for a writer
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)  # Windows
)


class CacheError(ValueError):
    """A cache file or entry that cannot be used; the message is fit to show a user.
    Never escapes this package: every caller turns it into a miss and a warning."""


@dataclass(frozen=True, slots=True)
class Stream:
    """A tail part too large to hold whole, given to `write` as `length` bytes that
    `chunks` yields in order (each checked by the caller when read: `Ranges`)."""

    length: int
    chunks: Iterable[bytes]


def read(path: Path, *, leave: frozenset[str] = frozenset()) -> tuple[int, Any] | None:
    """(key, payload) of a cache file, None when there is none; CacheError when unusable.
    Reads no more than the size `fstat` gave (a file that grows while we read cannot make
    us read more) and checks every CRC before `marshal` or a caller sees the bytes it
    covers. A tail part named in `leave` is checked too, read in chunks, but stays in the
    file: the payload holds a `Part` for it, which reads a range at a time and keeps the
    file open while it lives (the postings of a 20,000-file text index, 13 MB, of which
    a query reads a few KB)."""
    found = _open_head(path)
    if found is None:
        return None
    fd, (key, payload, layout, tail_crc) = found
    # Not given the payload, which will hold its parts: no cycle keeps the file open.
    ranges = Ranges(fd, None, layout) if leave & {name for name, _ in layout} else None
    try:
        with _naming(path):
            crc = 0
            for name, length in layout:
                if ranges is not None and name in leave:
                    for chunk in _chunks(fd, length):
                        crc = zlib.crc32(chunk, crc)
                    payload[name] = Part(ranges, name)
                    continue
                part = bytearray(length)
                _read_into(fd, part)
                crc = zlib.crc32(part, crc)
                payload[name] = part
            if crc != tail_crc:
                raise CacheError("checksum mismatch")
        return key, payload
    except BaseException:
        if ranges is not None:
            ranges.close()
        raise
    finally:
        if ranges is None:
            os.close(fd)


def _chunks(fd: int, length: int) -> Iterator[bytearray]:
    """The next `length` bytes of `fd`, CHUNK_BYTES at a time, each in a fresh buffer."""
    while length:
        chunk = bytearray(min(length, CHUNK_BYTES))
        _read_into(fd, chunk)
        length -= len(chunk)
        yield chunk


class Ranges:
    """A cache file opened for reading its tail a range at a time (`open_ranges`): the
    header and head are read and checked; `parts` maps each tail part's name to its
    length, and `read` returns bytes of one, unchecked — the tail's CRC covers it whole,
    so the caller checks each range it reads (by a CRC of its own, kept in the head). The
    file stays open until `close`, or until this object is dropped."""

    def __init__(self, fd: int, payload: Any, layout: tuple[tuple[str, int], ...]) -> None:
        self.payload = payload
        self.parts = dict(layout)
        self._fd, self._starts, start = fd, {}, os.lseek(fd, 0, os.SEEK_CUR)
        for name, length in layout:
            self._starts[name] = start
            start += length
        self._closer = weakref.finalize(self, os.close, fd)

    def read(self, part: str, start: int, length: int) -> bytes:
        """`length` bytes of tail part `part` from `start`; CacheError for a range
        outside it, or when the file ends first (it shrank)."""
        if part not in self.parts or start < 0 or length < 0 or start + length > self.parts[part]:
            raise CacheError(f"a range outside the file's {part!r}")
        try:
            got = os.pread(self._fd, length, self._starts[part] + start)
        except OSError as exc:
            raise CacheError(f"unreadable ({exc.strerror})") from exc
        if len(got) != length:
            raise CacheError("truncated")
        return got

    def close(self) -> None:
        self._closer()


@dataclass(frozen=True, slots=True)
class Part:
    """A tail part left in its file by `read(..., leave=...)`: checked with the rest of
    the tail when read, its bytes read again when asked. The file stays open, so a cache
    file replaced since (`write` replaces, never rewrites) does not change what it
    reads; one cut short since is a CacheError."""

    ranges: Ranges
    name: str

    def __len__(self) -> int:
        return self.ranges.parts[self.name]

    def read(self, start: int, length: int) -> bytes:
        return self.ranges.read(self.name, start, length)

    def chunks(self) -> Iterator[bytes]:
        """The whole part, CHUNK_BYTES at a time."""
        for start in range(0, len(self), CHUNK_BYTES):
            yield self.read(start, min(CHUNK_BYTES, len(self) - start))


def open_ranges(path: Path) -> Ranges | None:
    """The cache file at `path` with its head read and checked, its tail left for
    `Ranges.read`; None when there is none, CacheError when it is unusable."""
    found = _open_head(path)
    if found is None:
        return None
    fd, (_, payload, layout, _) = found
    return Ranges(fd, payload, layout)


Head = tuple[int, Any, tuple[tuple[str, int], ...], int]
"""A cache file's key, the head's payload, the tail's layout and the tail's CRC."""


def _open_head(path: Path) -> tuple[int, Head] | None:
    """The cache file at `path`, open and positioned at its tail, and its head, read and
    checked; None when there is none. CacheError (and the file closed) when unusable."""
    opened = _open(path)
    if opened is None:
        return None
    fd, size = opened
    try:
        with _naming(path):
            return fd, _read_head(fd, size)
    except BaseException:
        os.close(fd)
        raise


def _open(path: Path) -> tuple[int, int] | None:
    """A descriptor of the regular file at `path` and its size, None when there is
    none; CacheError for a link, anything else that is not a regular file, or a file
    larger than MAX_CACHE_FILE_BYTES."""
    _check_directory(path.parent)
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a link
            raise CacheError(f"{path.name} is a symbolic link") from exc
        raise CacheError(f"{path.name} unreadable ({exc.strerror})") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise CacheError(f"{path.name} is not a regular file")
        if info.st_size > MAX_CACHE_FILE_BYTES:
            raise CacheError(f"{path.name} is larger than {MAX_CACHE_FILE_BYTES >> 20} MB")
    except BaseException as exc:
        os.close(fd)
        if isinstance(exc, OSError):
            raise CacheError(f"{path.name} unreadable ({exc.strerror})") from exc
        raise
    return fd, info.st_size


@contextlib.contextmanager
def _naming(path: Path) -> Iterator[None]:
    """Every failure while reading the cache file at `path`: a CacheError that names it."""
    try:
        yield
    except CacheError as exc:
        raise CacheError(f"{path.name} was corrupt ({exc})") from exc
    except OSError as exc:
        raise CacheError(f"{path.name} unreadable ({exc.strerror})") from exc


def _read_head(fd: int, size: int) -> Head:
    """The key, the head's payload, the tail's layout and its CRC, read from the start
    of a file of `size` bytes, checked; the file is left at the start of the tail."""
    if size < HEADER.size:
        raise CacheError("truncated header")
    header = _read_exactly(fd, HEADER.size)
    magic, version, key, head_length, head_crc, tail_length, tail_crc = HEADER.unpack(header)
    if magic != MAGIC:
        raise CacheError("not a repomap cache file")
    if version != CACHE_FORMAT_VERSION:
        raise CacheError(f"format {version}, expected {CACHE_FORMAT_VERSION}")
    if HEADER.size + head_length + tail_length != size:
        raise CacheError("checksum mismatch (lengths disagree with the file's size)")
    head = _read_exactly(fd, head_length)
    if zlib.crc32(head) != head_crc:
        raise CacheError("checksum mismatch")
    try:
        payload, layout = marshal.loads(head)
    except Exception as exc:  # EOFError, ValueError, TypeError: whatever the bytes say
        raise CacheError(str(exc) or type(exc).__name__) from exc
    if not _is_layout(layout, tail_length) or (layout and type(payload) is not dict):
        raise CacheError("a tail that disagrees with its table")
    return key, payload, layout, tail_crc


def _is_layout(layout: Any, tail_length: int) -> bool:
    """`layout` is what `write` makes: (name, length) pairs adding up to the tail."""
    return (
        type(layout) is tuple
        and all(
            type(item) is tuple
            and len(item) == 2
            and type(item[0]) is str
            and type(item[1]) is int
            and item[1] >= 0
            for item in layout
        )
        and sum(length for _, length in layout) == tail_length
    )


def _read_exactly(fd: int, size: int) -> bytearray:
    part = bytearray(size)  # marshal and zlib read it as it is: no copy into `bytes`
    _read_into(fd, part)
    return part


def _read_into(fd: int, buffer: bytearray) -> None:
    """Fill `buffer` from `fd`; CacheError when the file ends first (it shrank)."""
    view, done = memoryview(buffer), 0
    while done < len(buffer):
        got = os.readv(fd, [view[done:]])
        if not got:
            raise CacheError("truncated")
        done += got


def _check_directory(directory: Path) -> None:
    """The cache directory and its parent are real directories we made, or absent."""
    for folder in (directory.parent, directory):
        try:
            mode = os.lstat(folder).st_mode
        except FileNotFoundError:
            return
        except NotADirectoryError:  # a file above it (`DIAGNOSER_HOME=/dev/null`)
            raise CacheError(f"cache directory {folder} is below a file (not used)") from None
        if not stat.S_ISDIR(mode):
            what = "a symbolic link" if stat.S_ISLNK(mode) else "not a directory"
            raise CacheError(f"cache directory {folder} is {what} (not used: remove it)")


def _make_directory(directory: Path) -> None:
    """`directory` made if absent; OSError when it or its parent is not a real directory."""
    try:
        _check_directory(directory)
    except CacheError as exc:
        raise OSError(errno.ENOTDIR, str(exc)) from exc
    directory.mkdir(parents=True, exist_ok=True)


def scratch(directory: Path) -> BinaryIO:
    """An unnamed temporary file in the cache directory `directory` (made as `write` makes
    it), unbuffered: gone once closed, or when the process dies. OSError when it cannot
    be made."""
    _make_directory(directory)
    return tempfile.TemporaryFile(dir=directory, prefix=".scratch-", buffering=0)


def write(path: Path, value: Any, *, key: int = 0) -> None:
    """Write atomically (temp file + rename): readers never see half a file. The rename
    replaces whatever is at `path` — a link is replaced, not followed. A `Stream` at the
    top level of `value` is written from its chunks, to the tail; ValueError when they
    do not add up to its length."""
    _make_directory(path.parent)
    tail = _tail_of(value)
    lengths = {
        name: part.length if isinstance(part, Stream) else len(part) for name, part in tail.items()
    }
    head = marshal.dumps(
        ({k: v for k, v in value.items() if k not in tail} if tail else value,
         tuple(lengths.items()))
    )  # fmt: skip
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(bytes(HEADER.size))  # its CRC is known once the tail is written
            out.write(head)
            tail_crc = 0
            for name, part in tail.items():
                written = 0
                for chunk in part.chunks if isinstance(part, Stream) else (part,):
                    out.write(chunk)
                    tail_crc = zlib.crc32(chunk, tail_crc)
                    written += len(chunk)
                if written != lengths[name]:
                    raise ValueError(f"{name}: {written} bytes, said {lengths[name]}")
            out.seek(0)
            out.write(
                HEADER.pack(
                    MAGIC, CACHE_FORMAT_VERSION, key, len(head), zlib.crc32(head),
                    sum(lengths.values()), tail_crc,
                )
            )  # fmt: skip
        if path.is_dir() and not path.is_symlink():
            # Nothing but this cache file belongs here; a directory in its place would
            # make every later run a miss.
            shutil.rmtree(path)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _tail_of(value: Any) -> dict[str, bytes | bytearray | memoryview | Stream]:
    """The top-level byte strings (or byte views) of a table (str keys) and its streams:
    the tail."""
    if type(value) is not dict:
        return {}
    return {
        name: part
        for name, part in value.items()
        if type(name) is str
        and (
            isinstance(part, Stream)
            or (type(part) in (bytes, bytearray, memoryview) and len(part) >= TAIL_MIN_BYTES)
        )
    }
