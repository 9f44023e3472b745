"""The persistent tag cache: files in the service's data directory, never in the repo.

Layout: `$DIAGNOSER_HOME/repomap/<hash of the repo's absolute path>/`
(`DIAGNOSER_HOME` defaults to the user cache dir):

- `tags.bin` — every file's size, mtime, content hash and tags;
- `words.bin` — every file's word counts (`repomap.words.Words`) with its content hash
  (`wordsfile.py`): only the text index reads them, and only when it is built, so they
  are not held with the tags (`WordsView`);
- `graph.bin` and the term indexes — derived from those tags (keyed by `content_key`:
  paths and content hashes), so a warm start skips rebuilding them.

Each file is a checked header around a `marshal` payload (`cachefile.py`) — the
fastest loader in the standard library for plain tuples, dicts and bytes. Tags are
decoded per file on first use: a warm map touches only the files it shows.

Whatever is wrong with a cache file, reading it is a miss, never an error: the file is
re-parsed and the cache rewritten, with a warning. `cachefile.py` turns a link, FIFO,
directory, oversized or damaged file into a miss; this module checks what it holds.

What the CRC defends against: accidental damage — a truncated write, a flipped bit, a
file from another version (checked before `marshal` sees a byte). What it does not: a
file crafted by someone who can write to the data directory, who can compute a CRC as
easily as we can. `marshal` is not meant for untrusted input, so every value read is
checked for shape and type — the outer entries when the file is loaded, a file's tags
when they are first decoded (`TagsView` re-parses the file if they do not pass; checking
all of them at load would slow every warm start down, see `load`), a cached graph
against the tags (`Repository.graph`). That makes a crafted file a miss rather than a
crash; it does not make what it says true. The data directory is the service's own and
must be writable by the service alone.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import sys
import threading
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

from repomap import cachefile, wordsfile
from repomap.cachefile import CacheError
from repomap.constants import APP_NAME, HOME_ENV_VAR
from repomap.errors import InvalidRepoError
from repomap.spill import Aside, read_back
from repomap.tags import Definitions, FileTags, References
from repomap.words import Words

TAGS_FILE = "tags.bin"
GRAPH_FILE = "graph.bin"
_EMPTY = FileTags(Definitions("", b"", 0), References((), b"", b""), syntax_error=False)
"""What a file whose damaged tags could not be re-parsed (it vanished since) maps to."""


class CachedFile:
    """What we know about one file as of the last build; its tags decode on first access."""

    __slots__ = (
        "_packed", "_tags", "definitions", "digest", "mtime_ns", "notes", "size", "skip_reason",
        "words",
    )  # fmt: skip

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
        definitions: int = 0,
        words: Aside | None = None,
    ) -> None:
        self.size = size
        self.mtime_ns = mtime_ns
        self.digest = digest
        """Content hash (blake2b-128 hex): settles whether a file whose mtime moved changed."""
        self.skip_reason = skip_reason
        """Why the file has no tags (binary, too large, …); empty when it has them."""
        self.notes = notes
        """Non-fatal remarks shown as warnings (invalid UTF-8, syntax errors)."""
        self.definitions = len(tags.definitions) if tags is not None else definitions
        """How many definitions the tags hold, known without decoding them: lets a cached
        graph be checked against the tags it claims to come from."""
        self._tags = tags
        # The tags as one marshal blob: what the cache stores and what crosses process
        # boundaries, so neither pays for hundreds of small objects per file. Dropped
        # once decoded (made again to save, `packed`): holding both cost ~4 MB per
        # 1,000 files for as long as the repository stayed open.
        self._packed = packed if tags is None else None
        self.words = words
        """The file's word counts (`wordsfile.pack_words`), held (or spilled aside:
        `repomap.spill`) from its parse until `save` has written them to words.bin; None
        after that, or when read from the cache."""

    @property
    def has_tags(self) -> bool:
        return self._packed is not None or self._tags is not None

    @property
    def tags(self) -> FileTags | None:
        """The decoded tags; raises CacheError when the stored blob is not valid tags."""
        packed = self._packed  # read first: another thread may decode and drop it meanwhile
        if self._tags is None and packed is not None:
            self._tags = _unpack(packed, self.definitions)
            self._packed = None
        return self._tags

    @property
    def packed(self) -> bytes | None:
        """The tags as `_pack` makes them (None: the file has none)."""
        packed = self._packed
        if packed is not None or self._tags is None:
            return packed
        return _pack(self._tags)

    def moved(self, mtime_ns: int) -> CachedFile:
        """The same content seen with a new mtime."""
        return CachedFile(
            self.size, mtime_ns, self.digest, self._tags, skip_reason=self.skip_reason,
            notes=self.notes, packed=self._packed, definitions=self.definitions, words=self.words,
        )  # fmt: skip

    def encode(self) -> tuple[object, ...]:
        return (
            self.size, self.mtime_ns, self.digest, self.packed, self.skip_reason, self.notes,
            self.definitions,
        )  # fmt: skip

    @classmethod
    def decode(cls, entry: Any) -> CachedFile:  # marshal data is untyped by nature
        """The inverse of `encode`; raises CacheError for anything `encode` cannot make."""
        if type(entry) is not tuple or len(entry) != 7:
            raise CacheError("an entry of the wrong shape")
        size, mtime_ns, digest, packed, skip_reason, notes, definitions = entry
        if not (
            type(size) is int
            and type(mtime_ns) is int
            and type(digest) is str
            and (packed is None or type(packed) is bytes)
            and type(skip_reason) is str
            and type(notes) is tuple
            and all(type(note) is str for note in notes)
            and type(definitions) is int
            and definitions >= 0
        ):
            raise CacheError("an entry with fields of the wrong type")
        return cls(
            size, mtime_ns, digest, None, skip_reason=skip_reason, notes=notes, packed=packed,
            definitions=definitions,
        )  # fmt: skip

    @classmethod
    def _with_words(cls, entry: Any, words: bytes | None) -> CachedFile:
        cached = cls.decode(entry)
        cached.words = words
        return cached

    def __reduce__(self) -> tuple[Any, tuple[object, ...]]:
        """What crosses from a parse worker: the entry and the words, packed."""
        words = None if self.words is None else read_back(self.words)
        return (CachedFile._with_words, (self.encode(), words))


_SEP = "\0"  # cannot occur in the fields: tags.py replaces NUL in source text


def _pack(tags: FileTags) -> bytes:
    """Definitions as one string and one uint32 array (their packed form), references
    likewise."""
    texts, numbers = tags.definitions.packed()
    return marshal.dumps((texts, numbers, tags.references.packed(), tags.syntax_error))


def _unpack(packed: bytes, count: int) -> FileTags:
    """The tags `_pack` made, checked to hold `count` definitions; CacheError otherwise."""
    try:
        texts, numbers, (names, counts, lines), syntax_error = marshal.loads(packed)
        if not (
            type(texts) is str
            and type(numbers) is bytes
            and type(names) is tuple
            and type(counts) is bytes
            and type(lines) is bytes
            and type(syntax_error) is bool
        ):
            raise CacheError("tags with fields of the wrong type")
        definitions = Definitions(texts, numbers, count)  # ValueError unless whole uint32s
        uses = memoryview(counts).cast("I")  # TypeError likewise
    except CacheError:
        raise
    except Exception as exc:  # whatever shape marshal produced: ints, dicts, nested tuples…
        raise CacheError(f"undecodable tags ({type(exc).__name__})") from exc
    if not (
        (texts.count(_SEP) + 1 if texts else 0) == 4 * count
        and len(numbers) == 3 * count * 4
        and len(uses) == len(names)
        and len(lines) == sum(uses) * uses.itemsize
        and all(type(name) is str for name in names)
    ):
        raise CacheError("tags whose parts disagree in length")
    # Interned, a name used in many files is one string, shared with its definition's.
    uses_of = References(tuple(map(sys.intern, names)), counts, lines)
    return FileTags(definitions, uses_of, syntax_error)


Repair = Callable[[Sequence[str]], Mapping[str, CachedFile]]
"""Re-parses the given files, whose cached tags turned out unusable, and saves the cache."""


class TagsView(Mapping[str, FileTags]):
    """Path → tags of every file that has them, decoding each file on first access.

    A file whose stored tags do not decode is re-parsed through `repair` (with every
    other damaged one, found in one pass), so no reader ever sees the damage."""

    def __init__(self, files: Mapping[str, CachedFile], repair: Repair | None = None) -> None:
        self._files = {path: cached for path, cached in sorted(files.items()) if cached.has_tags}
        self._repair = repair
        self._lock = threading.Lock()

    def __getitem__(self, path: str) -> FileTags:
        try:
            return self._files[path].tags or _EMPTY
        except CacheError:
            return self._repaired(path)

    def _repaired(self, path: str) -> FileTags:
        with self._lock:  # one repair pass, even when several threads hit the damage
            damaged = [p for p, cached in self._files.items() if not _decodes(cached)]
            fresh = self._repair(damaged) if self._repair and damaged else {}
            for bad in damaged:
                self._files[bad] = fresh.get(bad) or CachedFile(0, 0, "", _EMPTY)
            return self._files[path].tags or _EMPTY

    def cached(self, path: str) -> CachedFile:
        return self._files[path]

    def definition_counts(self, paths: Sequence[str]) -> list[int]:
        """How many definitions each file holds, without decoding any tags."""
        return [self._files[path].definitions if path in self._files else -1 for path in paths]

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)


class WordsView(Mapping[str, Words]):
    """Path → word counts of every file that has tags, decoded when asked: the words a
    file's parse left in memory (not yet saved), else words.bin's (read one file at a
    time: `wordsfile.StoredWords`), else counted again by `recount` (a file words.bin
    lacks, or has for other content or damaged). Made for one pass — building the text
    index: nothing read is kept."""

    def __init__(
        self, tags: TagsView, directory: Path | None, recount: Callable[[str], Words]
    ) -> None:
        self._tags, self._directory, self._recount = tags, directory, recount
        self._stored: wordsfile.StoredWords | None = None

    def __getitem__(self, path: str) -> Words:
        cached = self._tags.cached(path)
        packed = _in_memory(cached.words)
        if packed is None and self._directory is not None:
            if self._stored is None:
                self._stored = wordsfile.StoredWords(self._directory)
            digest, packed = self._stored.read(path) or ("", None)
            packed = packed if digest == cached.digest else None
        if packed is not None:
            with contextlib.suppress(CacheError):
                return wordsfile.unpack_words(packed)
        return self._recount(path)

    def __iter__(self) -> Iterator[str]:
        return iter(self._tags)

    def __len__(self) -> int:
        return len(self._tags)


def _in_memory(words: Aside | None) -> bytes | None:
    """A file's packed words from its parse, read back if spilled (None when they cannot
    be: words.bin or a recount then gives them)."""
    try:
        return None if words is None else read_back(words)
    except (CacheError, OSError):
        return None


def _decodes(cached: CachedFile) -> bool:
    try:
        _ = cached.tags  # kept decoded: the repair pass reads every file once
    except CacheError:
        return False
    return True


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
    """Read `tags.bin`; a missing one is empty, an unusable one is empty with `problem` set.

    Only the entries' outer shape is checked here; each file's tags are checked when
    first decoded, and most maps decode a few dozen files. Checking every file's tags at
    load instead measured, warm on Django 5.2.8 (2,863 files, medians of 9): build
    0.081 s → 0.214 s, `python -m repomap` wall time 0.49 s → 0.58 s; checking lazily
    costs nothing measurable against the unchecked cache (0.077 s, 0.49 s).
    """
    try:
        found = cachefile.read(directory / TAGS_FILE)
    except CacheError as exc:
        return CacheState(problem=f"{exc}; rebuilt")
    if found is None:
        return CacheState()
    raw = found[1]
    if type(raw) is not dict:
        return CacheState(problem=f"{TAGS_FILE} was corrupt (not a table of files); rebuilt")
    files: dict[str, CachedFile] = {}
    damaged: list[str] = []
    for path, entry in raw.items():
        try:
            files[_checked_path(path)] = CachedFile.decode(entry)
        except CacheError as exc:
            damaged.append(f"{path!r}: {exc}")
    if damaged:  # the rest is sound: only these files are parsed again
        problem = f"{TAGS_FILE} had {len(damaged)} damaged entries (first {damaged[0]}); re-parsed"
        return CacheState(files=files, problem=problem)
    return CacheState(files=files)


def _checked_path(path: object) -> str:
    """A path read from the cache, interned: the walk, the graph and the term indexes
    name the same files, and each kept its own copy of every path (12 MB on 20,000
    files, docs/benchmarks/memory.md)."""
    if type(path) is not str:
        raise CacheError("a file name that is not text")
    return sys.intern(path)


def save(directory: Path, files: Mapping[str, CachedFile], *, seeds: Sequence[Path] = ()) -> None:
    """Write `tags.bin` and `words.bin` atomically, each. Words are taken from memory
    (files parsed since the last save), else from this directory's words.bin or a
    `seeds`' (another tree's cache) for the same content (`wordsfile.save`); once
    written they are dropped from memory (`WordsView` reads them back)."""
    cachefile.write(
        directory / TAGS_FILE, {path: cached.encode() for path, cached in files.items()}
    )
    wordsfile.save(
        directory,
        (
            (path, cached.digest, cached.words)
            for path, cached in files.items()
            if cached.words is not None or cached.has_tags
        ),
        seeds=seeds,
    )
    for cached in files.values():
        cached.words = None


def load_blob(directory: Path, name: str, *, key: int, leave: frozenset[str] = frozenset()) -> Any:
    """A derived payload saved for the state `key`, or None when absent or stale;
    raises CacheError when the file is there but unusable. Its large parts named in
    `leave` stay in the file (`cachefile.Part`)."""
    found = cachefile.read(directory / name, leave=leave)
    return found[1] if found is not None and found[0] == key else None


def save_blob(directory: Path, name: str, payload: Any, *, key: int) -> None:
    cachefile.write(directory / name, payload, key=key)
