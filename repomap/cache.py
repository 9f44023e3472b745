"""The persistent tag cache: one file per repository in the service's data directory.

Layout: `$DIAGNOSER_HOME/repomap/<hash of the repo's absolute path>/tags.bin`
(`DIAGNOSER_HOME` defaults to the user cache dir). Never inside the analysed repo.

The file is a fixed header (magic, format version, payload length, CRC-32) and a
`marshal` payload — the fastest loader in the standard library for plain tuples and
dicts. The CRC is checked before `marshal` sees a byte, so a truncated or corrupted
file is detected and the caller rebuilds instead of crashing.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import struct
import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

from repomap.constants import APP_NAME, CACHE_FORMAT_VERSION, HOME_ENV_VAR
from repomap.errors import InvalidRepoError
from repomap.tags import Definition, FileTags, References

MAGIC = b"RMAPTAGS"
HEADER = struct.Struct("<8sIQI")  # magic, version, payload length, crc32
CACHE_FILE = "tags.bin"


@dataclass(frozen=True, slots=True)
class CachedFile:
    """What we know about one file as of the last build."""

    size: int
    mtime_ns: int
    digest: str
    """Content hash (blake2b-128 hex): settles whether a file whose mtime moved changed."""
    tags: FileTags | None
    """None when the file was skipped; `skip_reason` says why."""
    skip_reason: str = ""
    notes: tuple[str, ...] = ()
    """Non-fatal remarks shown as warnings (invalid UTF-8, syntax errors)."""


@dataclass(slots=True)
class CacheState:
    files: dict[str, CachedFile] = field(default_factory=dict)
    problem: str = ""
    """Set when a cache file existed but could not be used (it is then rebuilt)."""


def data_home() -> Path:
    """The service's data directory: `$DIAGNOSER_HOME`, else the user cache dir."""
    configured = os.environ.get(HOME_ENV_VAR)
    return (
        Path(configured).expanduser() if configured else Path(platformdirs.user_cache_dir(APP_NAME))
    )


def cache_dir_for(root: Path, home: Path | None = None) -> Path:
    """Where the cache of the repository at `root` (absolute) lives."""
    base = (home or data_home()).expanduser().resolve()
    if base.is_relative_to(root):
        raise InvalidRepoError(
            f"the data directory {base} is inside the repository {root}; "
            f"set {HOME_ENV_VAR} to a folder outside it (caches never go into the repo)"
        )
    key = hashlib.sha256(str(root).encode()).hexdigest()[:16]
    return base / "repomap" / key


def content_digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def load(directory: Path) -> CacheState:
    """Read the cache; a missing one is empty, an unusable one is empty with `problem` set."""
    path = directory / CACHE_FILE
    try:
        blob = path.read_bytes()
    except FileNotFoundError:
        return CacheState()
    except OSError as exc:
        return CacheState(problem=f"cache unreadable ({exc.strerror}); rebuilt")
    try:
        return CacheState(files=_decode(blob))
    except (ValueError, EOFError, TypeError, KeyError, IndexError, struct.error) as exc:
        return CacheState(problem=f"cache was corrupt ({exc}); rebuilt")


def save(directory: Path, files: dict[str, CachedFile]) -> None:
    """Write the cache atomically (temp file + rename): readers never see half a file."""
    directory.mkdir(parents=True, exist_ok=True)
    payload = marshal.dumps({path: _encode_file(cached) for path, cached in files.items()})
    header = HEADER.pack(MAGIC, CACHE_FORMAT_VERSION, len(payload), zlib.crc32(payload))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tags-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(header)
            out.write(payload)
        os.replace(tmp, directory / CACHE_FILE)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _decode(blob: bytes) -> dict[str, CachedFile]:
    magic, version, length, crc = HEADER.unpack_from(blob)
    payload = memoryview(blob)[HEADER.size :]
    if magic != MAGIC:
        raise ValueError("not a tag cache")
    if version != CACHE_FORMAT_VERSION:
        raise ValueError(f"format {version}, expected {CACHE_FORMAT_VERSION}")
    if len(payload) != length or zlib.crc32(payload) != crc:
        raise ValueError("checksum mismatch")
    raw = marshal.loads(payload)
    if not isinstance(raw, dict):
        raise TypeError("payload is not a mapping")
    return {path: _decode_file(entry) for path, entry in raw.items()}


def _encode_file(cached: CachedFile) -> tuple[object, ...]:
    tags: object = None
    if cached.tags is not None:
        defs = tuple(tuple(d) for d in cached.tags.definitions)
        tags = (defs, cached.tags.references.packed(), cached.tags.syntax_error)
    return (cached.size, cached.mtime_ns, cached.digest, tags, cached.skip_reason, cached.notes)


def _decode_file(entry: Any) -> CachedFile:  # marshal data is untyped by nature
    size, mtime_ns, digest, tags, skip_reason, notes = entry
    file_tags = None
    if tags is not None:
        defs, refs, syntax_error = tags
        file_tags = FileTags(
            tuple(Definition._make(d) for d in defs), References(*refs), syntax_error
        )
    return CachedFile(size, mtime_ns, digest, file_tags, skip_reason, notes)
