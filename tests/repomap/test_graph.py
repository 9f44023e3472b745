from __future__ import annotations

import marshal
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from repomap import graph as graph_module
from repomap.graph import ReferenceGraph, build_graph
from repomap.tags import extract_tags

SOURCES = {
    "app/cart.py": "from app.money import round_money\ndef total(c):\n    return round_money(c)\n",
    "app/money.py": "def round_money(value):\n    return round(value, 2)\n",
}


def test_a_graph_read_back_from_its_payload_is_the_same_graph_with_one_string_per_path() -> None:
    # Paths made at run time, as a cache written by other code may hold them: not interned.
    tags = {"".join(list(path)): extract_tags(s.encode(), "python") for path, s in SOURCES.items()}
    built = build_graph(tags)
    payload = built.to_payload()
    saved = marshal.dumps(payload)  # written with its paths not interned
    canonical = [sys.intern(path) for path in built.paths]  # what the tags' own would be
    read = ReferenceGraph.from_payload(marshal.loads(saved))
    assert read is not None
    again = read.to_payload()
    assert again.keys() == payload.keys()
    assert all(
        bytes(again[key]) == bytes(payload[key])
        for key in payload
        if key not in ("paths", "idents", "layout")
    )
    assert read.paths == built.paths and read.idents == built.idents
    assert all(path is first for path, first in zip(read.paths, canonical, strict=True))
    assert np.array_equal(read.use_self, built.use_self)


@given(
    st.lists(st.integers(0, 40), unique=True),
    st.lists(st.integers(-2, 45), max_size=30),
    st.booleans(),
)
def test_positions_finds_each_wanted_key_a_chunk_at_a_time(
    distinct: list[int], wanted: list[int], in_order: bool
) -> None:
    keys = np.array(sorted(distinct) if in_order else distinct, dtype=np.int64)
    expected = [distinct.index(w) if not in_order and w in distinct else -1 for w in wanted]
    if in_order:
        expected = [sorted(distinct).index(w) if w in distinct else -1 for w in wanted]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(graph_module, "POSITIONS_CHUNK", 4)
        found = graph_module._positions(keys, np.array(wanted, dtype=np.int64))
    assert found.dtype == np.int32 and found.tolist() == expected
