from __future__ import annotations

from pathlib import Path

import pytest

from diagnoser.errors import ToolError
from diagnoser.settings import Settings
from diagnoser.tools import read_range
from diagnoser.workspace import Workspace


def test_numbered_lines_under_a_header_naming_the_definitions(workspace: Workspace) -> None:
    result = read_range(workspace, "src/app.py", 8, 9)
    assert result.render() == (
        "src/app.py lines 8-9 of 13 — in class Cart (lines 4-9); method Cart.total (lines 8-9)\n"
        "8:     def total(self):\n"
        "9:         return sum(item.price for item in self.items)"
    )


def test_a_range_outside_definitions_names_those_it_reaches(workspace: Workspace) -> None:
    assert read_range(workspace, "src/app.py", 1, 4).enclosing == ("class Cart (lines 4-9)",)


@pytest.mark.parametrize(
    ("start", "end", "lines", "note"),
    [
        (10, 500, (10, 13), "the file ends at line 13"),
        (50, 60, (1, 13), "the file has 13 lines; showing its last lines"),
        (9, 8, (8, 9), "start and end were swapped"),
        (-5, 2, (1, 2), None),
    ],
)
def test_out_of_range_is_clamped_with_a_note(
    workspace: Workspace, start: int, end: int, lines: tuple[int, int], note: str | None
) -> None:
    result = read_range(workspace, "src/app.py", start, end)
    assert (result.start, result.end) == lines
    assert result.notes == ((note,) if note else ())


def test_window_cap_and_how_to_continue(repo: Path, tmp_path: Path) -> None:
    (repo / "long.py").write_text("".join(f"line_{i} = {i}\n" for i in range(1, 1_001)))
    workspace = Workspace(repo, Settings(read_window_lines=150), home=tmp_path / "h")
    result = read_range(workspace, "long.py", 100, 900)
    assert (result.start, result.end, len(result.lines)) == (100, 249, 150)
    assert result.render().endswith("(showing 150 lines, the window cap; continue with start=250)")
    assert read_range(workspace, "long.py", 5).end == 154  # no end: one window


def test_empty_file_and_bad_numbers(repo: Path, tmp_path: Path) -> None:
    (repo / "empty.py").write_text("")
    workspace = Workspace(repo, home=tmp_path / "h")
    result = read_range(workspace, "empty.py", 1, 10)
    assert result.lines == () and result.total_lines == 0
    with pytest.raises(ToolError, match="must be line numbers"):
        read_range(workspace, "empty.py", "one", 2)  # type: ignore[arg-type]


def test_invalid_utf8_is_shown_with_replacement_characters(repo: Path, tmp_path: Path) -> None:
    (repo / "latin1.py").write_bytes("name = 'café'\n".encode("latin-1"))
    result = read_range(Workspace(repo, home=tmp_path / "h"), "latin1.py")
    assert result.lines == ("name = 'caf\ufffd'",)
