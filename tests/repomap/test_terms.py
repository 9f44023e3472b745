from __future__ import annotations

from pathlib import Path

from repomap.build import build
from repomap.terms import TermIndex, file_terms, terms, words
from tests.conftest import MakeRepo


def test_words_split_identifiers_and_compounds_stay_whole() -> None:
    assert words("QuerySet.select_related() of 2 ids") == [
        "query", "set", "select", "related", "ids",
    ]  # fmt: skip
    assert terms("QuerySet.select_related()") == [
        "query", "set", "select", "related", "queryset", "select_related",
    ]  # fmt: skip
    assert terms("plain words only") == ["plain", "words", "only"]


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
    index = TermIndex.build(build(root, home=home).tags)
    scores = index.scores(terms("total_price is wrong when items are empty"))
    assert max(scores, key=scores.__getitem__) == "shop/pricing.py"
    scores = index.scores(terms("add_item raises"))
    assert sorted(scores, key=lambda p: -scores[p])[:2] == ["shop/cart.py", "shop/views.py"]


def test_kept_files_only_and_no_match_means_no_score(make_repo: MakeRepo, home: Path) -> None:
    root = make_repo(
        {"a.py": "def alpha():\n    pass\n", "tests/test_a.py": "def alpha():\n    pass\n"}
    )
    index = TermIndex.build(build(root, home=home).tags, keep=lambda p: not p.startswith("tests/"))
    assert len(index) == 1 and list(index.scores(["alpha"])) == ["a.py"]
    assert index.scores(["zebra"]) == {}
    assert index.idf("alpha") > 0 and index.idf("zebra") == 0
