"""bench/localize_bench.py: the per-language and per-repository tables and the JSON rows."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1] / "bench"))

import localize_bench


def row(case: str, language: str, root: str, **ranked: list[str]) -> dict[str, Any]:
    return {
        "id": case, "language": language, "root": root, "gold": {"gold.c"}, "state": "complete",
        "suspects": ranked.get("ours", []), "bm25_all": ranked.get("bm25", []),
        "mentions": ranked.get("mentions", []),
    }  # fmt: skip


ROWS = [
    row("c1", "c", "zlib-1.3", ours=["gold.c"], bm25=["a.c", "gold.c"], mentions=["gold.c"]),
    row("c2", "c", "zlib-1.3", ours=["a.c"] * 5 + ["gold.c"], bm25=["gold.c"], mentions=[]),
    row("g1", "go", "pflag-1.0", ours=["b.go", "a.go", "gold.c"], bm25=[], mentions=["gold.c"]),
]


def test_language_table_scores_each_language_and_all() -> None:
    lines = localize_bench.language_report(ROWS).splitlines()
    assert lines[2] == "| c | 2 | 50/50/50 | 50/100 | 50/50 | 0 |"
    assert lines[3] == "| go | 1 | 0/100/100 | 0/0 | 100/100 | 0 |"
    assert lines[4] == "| all | 3 | 33/67/67 | 33/67 | 67/67 | 0 |"


def test_repository_table_flags_a_repository_with_nothing_indexed() -> None:
    text = localize_bench.repository_report(ROWS, {"zlib-1.3": (40, 30), "pflag-1.0": (0, 0)})
    assert "| zlib-1.3 | c | 2 | 40 | 30 |" in text
    assert "| pflag-1.0 | go | 1 | 0 **NOTHING INDEXED** | 0 |" in text
    assert text.endswith("repositories with 0 files indexed: pflag-1.0 (of 2)")


def test_json_rows_give_each_ranker_s_first_gold_rank() -> None:
    first, second, third = localize_bench.json_rows(ROWS)
    assert first["ranks"] == {"ours": 1, "bm25": 2, "mentions": 1}
    assert second["ranks"] == {"ours": 6, "bm25": 1, "mentions": None}
    assert (third["id"], third["language"], third["gold_files"]) == ("g1", "go", ["gold.c"])
