from __future__ import annotations

import pytest

from diagnoser.errors import ToolError
from diagnoser.tools import find_symbol
from diagnoser.workspace import Workspace


def test_exact_match_with_signature_references_and_callers(workspace: Workspace) -> None:
    result = find_symbol(workspace, "checkout")
    assert result.how == "exact"
    assert [(h.path, h.qualified, h.start_line, h.end_line) for h in result.hits] == [
        ("alias.py", "checkout", 12, 13),
        ("src/app.py", "checkout", 12, 13),
    ]
    assert result.references == 2  # views.py imports it and calls it
    assert set(result.callers) == {("src/views.py", 1), ("src/views.py::view", 1)}
    text = result.render()
    assert text.splitlines()[0] == "checkout: 2 definition(s) (exact match), 2 references"
    assert "    def checkout(cart):" in text


def test_qualified_and_case_insensitive(workspace: Workspace) -> None:
    assert [h.qualified for h in find_symbol(workspace, "Cart.total").hits] == ["Cart.total"] * 2
    folded = find_symbol(workspace, "cart")
    assert folded.how == "case-insensitive" and folded.hits[0].qualified == "Cart"
    assert [h.kind for h in find_symbol(workspace, "total", kind="method").hits] == ["method"] * 2


def test_did_you_mean(workspace: Workspace) -> None:
    result = find_symbol(workspace, "chekout")
    assert not result.hits and result.suggestions[0] == "checkout"
    assert (
        result.render()
        == f"no definition named 'chekout'; did you mean {', '.join(result.suggestions)}?"
    )


def test_definitions_in_denied_files_are_hidden(workspace: Workspace) -> None:
    assert not find_symbol(workspace, "leaked_TOPSECRET_7f3a").hits


def test_empty_name(workspace: Workspace) -> None:
    with pytest.raises(ToolError, match="give a symbol name"):
        find_symbol(workspace, "  ")
