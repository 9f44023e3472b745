"""bench/casesets.py: case files given as files, folders or globs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "bench"))

import casesets


def write(path: Path, *ids: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"id": i, "language": "go"}) for i in ids]
    path.write_text("\n".join(lines) + "\n\n", encoding="utf-8")
    return path


def test_files_folders_and_globs_are_read_in_order_each_file_once(tmp_path: Path) -> None:
    first = write(tmp_path / "a.jsonl", "a1", "a2")
    write(tmp_path / "multi" / "rust.jsonl", "r1")
    write(tmp_path / "multi" / "c.jsonl", "c1")
    (tmp_path / "multi" / "notes.md").write_text("not cases", encoding="utf-8")
    specs: list[str | Path] = [first, tmp_path / "multi", str(tmp_path / "*.jsonl")]
    assert [c["id"] for c in casesets.load(specs)] == ["a1", "a2", "c1", "r1"]


def test_an_id_in_two_files_is_refused(tmp_path: Path) -> None:
    write(tmp_path / "x.jsonl", "same")
    write(tmp_path / "y.jsonl", "same")
    with pytest.raises(SystemExit, match="same"):
        casesets.load([tmp_path])


def test_a_spec_that_matches_nothing_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="no cases"):
        casesets.load([tmp_path / "missing-*.jsonl"])


def test_a_line_that_is_not_json_names_its_file_and_line() -> None:
    with pytest.raises(SystemExit, match=r"f\.jsonl:2"):
        casesets.parse('{"id": "ok"}\n{broken\n', "f.jsonl")


def test_a_case_without_language_is_python() -> None:
    assert casesets.language({"id": "x"}) == "python"
    assert casesets.language({"id": "x", "language": "rust"}) == "rust"
