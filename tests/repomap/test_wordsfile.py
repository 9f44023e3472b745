from __future__ import annotations

import marshal
import zlib
from pathlib import Path

import pytest

from repomap import cachefile, wordsfile
from repomap.cachefile import CacheError
from repomap.spill import Spill, Spilled
from repomap.words import Words

A = wordsfile.pack_words(Words.from_counts({"alpha": 1, "beta": 2}))
B = wordsfile.pack_words(Words.from_counts({"gamma": 3}))


def stored(directory: Path) -> dict[str, tuple[str, bytes] | None]:
    words = wordsfile.StoredWords(directory)
    try:
        return {path: words.read(path) for path in words}
    finally:
        words.close()


@pytest.mark.parametrize(
    "words",
    [
        {"word": 2},  # format 6's dict
        ("a\0b", b"\1\0\0\0"),  # two words, one count
        ("", b"\1\0\0\0"),  # a count, no word
        ("a", b"\1\0"),  # half a count
        (b"a", b"\1\0\0\0"),  # words that are not text
    ],
)
def test_damaged_word_counts_raise_cache_error_when_decoded(words: object) -> None:
    with pytest.raises(CacheError):
        wordsfile.unpack_words(marshal.dumps(words))
    assert dict(wordsfile.unpack_words(A)) == {"alpha": 1, "beta": 2}


def test_saved_words_are_read_back_one_file_at_a_time(tmp_path: Path) -> None:
    wordsfile.save(tmp_path, [("a.py", "da", A), ("b.py", "db", B)], seeds=())
    assert stored(tmp_path) == {"a.py": ("da", A), "b.py": ("db", B)}
    assert wordsfile.StoredWords(tmp_path / "none").read("a.py") is None


def test_a_damaged_entry_is_a_miss_and_the_others_still_read(tmp_path: Path) -> None:
    wordsfile.save(tmp_path, [("a.py", "da", A), ("b.py", "db", B)], seeds=())
    path = tmp_path / wordsfile.WORDS_FILE
    blob = bytearray(path.read_bytes())
    blob[-1] ^= 0xFF  # the last byte of b.py's words
    path.write_bytes(bytes(blob))
    assert stored(tmp_path) == {"a.py": ("da", A), "b.py": None}


@pytest.mark.parametrize(
    "entries",
    [
        {"a.py": ("da", 0, 3)},  # three fields
        {"a.py": ("da", -1, 3, 0)},  # a negative start
        {"a.py": (b"da", 0, 3, 0)},  # a hash that is not text
        {1: ("da", 0, 3, 0)},  # a path that is not text
        ["a.py"],  # not a table
    ],
)
def test_a_words_file_of_another_shape_reads_as_empty(tmp_path: Path, entries: object) -> None:
    stream = cachefile.Stream(3, [b"abc"])
    cachefile.write(tmp_path / wordsfile.WORDS_FILE, {"entries": entries, "words": stream})
    assert stored(tmp_path) == {}


def test_an_entry_beyond_the_words_is_a_miss(tmp_path: Path) -> None:
    entries = {"a.py": ("da", 2, 9, zlib.crc32(b"c"))}
    stream = cachefile.Stream(3, [b"abc"])
    cachefile.write(tmp_path / wordsfile.WORDS_FILE, {"entries": entries, "words": stream})
    assert stored(tmp_path) == {"a.py": None}


def test_a_file_not_parsed_takes_its_words_from_this_cache_then_a_seed(tmp_path: Path) -> None:
    own, seed, other = tmp_path / "own", tmp_path / "seed", tmp_path / "other"
    wordsfile.save(own, [("a.py", "da", A)], seeds=())
    wordsfile.save(seed, [("a.py", "da", B), ("b.py", "db", B), ("c.py", "old", A)], seeds=())
    wordsfile.save(other, [("b.py", "db", A)], seeds=())
    wordsfile.save(
        own,
        [("a.py", "da", None), ("b.py", "db", None), ("c.py", "dc", None), ("d.py", "dd", A)],
        seeds=(seed, other),
    )
    # this tree's own words win; then the first seed's; a file of other content has none
    assert stored(own) == {"a.py": ("da", A), "b.py": ("db", B), "d.py": ("dd", A)}


def test_a_save_that_parsed_nothing_and_keeps_the_files_does_not_write(tmp_path: Path) -> None:
    wordsfile.save(tmp_path, [("a.py", "da", A), ("b.py", "db", B)], seeds=())
    path = tmp_path / wordsfile.WORDS_FILE
    inode = path.stat().st_ino
    wordsfile.save(tmp_path, [("a.py", "da", None), ("b.py", "db", None)], seeds=())
    assert path.stat().st_ino == inode
    wordsfile.save(tmp_path, [("a.py", "da", None)], seeds=())  # one file fewer
    assert path.stat().st_ino != inode and stored(tmp_path) == {"a.py": ("da", A)}


def test_words_that_cannot_be_copied_are_counted_again_not_written_wrong(tmp_path: Path) -> None:
    """A stored entry that fails its check while it is copied is written as zeros with
    its CRC: read back, it is a miss, never other words."""
    wordsfile.save(tmp_path, [("a.py", "da", A), ("b.py", "db", B)], seeds=())
    path = tmp_path / wordsfile.WORDS_FILE
    blob = bytearray(path.read_bytes())
    blob[-1] ^= 0xFF
    path.write_bytes(bytes(blob))
    wordsfile.save(
        tmp_path, [("a.py", "da", None), ("b.py", "db", None), ("c.py", "dc", A)], seeds=()
    )
    assert stored(tmp_path) == {"a.py": ("da", A), "b.py": None, "c.py": ("dc", A)}


def test_spilled_words_read_back_and_save_as_held_words_do(tmp_path: Path) -> None:
    spill = Spill(tmp_path / "cache")
    a, b = spill.add(A), spill.add(B)
    assert isinstance(a, Spilled) and (a.read(), b.read()) == (A, B)
    assert [p.name for p in (tmp_path / "cache").iterdir()] == []  # unnamed: nothing to clean
    wordsfile.save(tmp_path, [("a.py", "da", a), ("b.py", "db", b)], seeds=())
    assert stored(tmp_path) == {"a.py": ("da", A), "b.py": ("db", B)}


def test_spilled_words_that_cannot_be_read_back_are_counted_again(tmp_path: Path) -> None:
    spill = Spill(tmp_path / "cache")
    a, b = spill.add(A), spill.add(B)
    spill._fd = -1  # the spill is gone
    with pytest.raises(OSError):
        a.read()
    wordsfile.save(tmp_path, [("a.py", "da", a), ("b.py", "db", b), ("c.py", "dc", A)], seeds=())
    assert stored(tmp_path) == {"a.py": None, "b.py": None, "c.py": ("dc", A)}
