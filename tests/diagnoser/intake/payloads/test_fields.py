"""`Node`: numbers never crash `int()`; capped lists are cut before reading, and say so."""

from __future__ import annotations

import pytest

from diagnoser.intake.payloads._fields import Cap, Node, nodes_of, root
from diagnoser.intake.payloads.errors import IntakeError


def test_integer_reads_sane_digit_strings_and_never_converts_huge_ones() -> None:
    node = Node({"a": "42", "b": " 7 ", "c": "9" * 5_000, "d": "²", "e": 3, "f": True}, "t")
    assert [node.integer(k) for k in "abcdef"] == [42, 7, None, None, 3, None]
    assert Node({"n": "9999999999"}, "t").integer("n") is None  # over 2**31 - 1


def test_label_refuses_numbers_too_wide_to_be_an_id() -> None:
    node = Node({"version": 10**4_000, "id": 12345, "float": 1.5}, "t")
    assert node.label("version") is None
    assert node.label("id") == "12345"
    assert node.label("float") == "1.5"


def test_a_capped_list_keeps_its_end_and_notes_the_cut_with_original_indices() -> None:
    top = root({"frames": [{"n": i} for i in range(10)]}, "prov")
    kept = top.children("frames", Cap(3, "frames", "the innermost", from_end=True))
    assert [n.value["n"] for n in kept] == [7, 8, 9]
    assert [n.path for n in kept] == ["frames[7]", "frames[8]", "frames[9]"]
    assert top.cuts == ["prov: 10 frames in frames; kept the innermost 3"]
    assert kept[0].cuts is top.cuts  # one list of notes per payload


def test_a_capped_list_keeping_its_start_never_looks_at_the_rest() -> None:
    top = root({}, "prov")
    values: list[object] = [{"n": 0}, {"n": 1}, "not an object", 5]
    kept = nodes_of(values, top, "reviews", Cap(2, "reviews", "the first"))
    assert [n.value["n"] for n in kept] == [0, 1]
    assert top.cuts == ["prov: 4 reviews in reviews; kept the first 2"]
    with pytest.raises(IntakeError, match=r"expected an object at reviews\[2\]"):
        nodes_of(values, top, "reviews")


def test_a_list_within_its_cap_is_not_noted() -> None:
    top = root({"x": [{}, {}]}, "prov")
    assert len(top.children("x", Cap(2, "x", "the first"))) == 2
    assert top.cuts == []
