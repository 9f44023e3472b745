from __future__ import annotations

import marshal
import math
import os
import subprocess
import sys
import tempfile
from array import array
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from repomap import cachefile, postings
from repomap import spill as spill_module
from repomap import terms as terms_module
from repomap.build import build
from repomap.repository import Repository
from repomap.terms import (
    BM25_B,
    BM25_K1,
    STORED_PARTS,
    TermIndex,
    file_terms,
    text_terms,
)
from repomap.words import count_terms, terms
from tests.conftest import MakeRepo


def test_a_document_weighs_definitions_over_uses_and_counts_the_path(
    make_repo: MakeRepo, home: Path
) -> None:
    root = make_repo({"pkg/cart.py": "def add_item(cart):\n    return render_total(cart)\n"})
    document = file_terms("pkg/cart.py", build(root, home=home).tags["pkg/cart.py"])
    assert document["add_item"] == 2 and document["render_total"] == 1
    assert document["cart"] == 3 + 1  # the path's word, and the parameter used once


def test_the_file_that_defines_the_named_thing_ranks_first(make_repo: MakeRepo, home: Path) -> None:
    root = make_repo({
        "shop/cart.py": "def add_item(cart, item):\n    cart.items.append(item)\n",
        "shop/pricing.py": "def total_price(items):\n    return sum(i.price for i in items)\n",
        "shop/views.py": "from shop.cart import add_item\n\ndef view(c, i):\n    add_item(c, i)\n",
    })  # fmt: skip
    index = TermIndex.build(build(root, home=home).tags, document=file_terms)
    scores = index.scores(terms("total_price is wrong when items are empty"))
    assert max(scores, key=scores.__getitem__) == "shop/pricing.py"
    scores = index.scores(terms("add_item raises"))
    assert sorted(scores, key=lambda p: -scores[p])[:2] == ["shop/cart.py", "shop/views.py"]


def test_kept_files_only_and_no_match_means_no_score(make_repo: MakeRepo, home: Path) -> None:
    root = make_repo(
        {"a.py": "def alpha():\n    pass\n", "tests/test_a.py": "def alpha():\n    pass\n"}
    )
    index = TermIndex.build(
        build(root, home=home).tags, document=file_terms, keep=lambda p: not p.startswith("tests/")
    )
    assert len(index) == 1 and list(index.scores(["alpha"])) == ["a.py"]
    assert index.scores(["zebra"]) == {}
    assert index.idf("alpha") > 0 and index.idf("zebra") == 0


def test_a_text_document_holds_comments_and_strings_the_names_do_not(
    make_repo: MakeRepo, home: Path
) -> None:
    root = make_repo({
        "io/stream.py": (
            "def get(buffer):\n"
            "    # a lone carriage return is a line break too\n"
            "    return buffer.read(1)\n"
        ),
        "io/reader.py": "def read_line(buffer):\n    return buffer.read(80)\n",
    })  # fmt: skip
    repository = Repository.open(root, home=home)
    tags, words = repository.tags, repository.words()
    said = text_terms("io/stream.py", words["io/stream.py"])
    assert said["carriage"] == 1 and said["buffer"] == 2 and said["stream"] == 3
    assert file_terms("io/stream.py", tags["io/stream.py"])["carriage"] == 0
    summary = terms("A lone carriage return is not treated as a line break")
    assert "io/stream.py" not in TermIndex.build(tags, document=file_terms).scores(summary)
    scores = TermIndex.build(words, document=text_terms).scores(summary)
    assert max(scores, key=scores.__getitem__) == "io/stream.py"


def _dict_bm25(documents: dict[str, Counter[str]], query: list[str]) -> dict[str, float]:
    """BM25 as TermIndex computed it with a dict of dicts (term → path → count), before
    its postings became arrays: the reference the compact index must match exactly."""
    postings: dict[str, dict[str, int]] = {}
    lengths = {path: sum(document.values()) for path, document in documents.items()}
    for path, document in documents.items():
        for term, count in document.items():
            postings.setdefault(term, {})[path] = count
    average = sum(lengths.values()) / max(len(lengths), 1)
    found: dict[str, float] = {}
    for term in sorted(set(query)):
        if not postings.get(term):
            continue
        hits = postings[term]
        idf = math.log(1 + (len(lengths) - len(hits) + 0.5) / (len(hits) + 0.5))
        for path, count in hits.items():
            norm = BM25_K1 * (1 - BM25_B + BM25_B * lengths[path] / average)
            found[path] = found.get(path, 0.0) + idf * count * (BM25_K1 + 1) / (count + norm)
    return found


