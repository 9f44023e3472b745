"""bench/token_bench.py on one sample report: the scripted engineer goes through the real
Chat Completions client and the fake provider to a grounded Finding in each arm, and
the table reports what the fake counted."""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "bench"))

import token_bench

CASE = "issue_load_more_500.md"
ARMS = ["suspects/trim/map-1k", "suspects/keep-all/map-1k", "no-suspects/trim/map-1k"]


def test_one_sample_report_in_three_arms(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    results = token_bench.main(["--samples-only", "--only", CASE, "--arms", *ARMS,
                                "--home", str(tmp_path / "home"), "--json", str(out),
                                "--quiet"])  # fmt: skip
    by_arm = {r.arm: r for r in results}
    assert sorted(by_arm) == sorted(ARMS) and all(r.investigated for r in results)
    hinted, kept, blind = (by_arm[name] for name in ARMS)
    # With suspects: both suspects read in one turn, focus, the fault read with
    # conclude(), the report — four requests, five tool calls, the planted fault's file.
    assert (len(hinted.request_tokens), hinted.tool_calls) == (4, 5)
    assert hinted.fault == "backend/notes/store.py" and hinted.hit
    assert hinted.status == "grounded"
    # Trimming drops the unfocused suspect's read after the focus: fewer tokens.
    assert kept.request_tokens[0] == hinted.request_tokens[0]
    assert kept.input_tokens > hinted.input_tokens
    # Without suspects the instructions are shorter and the engineer greps instead.
    assert blind.request_tokens[0] < hinted.request_tokens[0]
    assert blind.tool_calls >= 3 and blind.fault is not None
    assert all(r.output_tokens > 0 for r in results)
    rows = json.loads(out.read_text())
    assert {row["arm"] for row in rows} == set(ARMS)
    assert rows[0]["input_tokens"] == sum(rows[0]["request_tokens"])
    table = token_bench.table(results, [a for a in token_bench.ARMS if a.name in ARMS])
    assert table.count("\n| ") == 3
    median = statistics.median(hinted.request_tokens)
    assert f"| suspects/trim/map-1k | 1 | {median:.0f} · " in table
    assert f" | {hinted.input_tokens} · {hinted.input_tokens} · {hinted.input_tokens} | " in table
