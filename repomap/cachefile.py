"""A cache file on disk: a checked header around a `marshal` payload, read without
trusting the file system, written atomically. What the cache holds is `cache.py`'s business.

Format: magic, format version, key (what the payload was derived from), then the length
and CRC-32 of the head and of the tail, then the head and the tail. The head is the
`marshal`led payload, except that large byte strings at its top level (a graph's arrays)
are moved to the tail, raw, one after another: `read` reads each straight into a
`bytearray` of its own, so loading a 300 MB graph costs 300 MB, not the file's bytes
plus `marshal`'s copy of them (the peak was twice what stayed). Files are opened without
following links and without blocking (`O_NOFOLLOW | O_NONBLOCK`), must be regular files,
and are read up to the size `fstat` gave (at most MAX_CACHE_FILE_BYTES): a FIFO, a link
to `/dev/zero` or a planted directory is a `CacheError`, never a hang. Writes go to a
temporary file and `os.replace`, which replaces a link in the way rather than writing
through it.
"""

from __future__ import annotations

import errno
import marshal
import os
import shutil
import stat
import struct
import tempfile
import zlib
from pathlib import Path
from typing import Any

from repomap.constants import CACHE_FORMAT_VERSION, MAX_CACHE_FILE_BYTES

MAGIC = b"RMAPv1\0\0"
HEADER = struct.Struct("<8sIIQIQI")  # magic, version, key, head length, crc32, tail length, crc32
TAIL_MIN_BYTES = 1 << 16
"""A top-level `bytes` value of at least this size goes to the tail (read without a copy);
smaller ones stay in the head, where `marshal` reads them fastest."""
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


def read(path: Path) -> tuple[int, Any] | None:
    """(key, payload) of a cache file, None when there is none; CacheError when unusable."""
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
        try:
            return _read_checked(fd, info.st_size)
        except CacheError as exc:
            raise CacheError(f"{path.name} was corrupt ({exc})") from exc
    except OSError as exc:
        raise CacheError(f"{path.name} unreadable ({exc.strerror})") from exc
    finally:
        os.close(fd)


def _read_checked(fd: int, size: int) -> tuple[int, Any]:
    """The file's key and payload; reads no more than `size` bytes (what `fstat` said: a
    file that grows while we read cannot make us read more), checks every CRC before
    `marshal` or a caller sees the bytes it covers."""
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
    crc = 0
    for name, length in layout:
        part = bytearray(length)
        _read_into(fd, part)
        crc = zlib.crc32(part, crc)
        payload[name] = part
    if crc != tail_crc:
        raise CacheError("checksum mismatch")
    return key, payload


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


def write(path: Path, value: Any, *, key: int = 0) -> None:
    """Write atomically (temp file + rename): readers never see half a file. The rename
    replaces whatever is at `path` — a link is replaced, not followed."""
    try:
        _check_directory(path.parent)
    except CacheError as exc:
        raise OSError(errno.ENOTDIR, str(exc)) from exc
    path.parent.mkdir(parents=True, exist_ok=True)
    tail = _tail_of(value)
    head = marshal.dumps(
        ({k: v for k, v in value.items() if k not in tail} if tail else value,
         tuple((name, len(part)) for name, part in tail.items()))
    )  # fmt: skip
    tail_crc = 0
    for part in tail.values():
        tail_crc = zlib.crc32(part, tail_crc)
    header = HEADER.pack(
        MAGIC, CACHE_FORMAT_VERSION, key, len(head), zlib.crc32(head),
        sum(map(len, tail.values())), tail_crc,
    )  # fmt: skip
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(header)
            out.write(head)
            for part in tail.values():
                out.write(part)
        if path.is_dir() and not path.is_symlink():
            # Nothing but this cache file belongs here; a directory in its place would
            # make every later run a miss.
            shutil.rmtree(path)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _tail_of(value: Any) -> dict[str, bytes | bytearray]:
    """The top-level byte strings of a table (str keys) that go to the tail."""
    if type(value) is not dict:
        return {}
    return {
        name: part
        for name, part in value.items()
        if type(name) is str and type(part) in (bytes, bytearray) and len(part) >= TAIL_MIN_BYTES
    }
