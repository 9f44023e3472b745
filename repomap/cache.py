"""The persistent tag cache: files in the service's data directory, never in the repo.

Layout: `$DIAGNOSER_HOME/repomap/<hash of the repo's absolute path>/`
(`DIAGNOSER_HOME` defaults to the user cache dir):

- `tags.bin` — every file's size, mtime, content hash and tags;
- `graph.bin` — the reference graph derived from those tags (keyed by `content_key`:
  paths and content hashes), so a warm start skips rebuilding it.

Each file is a fixed header (magic, format version, key, payload length, CRC-32) and a
`marshal` payload — the fastest loader in the standard library for plain tuples, dicts
and bytes. The CRC is checked before `marshal` sees a byte, so a truncated or corrupted
file is detected and the caller rebuilds instead of crashing. Tags are decoded per file
on first use: a warm map touches only the files it shows.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import struct
import tempfile
import zlib
from array import array
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

from repomap.constants import APP_NAME, CACHE_FORMAT_VERSION, HOME_ENV_VAR
from repomap.errors import InvalidRepoError
from repomap.tags import Definition, FileTags, References

MAGIC = b"RMAPv1\0\0"
HEADER = struct.Struct("<8sIIQI")  # magic, format version, key, payload length, crc32
TAGS_FILE = "tags.bin"
GRAPH_FILE = "graph.bin"


class CachedFile:
    """What we know about one file as of the last build; its tags decode on first access."""

    __slots__ = ("_packed", "_tags", "digest", "mtime_ns", "notes", "size", "skip_reason")

    def __init__(
        self,
        size: int,
        mtime_ns: int,
        digest: str,
        tags: FileTags | None,
        *,
        skip_reason: str = "",
        notes: tuple[str, ...] = (),
        packed: bytes | None = None,
    ) -> None:
        self.size = size
        self.mtime_ns = mtime_ns
        self.digest = digest
        """Content hash (blake2b-128 hex): settles whether a file whose mtime moved changed."""
        self.skip_reason = skip_reason
        """Why the file has no tags (binary, too large, …); empty when it has them."""
        self.notes = notes
        """Non-fatal remarks shown as warnings (invalid UTF-8, syntax errors)."""
        self._tags = tags
        # The tags as one marshal blob: what the cache stores and what crosses process
        # boundaries, so neither pays for hundreds of small objects per file.
        self._packed = packed if tags is None else _pack(tags)

    @property
    def has_tags(self) -> bool:
        return self._packed is not None

    @property
    def tags(self) -> FileTags | None:
        if self._tags is None and self._packed is not None:
            self._tags = _unpack(self._packed)
        return self._tags

    def moved(self, mtime_ns: int) -> CachedFile:
        """The same content seen with a new mtime."""
        return CachedFile(
            self.size, mtime_ns, self.digest, None,
            skip_reason=self.skip_reason, notes=self.notes, packed=self._packed,
        )  # fmt: skip

    def encode(self) -> tuple[object, ...]:
        return (self.size, self.mtime_ns, self.digest, self._packed, self.skip_reason, self.notes)

    @classmethod
    def decode(cls, entry: Any) -> CachedFile:  # marshal data is untyped by nature
        size, mtime_ns, digest, packed, skip_reason, notes = entry
        if packed is not None and not isinstance(packed, bytes):
            raise TypeError("packed tags are not bytes")
        return cls(
            size, mtime_ns, digest, None, skip_reason=skip_reason, notes=notes, packed=packed
        )

    def __reduce__(self) -> tuple[Any, tuple[object, ...]]:
        return (CachedFile.decode, (self.encode(),))


_SEP = "\0"  # cannot occur in the fields: tags.py replaces NUL in source text


def _pack(tags: FileTags) -> bytes:
    """Definitions as one string and one uint32 array, references packed likewise."""
    texts = _SEP.join(
        f"{d.name}{_SEP}{d.qualified}{_SEP}{d.kind}{_SEP}{d.signature}" for d in tags.definitions
    )
    numbers = array("I", (n for d in tags.definitions for n in (d.line, d.start_line, d.end_line)))
    return marshal.dumps((texts, numbers.tobytes(), tags.references.packed(), tags.syntax_error))


def _unpack(packed: bytes) -> FileTags:
    texts, numbers, refs, syntax_error = marshal.loads(packed)
    fields = texts.split(_SEP) if texts else []
    lines = array("I", numbers)
    definitions = tuple(
        Definition(
            name=fields[4 * i],
            qualified=fields[4 * i + 1],
            kind=fields[4 * i + 2],
            line=lines[3 * i],
            start_line=lines[3 * i + 1],
            end_line=lines[3 * i + 2],
            signature=fields[4 * i + 3],
        )
        for i in range(len(lines) // 3)
    )
    return FileTags(definitions, References(*refs), syntax_error)


class TagsView(Mapping[str, FileTags]):
    """Path → tags of every file that has them, decoding each file on first access."""

    def __init__(self, files: Mapping[str, CachedFile]) -> None:
        self._files = {path: cached for path, cached in sorted(files.items()) if cached.has_tags}

    def __getitem__(self, path: str) -> FileTags:
        tags = self._files[path].tags
        if tags is None:
            raise KeyError(path)
        return tags

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)


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


def content_key(files: Mapping[str, CachedFile]) -> int:
    """A checksum of every path and content hash: names what derived caches were built from."""
    return zlib.crc32("\n".join(f"{path}\0{files[path].digest}" for path in sorted(files)).encode())


def load(directory: Path) -> CacheState:
    """Read `tags.bin`; a missing one is empty, an unusable one is empty with `problem` set."""
    try:
        _, raw = _read(directory / TAGS_FILE)
    except FileNotFoundError:
        return CacheState()
    except OSError as exc:
        return CacheState(problem=f"cache unreadable ({exc.strerror}); rebuilt")
    except ValueError as exc:
        return CacheState(problem=f"cache was corrupt ({exc}); rebuilt")
    try:
        files = {path: CachedFile.decode(entry) for path, entry in raw.items()}
    except (ValueError, TypeError, AttributeError) as exc:
        return CacheState(problem=f"cache was corrupt ({exc}); rebuilt")
    return CacheState(files=files)


def save(directory: Path, files: Mapping[str, CachedFile]) -> None:
    """Write `tags.bin` atomically."""
    _write(directory / TAGS_FILE, {path: cached.encode() for path, cached in files.items()})


def load_blob(directory: Path, name: str, *, key: int) -> Any:
    """A derived payload saved for the state `key`, or None when absent, stale or damaged."""
    try:
        found, payload = _read(directory / name)
    except (OSError, ValueError):
        return None
    return payload if found == key else None


def save_blob(directory: Path, name: str, payload: Any, *, key: int) -> None:
    _write(directory / name, payload, key=key)


def _read(path: Path) -> tuple[int, Any]:
    blob = path.read_bytes()
    if len(blob) < HEADER.size:
        raise ValueError("truncated header")
    magic, version, key, length, crc = HEADER.unpack_from(blob)
    payload = memoryview(blob)[HEADER.size :]
    if magic != MAGIC:
        raise ValueError("not a repomap cache file")
    if version != CACHE_FORMAT_VERSION:
        raise ValueError(f"format {version}, expected {CACHE_FORMAT_VERSION}")
    if len(payload) != length or zlib.crc32(payload) != crc:
        raise ValueError("checksum mismatch")
    try:
        return key, marshal.loads(payload)
    except (EOFError, TypeError) as exc:
        raise ValueError(str(exc)) from exc


def _write(path: Path, value: Any, *, key: int = 0) -> None:
    """Write atomically (temp file + rename): readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = marshal.dumps(value)
    header = HEADER.pack(MAGIC, CACHE_FORMAT_VERSION, key, len(payload), zlib.crc32(payload))
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(header)
            out.write(payload)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
