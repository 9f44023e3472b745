from __future__ import annotations

import marshal
import sys

import numpy as np

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
