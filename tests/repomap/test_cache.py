from __future__ import annotations

import marshal
import pickle
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from repomap import cache, cachefile, wordsfile
from repomap.build import build
from repomap.cachefile import CacheError
from repomap.tags import extract_tags, file_words
from tests.conftest import MakeRepo

NOTE = "class Note:\n    def save(self):\n        return store(self)\n"
STORE = "def store(x):\n    return x\n"


def cached(source: str = NOTE) -> cache.CachedFile:
    return cache.CachedFile(len(source), 1, "d", extract_tags(source.encode(), "python"))


def test_an_entry_round_trips_through_its_encoding() -> None:
    original = cached()
    encoded = marshal.dumps(original.encode())  # type: ignore[arg-type]
    again = cache.CachedFile.decode(marshal.loads(encoded))
    assert again.tags == original.tags
    assert again.definitions == 2 and (again.size, again.digest) == (original.size, "d")


@pytest.mark.parametrize(
    "entry",
    [
        [1, 2, "d", None, "", (), 0],  # a list, not a tuple
        (1, 2, "d", None, "", ()),  # a field short
        (1, 2, "d", "packed", "", (), 0),
        (1, 2, b"d", None, "", (), 0),
        (1, 2, "d", None, "", ("ok", 3), 0),
        (1, 2, "d", None, "", (), -1),
        (True, 2, "d", None, "", (), 0),
    ],
)
def test_decode_refuses_what_encode_cannot_make(entry: object) -> None:
    with pytest.raises(CacheError):
        cache.CachedFile.decode(entry)


@pytest.mark.parametrize(
    "blob",
    [
        b"\xff",
        marshal.dumps(None),
        marshal.dumps(("", b"", ((), b"", b""))),
        marshal.dumps(("", b"", ((), b"", b""), False)),  # no word counts (format 5)
        marshal.dumps(("", b"", ((), b"", b""), 0, {})),
        marshal.dumps(("a\0b\0c\0d", b"\1\0\0\0" * 3, ((), b"", b""), False, {})),  # count 2
        marshal.dumps(("", b"", (("x",), b"", b""), False, {})),  # a name without a count
        marshal.dumps(("", b"", (("x",), b"\1\0\0\0", b""), False, {})),  # a count, no lines
        marshal.dumps(("", b"", ((), b"", b""), False, ("", b""))),  # format 9's word counts
    ],
)
def test_damaged_tags_raise_cache_error_when_decoded(blob: bytes) -> None:
    damaged = cache.CachedFile(1, 1, "d", None, packed=blob, definitions=2)
    with pytest.raises(CacheError):
        _ = damaged.tags


def test_a_parsed_file_crosses_from_its_worker_with_its_words() -> None:
    words = wordsfile.pack_words(file_words(NOTE.encode()))
    parsed = cache.CachedFile(1, 1, "d", extract_tags(NOTE.encode(), "python"), words=words)
    again = pickle.loads(pickle.dumps(parsed))
    assert again.words == words and again.tags == parsed.tags
    assert dict(wordsfile.unpack_words(words))["store"] == 1


def test_view_repairs_every_damaged_file_in_one_pass() -> None:
    sound = cached(STORE)
    bad = cache.CachedFile(1, 1, "d", None, packed=b"junk", definitions=2)
    calls: list[list[str]] = []

    def repair(paths: Sequence[str]) -> dict[str, cache.CachedFile]:
        calls.append(list(paths))
        return {path: cached() for path in paths}

    view = cache.TagsView({"a.py": bad, "b.py": bad.moved(5), "c.py": sound}, repair)
    assert [d.name for d in view["b.py"].definitions] == ["Note", "save"]
    assert [d.name for d in view["a.py"].definitions] == ["Note", "save"]
    assert view["c.py"] == sound.tags
    assert calls == [["a.py", "b.py"]]
    assert view.definition_counts(["a.py", "c.py", "gone.py"]) == [2, 1, -1]


def test_damage_found_at_decode_is_reparsed_and_saved(make_repo: MakeRepo, home: Path) -> None:
    root = make_repo({"a.py": NOTE, "b.py": STORE})
    first = build(root, home=home)
    expected = dict(first.tags)
    tags_file = Path(first.stats.cache_dir) / cache.TAGS_FILE
    found = cachefile.read(tags_file)
    assert found is not None
    key, table = found
    table["a.py"] = (*table["a.py"][:3], marshal.dumps(7), *table["a.py"][4:])
    cachefile.write(tags_file, table, key=key)

    damaged = build(root, home=home)
    assert damaged.stats.reused == 2  # the entry looks sound until its tags are read
    assert dict(damaged.tags) == expected
    assert ("a.py", "cached tags were damaged; re-parsed") in {
        (w.path, w.reason) for w in damaged.warnings
    }
    again = build(root, home=home)
    assert dict(again.tags) == expected and again.warnings == []


def test_a_damaged_entry_costs_only_its_own_file(make_repo: MakeRepo, home: Path) -> None:
    root = make_repo({"a.py": NOTE, "b.py": STORE, "c.py": STORE})
    first = build(root, home=home)
    tags_file = Path(first.stats.cache_dir) / cache.TAGS_FILE
    found = cachefile.read(tags_file)
    assert found is not None
    key, table = found
    cachefile.write(tags_file, {**table, "b.py": ("not", "an", "entry")}, key=key)
    result = build(root, home=home)
    assert (result.stats.parsed, result.stats.reused) == (1, 2)
    assert "damaged entries" in result.warnings[0].reason
    assert dict(result.tags) == dict(first.tags)
    assert build(root, home=home).stats.parsed == 0


def test_decoded_tags_share_their_repeated_strings() -> None:
    """A name, a kind and a top-level qualified name are one string wherever they recur:
    held for every file of a large repository, copies cost megabytes (issue 23)."""
    note, store = (
        cache.CachedFile.decode(marshal.loads(marshal.dumps(cached(source).encode())))  # type: ignore[arg-type]
        for source in (NOTE, STORE)
    )
    assert note.tags is not None and store.tags is not None
    defined = store.tags.definitions[0]
    assert defined.qualified is defined.name  # top level: no second string
    used = next(name for name in note.tags.references if name == "store")
    assert used is defined.name  # the use in one file, the definition in another
    assert note.tags.definitions[1].kind is sys.intern("method")
