"""bench/classify_bench.py: the plain keyword baseline and the per-mix breakdown."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "bench"))

from classify_bench import keywords, mix_report

from diagnoser.intake.report import Kind


def test_the_keyword_baseline_calls_a_defect_by_its_words_in_any_listed_language() -> None:
    assert keywords({"text": "App CRASHES on start"}).kind is Kind.BUG
    assert keywords({"text": "Die App stürzt ständig ab"}).kind is Kind.BUG
    assert keywords({"text": "写真を開くとクラッシュする"}).kind is Kind.BUG
    assert keywords({"text": "Love it, five stars"}).kind is Kind.PRAISE


def test_reviews_are_broken_down_by_each_mix_tag() -> None:
    rows: list[dict[str, object]] = [
        {"text": "a", "label": "bug", "mix": ["sarcasm", "typos"]},
        {"text": "b", "label": "praise", "mix": ["sarcasm"]},
        {"text": "c", "label": "noise", "mix": ["plain"]},
    ]
    said = {"new": ["bug", "bug", "noise"], "keys": ["praise", "praise", "praise"]}
    lines = mix_report(rows, [0, 1, 2], said)
    sarcasm = next(line for line in lines if "sarcasm" in line)
    assert "n=  2" in sarcasm
    assert "new 1.00/0.50, 0.50" in sarcasm  # the bug found, one praise called a bug
    assert "keys 0.00/0.00, 0.50" in sarcasm
    assert any("plain" in line and "new 0.00/0.00, 1.00" in line for line in lines)