TERM = st.sampled_from(["query", "set", "select_related", "cart", "total", "price", "x1"])
DOCUMENTS = st.dictionaries(
    st.text("abc/", min_size=1, max_size=6),
    st.dictionaries(TERM, st.integers(1, 50)).map(Counter),
    max_size=8,
)
QUERY = st.lists(st.sampled_from(["query", "cart", "price", "zebra", "x1", "set"]), max_size=6)


@given(DOCUMENTS, QUERY)
def test_the_compact_index_scores_exactly_as_the_dict_one(
    documents: dict[str, Counter[str]], query: list[str]
) -> None:
    index = TermIndex(documents.items())
    scores, expected = index.scores(query), _dict_bm25(documents, query)
    assert scores == expected and list(scores) == list(expected)  # same floats, same order
    assert len(index) == len(documents)
    for term in {*query, "zebra"}:
        hits = sum(term in document for document in documents.values())
        assert index.idf(term) == (
            math.log(1 + (len(documents) - hits + 0.5) / (hits + 0.5)) if hits else 0.0
        )


WIDE_DOCUMENTS = st.dictionaries(
    st.text("abc/", min_size=1, max_size=6),
    st.dictionaries(TERM, st.sampled_from([1, 2, 7, 65_535, 65_536, 70_000])).map(Counter),
    max_size=8,
)


def _postings_payload(index: TermIndex) -> dict[str, object]:
    return {k: bytes(v) if isinstance(v, memoryview) else v for k, v in index.to_payload().items()}


@given(WIDE_DOCUMENTS)
def test_postings_set_aside_in_blocks_make_the_same_index_as_held(
    documents: dict[str, Counter[str]],
) -> None:
    """Gathered two postings a block in a scratch file — some blocks' counts in two bytes,
    some in four — the index is array for array the one gathered in memory at once."""
    held = _postings_payload(TermIndex(documents.items()))
    with tempfile.TemporaryDirectory() as scratch, pytest.MonkeyPatch.context() as patch:
        patch.setattr(postings, "BLOCK_POSTINGS", 2)
        aside = TermIndex(documents.items(), scratch=Path(scratch))
        assert _postings_payload(aside) == held
        assert os.listdir(scratch) == []  # the scratch file had no name, and is gone
        assert aside.scores(["cart", "x1"]) == _dict_bm25(documents, ["cart", "x1"])


def test_postings_that_cannot_be_set_aside_stay_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that fails (a full disk) keeps that block and the next in memory; the
    blocks set aside before it are read back: the index is the same."""
    documents = {f"f{i}.py": Counter({"cart": i + 1, f"t{i}": 2}) for i in range(9)}
    real_pwrite = os.pwrite
    writes = 0

    def fills_up(fd: int, data: bytes, offset: int) -> int:
        nonlocal writes
        writes += 1
        if writes > 3:
            raise OSError(28, "No space left on device")
        return real_pwrite(fd, data, offset)

    monkeypatch.setattr(postings, "BLOCK_POSTINGS", 4)
    monkeypatch.setattr(spill_module.os, "pwrite", fills_up)
    aside = TermIndex(documents.items(), scratch=tmp_path)
    monkeypatch.undo()
    assert _postings_payload(aside) == _postings_payload(TermIndex(documents.items()))


def test_the_whole_text_index_reads_the_packed_word_counts(make_repo: MakeRepo, home: Path) -> None:
    root = make_repo({"a.py": "# parse the date\ndef f():\n    return 'date'\n", "b.py": "x = 1\n"})
    words = Repository.open(root, home=home).words()
    assert dict(words["a.py"].counts()) == count_terms(
        "# parse the date\ndef f():\n    return 'date'\n"
    )
    assert text_terms("a.py", words["a.py"])["date"] == 2
    documents = {path: text_terms(path, words[path]) for path in words}
    assert TermIndex.build(words, document=text_terms).scores(["date", "parse"]) == _dict_bm25(
        documents, ["date", "parse"]
    )


def test_an_index_built_keeps_no_cache_of_name_terms(make_repo: MakeRepo, home: Path) -> None:
    """The terms of each name are cached while the index is built, and dropped after: a
    repository's names held twice cost ~10 MB per 20,000 files (issue 23)."""
    root = make_repo({"a.py": "def load_notes():\n    return save_notes()\n"})
    TermIndex.build(build(root, home=home).tags, document=file_terms)
    assert terms_module._name_terms.cache_info().currsize == 0


