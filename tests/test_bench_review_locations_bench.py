"""bench/review_locations_bench.py: its data (reviews that name no identifier, gold that
exists) and its scoring."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "bench"))

from review_locations_bench import CASES, DEMO, TEXTS, _hit, _table

ROWS = [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines()]
IDENTIFIER = re.compile(r"\b\w+(?:_\w+)+\b|\b[a-z]{2,}[A-Z]\w*\b|\w+\.(?:py|js|kt|java)\b")


def test_every_review_names_no_identifier_and_has_an_english_twin() -> None:
    assert len(ROWS) >= 50 and len({r["id"] for r in ROWS}) == len(ROWS)
    assert len({r["app"] for r in ROWS}) >= 3  # the demo app and two real ones
    assert sum(r["lang"] != "en" for r in ROWS) == len(ROWS)
    for row in ROWS:
        for field in TEXTS:
            text = row[field]
            # a plain word a function is also named after ("reload", "save") is the user's
            assert not IDENTIFIER.search(text), (row["id"], field, IDENTIFIER.search(text))


def test_the_demo_apps_gold_functions_are_defined_where_said() -> None:
    for row in (r for r in ROWS if r["app"] == "demo"):
        for gold in row["gold"]:
            source = (DEMO / gold["path"]).read_text(encoding="utf-8")
            assert gold["function"].rsplit(".", 1)[-1] in source, (row["id"], gold)


def test_a_case_is_scored_by_file_then_function() -> None:
    case = {"gold": [{"path": "a.py", "function": "f"}, {"path": "b.py", "function": "g"}]}
    assert _hit(case, ["b.py", "c.py"], [("b.py", "h"), ("a.py", "f")]) == (True, True, True)
    assert _hit(case, ["c.py", "a.py"], [("a.py", "x")]) == (False, True, False)
    assert _hit(case, [], []) == (False, False, False)
    table = _table(
        ["demo"],
        {
            ("demo", "text", "ours"): [(True, True, False), (False, True, True)],
            ("demo", "text_en", "bm25"): [(False, False, False)],
        },
    )
    assert "demo       text       2    50 / 100 ·  50" in table
    assert "–" in table  # BM25 names no function
