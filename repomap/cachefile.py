"""A cache file on disk: a checked header around a `marshal` payload, read without
trusting the file system, written atomically. What the cache holds is `cache.py`'s business.

Format: magic, format version, key (what the payload was derived from), payload length
and CRC-32 of the payload, then the payload. Files are opened without following links
and without blocking (`O_NOFOLLOW | O_NONBLOCK`), must be regular files, and are read up
to the size `fstat` gave (at most MAX_CACHE_FILE_BYTES): a FIFO, a link to `/dev/zero` or
a planted directory is a `CacheError`, never a hang. Writes go to a temporary file and
`os.replace`, which replaces a link in the way rather than writing through it.
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
HEADER = struct.Struct("<8sIIQI")  # magic, format version, key, payload length, crc32
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
        blob = _read_at_most(fd, info.st_size)
    except OSError as exc:
        raise CacheError(f"{path.name} unreadable ({exc.strerror})") from exc
    finally:
        os.close(fd)
    try:
        return _parse(blob)
    except CacheError as exc:
        raise CacheError(f"{path.name} was corrupt ({exc})") from exc


def _read_at_most(fd: int, size: int) -> bytes:
    """Up to `size` bytes: a file that grows while we read cannot make us read more."""
    parts = []
    while size > 0 and (part := os.read(fd, size)):
        parts.append(part)
        size -= len(part)
    return b"".join(parts)


def _parse(blob: bytes) -> tuple[int, Any]:
    if len(blob) < HEADER.size:
        raise CacheError("truncated header")
    magic, version, key, length, crc = HEADER.unpack_from(blob)
    payload = memoryview(blob)[HEADER.size :]
    if magic != MAGIC:
        raise CacheError("not a repomap cache file")
    if version != CACHE_FORMAT_VERSION:
        raise CacheError(f"format {version}, expected {CACHE_FORMAT_VERSION}")
    if len(payload) != length or zlib.crc32(payload) != crc:
        raise CacheError("checksum mismatch")
    try:
        return key, marshal.loads(payload)
    except Exception as exc:  # EOFError, ValueError, TypeError: whatever the bytes say
        raise CacheError(str(exc)) from exc


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
    payload = marshal.dumps(value)
    header = HEADER.pack(MAGIC, CACHE_FORMAT_VERSION, key, len(payload), zlib.crc32(payload))
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(header)
            out.write(payload)
        if path.is_dir() and not path.is_symlink():
            # Nothing but this cache file belongs here; a directory in its place would
            # make every later run a miss.
            shutil.rmtree(path)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
