from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pytest

from repomap import graph as graph_module
from repomap import rank as rank_module
from repomap.constants import (
    FOCUS_IDENT_WEIGHT,
    PAGERANK_DAMPING,
    PAGERANK_MAX_ITERATIONS,
    PAGERANK_TOLERANCE,
    REVERSE_EDGE_WEIGHT,
)
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


TANGLED = {  # self-uses, a name many files define, a copy of code, a file nobody uses
    "lib/core.py": (
        "def helper():\n    return other_thing()\n\n"
        "def shared_name():\n    return helper()\n\ndef _private_bit():\n    return 1\n"
    ),
    "lib/more.py": (
        "def shared_name():\n    return helper()\n\n"
        "def other_thing():\n    return shared_name() + _private_bit()\n\n"
        "def everywhere():\n    return 0\n"
    ),
    "lib/extra.py": (
        "def shared_name():\n    return other_thing() + everywhere()\n\n"
        "def everywhere():\n    return shared_name()\n"
    ),
    "app/main.py": "def everywhere():\n    return helper() + shared_name() + everywhere()\n",
    "app/lonely.py": "def lonely():\n    return 1\n",
}
C_SOURCES = {
    "src/parse.h": "int parse_value(int x) { return x; }\n",
    "single_include/json.h": "int parse_value(int x) { return x; }\nint main() { return 0; }\n",
    "app/use.c": "int use() { return parse_value(1) + main(); }\n",
}


def tangled() -> dict[str, FileTags]:
    found = {path: extract_tags(text.encode(), "python") for path, text in TANGLED.items()}
    return found | {path: extract_tags(text.encode(), "c") for path, text in C_SOURCES.items()}


Edge = tuple[int, int, str, float]


def every_edge(tags: Mapping[str, FileTags], focused: frozenset[str]) -> list[Edge]:
    """The graph's edges one by one, as its docstring defines them: a use of a name
    points at each other file defining it, and back at REVERSE_EDGE_WEIGHT."""
    paths = sorted(tags)
    definers: dict[str, set[int]] = {}
    for number, path in enumerate(paths):
        for definition in tags[path].definitions:
            definers.setdefault(definition.name, set()).add(number)
    idents = {name: number for number, name in enumerate(definers)}
    counts = np.array([len(definers[name]) for name in idents])
    quality = graph_module._ident_quality(idents, counts, used=np.arange(len(idents)))
    file_weight = graph_module._copy_weights(tuple(paths))
    edges: list[Edge] = []
    for user, path in enumerate(paths):
        for name, lines in tags[path].references.counts():
            if name not in definers or len(definers[name]) > graph_module.MAX_DEFINERS:
                continue
            weight = quality[idents[name]] * np.sqrt(lines)
            weight *= FOCUS_IDENT_WEIGHT if name in focused else 1.0
            for definer in sorted(definers[name] - {user}):
                edges.append((user, definer, name, weight * file_weight[definer]))
                edges.append(
                    (definer, user, name, weight * REVERSE_EDGE_WEIGHT * file_weight[user])
                )
    return edges


def walk_every_edge(
    tags: Mapping[str, FileTags], focus: Focus
) -> tuple[np.ndarray, dict[tuple[int, str], float]]:
    """PageRank edge by edge, and the rank flowing into each (file, name)."""
    graph = build_graph(tags)
    edges = every_edge(tags, focus.idents)
    out = np.zeros(graph.size)
    for source, _, _, weight in edges:
        out[source] += weight
    focused = np.array(sorted(graph.idents[i] for i in focus.idents if i in graph.idents))
    restart = rank_module._restart(graph, focus, focused)
    scores = restart.copy()
    for _ in range(PAGERANK_MAX_ITERATIONS):
        spread = np.zeros(graph.size)
        for source, target, _, weight in edges:
            spread[target] += scores[source] * weight / out[source]
        new = PAGERANK_DAMPING * (spread + scores[out == 0].sum() * restart)
        new += (1 - PAGERANK_DAMPING) * restart
        done = np.abs(new - scores).sum() < PAGERANK_TOLERANCE
        scores = new
        if done:
            break
    flow: dict[tuple[int, str], float] = {}
    for source, target, name, weight in edges:
        flow[target, name] = flow.get((target, name), 0.0) + scores[source] * weight / out[source]
    return scores, flow


@pytest.mark.parametrize(
    "focus",
    [
        Focus(),
        Focus(idents=frozenset({"shared_name"})),
        Focus(files=frozenset({"lib/more.py"}), idents=frozenset({"parse_value", "helper"})),
    ],
    ids=["no focus", "a name", "a file and names"],
)
@pytest.mark.parametrize("max_definers", [100, 2], ids=["every name", "names of <= 2 files"])
def test_the_walk_over_uses_and_links_is_the_walk_over_every_edge(
    focus: Focus, max_definers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ranking never makes the edges; it must rank as if it walked each of them."""
    monkeypatch.setattr(graph_module, "MAX_DEFINERS", max_definers)
    found = tangled()
    scores, flow = walk_every_edge(found, focus)
    graph = build_graph(found)
    ranking = rank(graph, found, focus)
    by_path = dict(ranking.files)
    assert np.allclose([by_path[path] for path in graph.paths], scores, rtol=1e-12, atol=0)
    number = {path: i for i, path in enumerate(graph.paths)}
    for ranked in ranking.definitions:
        file, name = number[ranked.path], ranked.definition.name
        share = 1.0 if ranked.path in focus.files else rank_module.UNREFERENCED_SHARE
        expected = flow.get((file, name), 0.0) + scores[file] * share
        expected *= FOCUS_IDENT_WEIGHT if name in focus.idents else 1.0
        assert ranked.score == pytest.approx(expected, rel=1e-12, abs=0), (ranked.path, name)
    assert len(ranking.definitions) == sum(len(t.definitions) for t in found.values())
    assert graph.edges == len(every_edge(found, frozenset()))


def test_neighbours_are_the_ends_of_every_edge_of_the_given_files() -> None:
    found = tangled()
    graph = build_graph(found)
    edges = every_edge(found, frozenset())
    for files in [[i] for i in range(graph.size)] + [[0, 1], [1, 2, 3], list(range(graph.size))]:
        expected = {t for s, t, _, _ in edges if s in files} | {
            s for s, t, _, _ in edges if t in files
        }
        assert graph.neighbours(np.array(files)) == expected, [graph.paths[i] for i in files]
