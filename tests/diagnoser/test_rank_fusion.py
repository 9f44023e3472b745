"""Reciprocal rank fusion of file orders (`diagnoser.rank_fusion`)."""

from __future__ import annotations

import pytest

from diagnoser import rank_fusion
from diagnoser.rank_fusion import fused_order


def test_a_file_both_orders_hold_goes_first_then_ties_keep_the_first_order() -> None:
    # a: 1/62 + 1/61; b: 1/61; d: 1/62; c: 1/63 — b and d tie with nothing, c is last
    assert fused_order(["b", "a", "c"], ["a", "d"]) == ["a", "b", "d", "c"]
    assert fused_order(["x", "y"], ["y", "x"]) == ["x", "y"]  # a tie: the first order's
    assert fused_order([], ["z"]) == ["z"]
    assert fused_order() == []


def test_the_constant_sets_how_much_the_top_of_each_order_counts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    orders = (["a", "b", "c", "d", "e", "f"], ["g", "f"])
    assert fused_order(*orders)[0] == "f"  # K = 60: held by both beats first in one
    monkeypatch.setattr(rank_fusion, "RRF_K", 0)
    assert fused_order(*orders)[:2] == ["a", "g"]  # K = 0: a first place is worth 1
