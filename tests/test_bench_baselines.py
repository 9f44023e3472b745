"""bench/baselines.py: BM25 over files and the "mentions, then BM25" ranker."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "bench"))

from baselines import Bm25, mentions_order, rank_of, suffix_matches, tokens

FILES = {
    "lib/parser.js": "function parseFlowMapping(state) { throwError(state, 'bad flow'); }",
    "lib/dumper.js": "function writeScalar(state, string) { return quoteString(string); }",
    "src/types/float.js": "function constructYamlFloat(data) { return parseFloat(data); }",
    "src/index.js": "module.exports = { load, dump };",
    "types/index.js": "export type Schema = object;",
    "other/index.js": "exports.x = 1;",
    "lib/index.js": "exports.y = 2;",
}


def test_tokens_split_identifiers_and_drop_short_words() -> None:
    assert tokens("parseHTTPHeader_v2 fn ok") == ["parse", "http", "header"]


def test_bm25_ranks_the_file_whose_words_the_query_uses_first() -> None:
    bm25 = Bm25.build(FILES)
    assert bm25.rank("the flow mapping parse throws")[0] == "lib/parser.js"
    assert bm25.rank("quote a scalar string when dumping")[0] == "lib/dumper.js"
    assert sorted(bm25.rank("anything")) == sorted(FILES)


def test_bm25_counts_path_words_so_a_file_named_like_the_query_ranks() -> None:
    bm25 = Bm25.build({"a/float.js": "x = 1", "a/other.js": "y = 2"})
    assert bm25.rank("float")[0] == "a/float.js"


def test_bm25_ties_are_ordered_by_path() -> None:
    assert Bm25.build({"b.js": "", "a.js": ""}).rank("nothing") == ["a.js", "b.js"]


@pytest.mark.parametrize(
    ("mention", "found"),
    [
        ("/home/u/node_modules/js-yaml/lib/parser.js", ["lib/parser.js"]),
        ("parser.js", ["lib/parser.js"]),
        ("C:\\\\work\\\\src\\\\types\\\\float.js", ["src/types/float.js"]),
        ("types/index.js", ["types/index.js"]),
        ("index.js", ["src/index.js", "types/index.js", "other/index.js", "lib/index.js"]),
        ("missing.js", []),
    ],
)
def test_suffix_matches_keep_the_longest_shared_tail(mention: str, found: list[str]) -> None:
    assert suffix_matches(mention, list(FILES)) == found


def test_mentions_order_puts_named_files_then_definers_then_bm25() -> None:
    ranked = ["src/index.js", "lib/dumper.js", "src/types/float.js", "lib/parser.js"]
    order = mentions_order(
        ranked, files=["js-yaml/lib/parser.js"], definers=[{"src/types/float.js", "gone.js"}]
    )
    assert order == ["lib/parser.js", "src/types/float.js", "src/index.js", "lib/dumper.js"]


def test_mentions_order_keeps_only_the_bm25_best_of_an_ambiguous_mention() -> None:
    ranked = ["z.js", "d/index.js", "c/index.js", "b/index.js", "a/index.js", "y.js"]
    order = mentions_order(ranked, files=["index.js"], definers=[{"y.js"}])
    assert order == ["d/index.js", "c/index.js", "b/index.js", "y.js", "z.js", "a/index.js"]


def test_mentions_order_ignores_files_outside_the_ranking() -> None:
    order = mentions_order(["a.js", "b.js"], files=["tests/b_test.js"], definers=[{"t.test.js"}])
    assert order == ["a.js", "b.js"]


def test_rank_of_is_the_first_gold_position_or_none() -> None:
    assert rank_of(["a", "b", "c"], {"c", "b"}) == 2
    assert rank_of(["a"], {"z"}) is None
