from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pytest

from repomap import rank as rank_module
from repomap.constants import REVERSE_EDGE_WEIGHT
from repomap.focus import Focus
from repomap.graph import build_graph
from repomap.rank import rank
from repomap.tags import FileTags, extract_tags

SOURCES = {
    "app/checkout.py": (
        "from app.cart import cart_total\n\ndef checkout(cart):\n    return cart_total(cart)\n"
    ),
    "app/cart.py": (
        "from app.money import round_money\n\n"
        "def cart_total(cart):\n    return round_money(sum(cart))\n"
    ),
    "app/money.py": "def round_money(value):\n    return round(value, 2)\n",
    "report/render_pdf.py": (
        "from report.layout import page_layout\n\n"
        "def render_pdf(doc):\n    return page_layout(doc)\n"
    ),
    "report/layout.py": "def page_layout(doc):\n    return doc\n\ndef margins():\n    return 1\n",
    "report/fonts.py": (
        "from report.layout import page_layout\n\ndef load_fonts():\n    return page_layout(None)\n"
    ),
}


def tags() -> Mapping[str, FileTags]:
    return {path: extract_tags(source.encode(), "python") for path, source in SOURCES.items()}


def file_order(focus: Focus) -> list[str]:
    return [path for path, _ in rank(build_graph(tags()), tags(), focus).files]


def test_without_focus_used_files_rank_above_files_nobody_uses() -> None:
    order = file_order(Focus())
    used = {"app/cart.py", "app/money.py", "report/layout.py"}
    assert set(order[:3]) == used


def test_callers_of_a_focused_file_are_its_neighbours_too() -> None:
    order = file_order(Focus(files=frozenset({"report/layout.py"})))
    assert set(order[:3]) == {"report/layout.py", "report/fonts.py", "report/render_pdf.py"}


def test_focused_files_neighbours_rank_above_unrelated_files() -> None:
    order = file_order(Focus(files=frozenset({"app/checkout.py"})))
    unrelated = {"report/render_pdf.py", "report/layout.py", "report/fonts.py"}
    assert set(order[:3]) == {"app/checkout.py", "app/cart.py", "app/money.py"}
    assert max(order.index(p) for p in ("app/cart.py", "app/money.py")) < min(
        order.index(p) for p in unrelated
    )


def test_focused_identifier_lifts_its_definer() -> None:
    order = file_order(Focus(idents=frozenset({"round_money"})))
    assert order[0] == "app/money.py"


def test_focused_line_puts_its_enclosing_definition_first() -> None:
    focus = Focus(files=frozenset({"report/layout.py"}), lines={"report/layout.py": frozenset({5})})
    best = rank(build_graph(tags()), tags(), focus).definitions[0]
    assert (best.path, best.definition.name) == ("report/layout.py", "margins")


def test_definitions_follow_the_references_into_them() -> None:
    ranking = rank(build_graph(tags()), tags(), Focus(files=frozenset({"app/checkout.py"})))
    names = [r.definition.name for r in ranking.definitions]
    assert names.index("cart_total") < names.index("margins")
    assert names.index("cart_total") < names.index("page_layout")


def test_ranking_is_deterministic_and_limit_cuts() -> None:
    graph = build_graph(tags())
    first = rank(graph, tags(), Focus(idents=frozenset({"page_layout"})))
    again = rank(build_graph(tags()), tags(), Focus(idents=frozenset({"page_layout"})))
    assert first == again
    top_two = rank(graph, tags(), Focus(idents=frozenset({"page_layout"})), limit=2).definitions
    assert top_two == first.definitions[:2]
    assert len(first.definitions) > 2


def test_empty_repository_ranks_nothing() -> None:
    ranking = rank(build_graph({}), {})
    assert ranking.files == () and ranking.definitions == ()


def test_limit_zero_ranks_files_only() -> None:
    ranking = rank(build_graph(tags()), tags(), limit=0)
    assert ranking.definitions == () and len(ranking.files) == len(SOURCES)


def test_a_single_header_copy_ranks_below_the_files_it_was_made_from() -> None:
    sources = {
        "src/parse.h": "int parse_value(int x) { return x; }\n",
        "src/dump.h": "int dump_value(int x) { return x; }\n",
        "single_include/json.h": (
            "int parse_value(int x) { return x; }\nint dump_value(int x) { return x; }\n"
        ),
        "app/main.c": "int main() { parse_value(1); return dump_value(2); }\n",
    }
    tags = {path: extract_tags(text.encode(), "c") for path, text in sources.items()}
    for focus in (Focus(), Focus(idents=frozenset({"parse_value"}))):
        order = [path for path, _ in rank(build_graph(tags), tags, focus).files]
        assert order.index("single_include/json.h") > order.index("src/parse.h"), focus
    order = [path for path, _ in rank(build_graph(tags), tags).files]
    assert order[-1] == "single_include/json.h"


def test_neighbours_are_the_files_using_or_used_by_the_given_ones() -> None:
    graph = build_graph(tags())
    number = {path: i for i, path in enumerate(graph.paths)}
    found = graph.neighbours(np.array([number["app/cart.py"]]))
    assert {graph.paths[i] for i in found} == {"app/checkout.py", "app/money.py"}


def test_edges_worked_on_in_chunks_rank_exactly_as_in_one(monkeypatch: pytest.MonkeyPatch) -> None:
    graph, focus = build_graph(tags()), Focus(idents=frozenset({"page_layout"}))
    whole = rank(graph, tags(), focus)
    monkeypatch.setattr(rank_module, "EDGE_CHUNK", 1)
    assert rank(graph, tags(), focus) == whole  # the same floats, not merely the same order


def test_each_use_points_back_weaker_into_the_file_that_uses_it() -> None:
    """A use is two edges, the second its reverse at REVERSE_EDGE_WEIGHT; each weighs
    its use × its target file's weight (a copy of code weighs less)."""
    graph = build_graph(tags())
    assert len(graph.edge_src) == 2 * graph.uses and graph.uses > 0
    forward, reverse = (graph.weights(part) for part in graph.chunks(len(graph.edge_src)))
    into_use = graph.file_weight[graph.edge_src[: graph.uses]]
    into_definer = graph.file_weight[graph.edge_src[graph.uses :]]
    assert np.array_equal(forward, graph.use_weight * into_definer)
    assert np.array_equal(reverse, graph.use_weight * REVERSE_EDGE_WEIGHT * into_use)
    assert all(p.stop - p.start <= 2 for p in graph.chunks(2))
    assert sum(p.stop - p.start for p in graph.chunks(2)) == len(graph.edge_src)
