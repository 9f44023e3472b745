from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from repomap.constants import BUDGET_TOLERANCE
from repomap.render import _contains, _enclosing, estimate_tokens
from repomap.repository import Repository
from repomap.tags import Definition
from tests.conftest import MakeRepo


@pytest.fixture
def big_repo(make_repo: MakeRepo, home: Path) -> Repository:
    files = {}
    for i in range(40):
        methods = "".join(
            f"    def method_{j}_of_{i}(self, value, other=None):\n"
            f"        return helper_{i}(value)\n"
            for j in range(6)
        )
        files[f"pkg/module_{i}.py"] = (
            f"def helper_{i}(x):\n    return x\n\n\nclass Service{i}:\n{methods}"
        )
    return Repository.open(make_repo(files), home=home)


@pytest.mark.parametrize("tokens", [128, 512, 1024, 2048])
def test_map_fills_the_budget_without_passing_it(big_repo: Repository, tokens: int) -> None:
    used = estimate_tokens(big_repo.map(tokens=tokens))
    assert (1 - BUDGET_TOLERANCE) * tokens <= used <= tokens


def test_lines_are_numbered_and_methods_nest_under_their_class(big_repo: Repository) -> None:
    text = big_repo.map(tokens=4096, focus=["pkg/module_3.py"])
    block = text.split("pkg/module_3.py:\n", 1)[1].split("pkg/", 1)[0]
    lines = block.splitlines()
    assert lines[0] == " 1: def helper_3(x):"
    assert lines[1] == " 5: class Service3:"
    assert lines[2] == " 6:   def method_0_of_3(self, value, other=None):"


def test_a_chosen_method_brings_its_class_line(make_repo: MakeRepo, home: Path) -> None:
    body = "".join(f"    def unused_{i}(self):\n        pass\n" for i in range(30))
    repo = Repository.open(
        make_repo(
            {
                "shop/cart.py": "class Cart:\n"
                + body
                + "    def total_price(self):\n        return 1\n",
                "shop/view.py": "def show(cart):\n    return cart.total_price()\n",
            }
        ),
        home=home,
    )
    text = repo.map(tokens=16, focus=["total_price"])
    assert text == "shop/cart.py:\n 1: class Cart:\n62:   def total_price(self):\n"
    assert "unused_" not in text


def test_same_input_same_map(big_repo: Repository) -> None:
    assert big_repo.map(tokens=700, focus=["helper_7"]) == big_repo.map(
        tokens=700, focus=["helper_7"]
    )


def test_warnings_section_lists_what_was_skipped(make_repo: MakeRepo, home: Path) -> None:
    repo = Repository.open(
        make_repo({"ok.py": "def f():\n    pass\n", "bad.py": b"\x00\x01"}), home=home
    )
    text = repo.map(tokens=200)
    assert text.startswith("ok.py:\n1: def f():\n")
    assert text.endswith("\nwarnings (1):\n- bad.py: binary content\n")


def test_repository_without_supported_files_says_so(make_repo: MakeRepo, home: Path) -> None:
    repo = Repository.open(make_repo({"README.md": "# hi\n", "data.csv": "a,b\n"}), home=home)
    text = repo.map(tokens=200)
    assert text.startswith("\nwarnings (1):\n- no supported source files found")


@st.composite
def _definitions(draw: st.DrawFn) -> list[Definition]:
    """Definitions with any lines: nested, overlapping, sharing a first line or a whole
    range, repeated."""
    found = []
    for n in range(draw(st.integers(0, 25))):
        start = draw(st.integers(1, 12))
        end = start + draw(st.integers(0, 6))
        line = draw(st.integers(start, end))
        found.append(Definition(f"d{n}", f"d{n}", "function", line, start, end, f"def d{n}():"))
    return found + draw(st.lists(st.sampled_from(found), max_size=3)) if found else found


@given(_definitions())
def test_the_one_sweep_finds_the_containers_that_comparing_with_each_finds(
    definitions: list[Definition],
) -> None:
    spans = [(d.line, d.start_line, d.end_line) for d in definitions]
    enclosing = _enclosing(spans)
    for inner, span in zip(definitions, spans, strict=True):
        expected = {d for d in definitions if _contains(d, inner)}
        assert {definitions[i] for i in enclosing[span]} == expected