@given(DOCUMENTS, QUERY)
def test_an_index_read_back_from_its_payload_scores_exactly_as_built(
    documents: dict[str, Counter[str]], query: list[str]
) -> None:
    built = TermIndex(documents.items())
    saved = marshal.dumps(built.to_payload())  # written with its paths not interned
    canonical = [sys.intern(path) for path in built.paths]  # what the tags' own would be
    read = TermIndex.from_payload(marshal.loads(saved))
    assert read.scores(query) == built.scores(query) and list(read.scores(query)) == list(
        built.scores(query)
    )
    assert read.paths == built.paths and all(read.idf(t) == built.idf(t) for t in query)
    assert all(path is first for path, first in zip(read.paths, canonical, strict=True))


def test_an_index_of_more_files_than_two_bytes_number_scores_the_last_ones() -> None:
    """Up to 65,536 files a posting's file is two bytes; past that, four."""
    for total in (1 << 16, (1 << 16) + 2):
        documents = [
            (f"f{n}.py", Counter({"common": 1, f"only{n}": n % 3 + 1})) for n in range(total)
        ]
        index = TermIndex(documents)
        last = f"f{total - 1}.py"
        assert list(index.scores([f"only{total - 1}"])) == [last]
        assert len(index.scores(["common"])) == total
        read = TermIndex.from_payload(marshal.loads(marshal.dumps(index.to_payload())))
        assert read.scores([f"only{total - 1}", "common"]) == index.scores(
            [f"only{total - 1}", "common"]
        )
        assert read.to_payload()["file_width"] == (2 if total == 1 << 16 else 4)


def _large_index() -> TermIndex:
    """Postings enough to go to a cache file's tail (`cachefile.TAIL_MIN_BYTES`)."""
    documents = [
        (f"f{n}.py", Counter({f"t{(n * 7 + k) % 900}": k % 5 + 1 for k in range(300)}))
        for n in range(250)
    ]
    return TermIndex(documents)


def test_an_index_whose_postings_stay_in_its_file_scores_exactly_as_built(tmp_path: Path) -> None:
    built = _large_index()
    cachefile.write(tmp_path / "text.bin", built.to_payload(), key=1)
    found = cachefile.read(tmp_path / "text.bin", leave=STORED_PARTS)
    assert found is not None
    payload = found[1]
    assert all(isinstance(payload[name], cachefile.Part) for name in STORED_PARTS)
    read = TermIndex.from_payload(payload)
    for query in (["t1", "t899", "nowhere"], [f"t{k}" for k in range(0, 900, 7)], []):
        assert read.scores(query) == built.scores(query)
        assert list(read.scores(query)) == list(built.scores(query))
    assert all(read.idf(f"t{k}") == built.idf(f"t{k}") for k in range(900))
    assert read.to_payload() == built.to_payload()  # the stored postings read back whole


def test_stored_postings_it_cannot_have_made_are_refused(tmp_path: Path) -> None:
    payload = _large_index().to_payload()
    files = bytearray(payload["files"])
    files[-2:] = (60_000).to_bytes(2, "little")  # a file past the last (of 250)
    cachefile.write(tmp_path / "text.bin", {**payload, "files": files}, key=1)
    found = cachefile.read(tmp_path / "text.bin", leave=STORED_PARTS)
    assert found is not None and isinstance(found[1]["files"], cachefile.Part)
    with pytest.raises(ValueError, match="inconsistent"):
        TermIndex.from_payload(found[1])


