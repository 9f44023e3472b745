"""`words.bin`: every file's word counts (`repomap.words.Words`) with its content hash,
kept apart from the tags: only the text index reads them, once, when it is built.

Format: a cache file (`cachefile.py`) whose head maps each path to (content hash, start,
length, CRC-32) of its packed words (`pack_words`) in the tail part `words`, one after
another. It is written from chunks (`cachefile.Stream`) and read one file at a time
(`cachefile.open_ranges`): the words of a 20,000-file tree, 57 MB, are never held whole —
read whole, they took twice that while they were decoded, on top of the text index being
built (docs/benchmarks/memory.md). A file's entry is checked by its own CRC before
`marshal` sees it; an entry that fails is a miss, and the file's words are counted again.

    stored = StoredWords(directory)
    digest, packed = stored.read("app/models.py") or ("", b"")
"""

from __future__ import annotations

import marshal
import zlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from repomap import cachefile
from repomap.cachefile import CacheError
from repomap.spill import Aside, Spilled, read_back
from repomap.words import Words

WORDS_FILE = "words.bin"
_PART = "words"
_SEP = "\0"  # cannot occur in a term: tags.py replaces NUL in source text

Entry = tuple[str, int, int, int]
"""A file's place in words.bin: (content hash, start, length, CRC-32 of those bytes)."""


def pack_words(words: Words) -> bytes:
    return marshal.dumps(words.packed())


def unpack_words(packed: bytes) -> Words:
    """The words `pack_words` made; CacheError for anything else."""
    try:
        terms, tallies = marshal.loads(packed)
        if not (type(terms) is str and type(tallies) is bytes):
            raise CacheError("word counts with fields of the wrong type")
        words = Words(terms, tallies)  # ValueError unless whole uint32s
    except CacheError:
        raise
    except Exception as exc:  # whatever shape marshal produced
        raise CacheError(f"undecodable word counts ({type(exc).__name__})") from exc
    if (terms.count(_SEP) + 1 if terms else 0) != len(words):
        raise CacheError("word counts that disagree with their words")
    return words


class StoredWords:
    """The words.bin of one cache directory, open for reading: each file's packed words
    read when asked. Empty when the file is missing or unusable (the words are then
    counted again from the files: `repomap.cache.WordsView`)."""

    def __init__(self, directory: Path) -> None:
        self._ranges: cachefile.Ranges | None = None
        self._entries: dict[str, Entry] = {}
        try:
            ranges = cachefile.open_ranges(directory / WORDS_FILE)
        except CacheError:
            return
        if ranges is None:
            return
        entries = ranges.payload.get("entries") if type(ranges.payload) is dict else None
        if type(entries) is not dict or not all(map(_is_entry, entries.items())):
            ranges.close()
            return
        self._ranges, self._entries = ranges, entries

    def __contains__(self, path: str) -> bool:
        return path in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def entry(self, path: str) -> Entry | None:
        return self._entries.get(path)

    def read(self, path: str) -> tuple[str, bytes] | None:
        """(content hash, packed words) of `path`; None when there are none or they fail
        their check."""
        entry = self._entries.get(path)
        if entry is None or self._ranges is None:
            return None
        digest, start, length, crc = entry
        try:
            packed = self._ranges.read(_PART, start, length)
        except CacheError:
            return None
        return (digest, packed) if zlib.crc32(packed) == crc else None

    def copy(self, path: str) -> bytes:
        """The stored bytes of `path`, for a new words.bin; zeros of the same length when
        they cannot be read (their CRC then fails, and the words are counted again)."""
        found = self.read(path)
        return found[1] if found is not None else bytes(self._entries[path][2])

    def close(self) -> None:
        if self._ranges is not None:
            self._ranges.close()


def _spilled_copy(packed: Aside) -> bytes:
    """`read_back` for a new words.bin: zeros of the same length when the spill cannot
    give them back (their CRC then fails, and the words are counted again)."""
    try:
        return read_back(packed)
    except (CacheError, OSError):
        return bytes(len(packed))


def _is_entry(item: tuple[object, object]) -> bool:
    path, entry = item
    return (
        type(path) is str
        and type(entry) is tuple
        and len(entry) == 4
        and type(entry[0]) is str
        and all(type(number) is int and number >= 0 for number in entry[1:])
    )


def save(
    directory: Path, files: Iterable[tuple[str, str, Aside | None]], *, seeds: Sequence[Path]
) -> None:
    """Write `directory`'s words.bin for `files`: (path, content hash, packed words, or
    None for a file not parsed since the last save, whose words are taken from this
    directory's words.bin or else a seed's (another tree's cache), for the same content;
    a file found in none is left out). A save that parsed nothing and keeps the same
    files leaves words.bin as it is (it would be the same bytes)."""
    files = list(files)
    lent = sum(packed is None for _, _, packed in files)
    stores = [StoredWords(folder) for folder in (directory, *seeds)] if lent else []
    try:
        entries: dict[str, Entry] = {}
        sources: list[Aside | tuple[StoredWords, str]] = []
        start = 0
        for path, digest, packed in files:
            if packed is not None:
                crc = packed.crc if isinstance(packed, Spilled) else zlib.crc32(packed)
                entries[path] = (digest, start, len(packed), crc)
                sources.append(packed)
                start += len(packed)
                continue
            for store in stores:
                entry = store.entry(path)
                if entry is not None and entry[0] == digest:
                    entries[path] = (digest, start, entry[2], entry[3])
                    sources.append((store, path))
                    start += entry[2]
                    break
        if lent == len(files) and stores and entries.keys() == set(stores[0]):
            return  # nothing parsed, the same files: the same bytes as are there
        chunks = (
            source[0].copy(source[1]) if isinstance(source, tuple) else _spilled_copy(source)
            for source in sources
        )
        stream = cachefile.Stream(start, chunks)
        cachefile.write(directory / WORDS_FILE, {"entries": entries, _PART: stream})
    finally:
        for store in stores:
            store.close()
