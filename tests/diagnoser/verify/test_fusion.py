"""The report's ranking and the reproducing run's, fused by reciprocal rank."""

from __future__ import annotations

from diagnoser.candidate import Candidate, Source
from diagnoser.verify.fusion import fuse


def _places(*where: str, source: Source = Source.MENTION) -> list[Candidate]:
    return [Candidate(w.split(":")[0], int(w.split(":")[1]), 1, 9, None, source) for w in where]


def test_a_file_both_rank_well_beats_one_only_the_run_ranks_first() -> None:
    report = _places("fields.py:10", "utils.py:3", "schema.py:40", "errors.py:1")
    run = _places("schema.py:88", "errors.py:5", "fields.py:12", source=Source.FRAME)
    fused = fuse(report, run)
    assert list(dict.fromkeys(c.path for c in fused)) == [
        "fields.py",
        "schema.py",
        "errors.py",
        "utils.py",
    ]
    assert [(c.path, c.line) for c in fused][:4] == [
        ("fields.py", 10),
        ("fields.py", 12),
        ("schema.py", 88),
        ("schema.py", 40),
    ]  # each file's places: the better list's first (the run ranked schema.py higher)


def test_ties_keep_the_reports_order_and_nothing_is_lost() -> None:
    report = _places("a.py:1", "b.py:1")
    run = _places("b.py:2", "a.py:2", "c.py:2")
    fused = fuse(report, run)
    assert [c.path for c in fused] == ["a.py", "a.py", "b.py", "b.py", "c.py"]
    assert fuse(report, []) == report and fuse([], run) == run


def test_a_place_only_words_found_follows_the_runs_frame_in_the_same_file() -> None:
    report = _places("calc.py:4", "other.py:1", source=Source.WORDS)
    run = _places("calc.py:9", source=Source.FRAME)
    fused = fuse(report, run)
    assert [(c.path, c.line, c.source) for c in fused] == [
        ("calc.py", 9, Source.FRAME), ("calc.py", 4, Source.WORDS), ("other.py", 1, Source.WORDS),
    ]  # fmt: skip