@pytest.mark.parametrize("largest", [65_535, 65_536, 3_000_000])
def test_a_count_past_two_bytes_is_kept_whole(largest: int) -> None:
    """Counts are two bytes while they all fit, else four: the same scores either way."""
    documents = {
        "a.py": Counter({"x": 1, "y": 3}),
        "b.py": Counter({"x": largest}),
        "c.py": Counter({"y": 2, "x": 5}),
    }
    index = TermIndex(documents.items())
    expected = _dict_bm25(documents, ["x", "y"])
    assert index.scores(["x", "y"]) == expected
    read = TermIndex.from_payload(marshal.loads(marshal.dumps(index.to_payload())))
    assert read.scores(["x", "y"]) == expected
    assert read.to_payload()["count_width"] == (2 if largest < 1 << 16 else 4)


def _payload(**change: object) -> dict[str, object]:
    documents = {"a.py": Counter({"cart": 2, "total": 1}), "b.py": Counter({"cart": 1})}
    return {**TermIndex(documents.items()).to_payload(), **change}


@pytest.mark.parametrize(
    ("change", "expect"),
    [
        ({"recipe": "bm25 v0"}, "made another way"),
        ({"paths": ("a.py", 7)}, "not text"),
        ({"keys": array("Q", [2, 2]).tobytes()}, "inconsistent"),  # a key twice
        ({"keys": array("Q", [3, 1]).tobytes()}, "inconsistent"),  # unsorted
        ({"files": array("i", [0, 5, 0]).tobytes()}, "inconsistent"),
        ({"counts": array("i", [1, 1]).tobytes()}, "inconsistent"),
        ({"norms": array("d", [1.0, float("nan")]).tobytes()}, "inconsistent"),
        ({"starts": array("q", [0, 3, 2]).tobytes()}, "inconsistent"),
        ({"files": b"\x01"}, "wrong shape"),
        ({"file_width": 3}, "wrong shape"),
        ({"count_width": 8}, "wrong shape"),
    ],
)
def test_a_payload_it_cannot_have_made_is_refused(change: dict[str, object], expect: str) -> None:
    with pytest.raises(ValueError, match=expect):
        TermIndex.from_payload(_payload(**change))
    with pytest.raises(ValueError, match="wrong shape"):
        TermIndex.from_payload([1, 2])


def test_scores_are_the_same_floats_whatever_the_hash_seed() -> None:
    """Terms are summed in one order: a set's order changes with PYTHONHASHSEED, and with
    it the last bits of a sum, which flipped ties between runs of the same report."""
    script = (
        "from collections import Counter\n"
        "from repomap.terms import TermIndex\n"
        "docs = {f'f{n}.py': Counter({t: (n * 7 + i) % 5 + 1 for i, t in enumerate(TERMS)})\n"
        "        for n in range(40)}\n"
        "print(repr(sorted(TermIndex(docs.items()).scores(TERMS).items())))\n"
    ).replace("TERMS", repr([f"term{n}" for n in range(30)]))
    runs = {
        subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True,
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
        ).stdout
        for seed in (1, 2, 3)
    }  # fmt: skip
    assert len(runs) == 1


def test_an_index_saved_by_another_process_finds_the_same_terms() -> None:
    """The cache outlives the process that built it: a term's key must not depend on
    PYTHONHASHSEED, as Python's own string hash does."""
    script = (
        "import marshal, sys\n"
        "from collections import Counter\n"
        "from repomap.terms import TermIndex\n"
        "docs = {'a.py': Counter({'cart': 2, 'total': 1}), 'b.py': Counter({'cart': 1})}\n"
        "sys.stdout.buffer.write(marshal.dumps(TermIndex(docs.items()).to_payload()))\n"
    )
    saved = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, check=True,
        env={**os.environ, "PYTHONHASHSEED": "7"},
    ).stdout  # fmt: skip
    here = TermIndex.from_payload(marshal.loads(saved))
    assert set(here.scores(["cart"])) == {"a.py", "b.py"} and set(here.scores(["total"])) == {
        "a.py"
    }
    built_here = TermIndex.from_payload(_payload())
    assert here.scores(["cart", "total"]) == built_here.scores(["cart", "total"])
