"""`bounds`: a stored value fits its column, says it was cut, and keeps values apart."""

from __future__ import annotations

from api.bounds import CUT, REFUSED_PREFIX_BYTES, bound, bound_headers, refused_prefix


def test_a_short_value_is_kept_as_is_without_nuls() -> None:
    assert bound("application/json", 128) == "application/json"
    assert bound("a\x00b", 128) == "ab"


def test_a_long_value_is_cut_to_the_limit_with_a_marker_and_hash() -> None:
    cut = bound("x" * 1000, 128)
    assert len(cut) == 128 and cut.startswith("x" * 100) and CUT in cut
    assert bound("x" * 1000, 128) != bound("x" * 999 + "y", 128)
    assert len(bound("x" * 1000, 5)) == 5


def test_header_names_and_values_are_bounded() -> None:
    headers = bound_headers({"request-id": "r" * 10_000, "k" * 1000: "v"})
    assert all(len(k) <= 256 and len(v) <= 256 for k, v in headers.items())


def test_a_refused_body_keeps_its_start_while_the_budget_allows() -> None:
    body = b"b" * (3 * REFUSED_PREFIX_BYTES)
    assert refused_prefix(body, used=0, budget=REFUSED_PREFIX_BYTES) == body[:REFUSED_PREFIX_BYTES]
    assert refused_prefix(body, used=1, budget=REFUSED_PREFIX_BYTES) == b""
    assert refused_prefix(b"tiny", used=0, budget=4) == b"tiny"
