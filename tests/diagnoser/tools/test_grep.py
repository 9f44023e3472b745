from __future__ import annotations

import time
from pathlib import Path

import pytest

from diagnoser.errors import ToolError
from diagnoser.settings import Settings
from diagnoser.tools import grep
from diagnoser.workspace import Workspace

HANG_GUARD_SECONDS = 30
"""Not a speed target (those live in bench/): a bound so a regression fails instead of hanging."""


def test_matches_carry_path_line_text_and_enclosing_symbol(workspace: Workspace) -> None:
    result = grep(workspace, r"return cart\.total\(\)|self\.items = \[\]")
    assert [(m.path, m.line, m.text.strip(), m.symbol) for m in result.matches] == [
        ("alias.py", 6, "self.items = []", "Cart.__init__"),
        ("alias.py", 13, "return cart.total()", "checkout"),
        ("src/app.py", 6, "self.items = []", "Cart.__init__"),
        ("src/app.py", 13, "return cart.total()", "checkout"),
    ]
    assert result.render().splitlines()[:3] == [
        "alias.py:",
        " 6:         self.items = []  [Cart.__init__]",
        "13:     return cart.total()  [checkout]",
    ]


def test_literal_case_and_glob(workspace: Workspace) -> None:
    assert grep(workspace, "cart.total()", fixed=True).total == 2  # `.` and `()` literal
    assert grep(workspace, "CART", case_sensitive=True).total == 0
    assert grep(workspace, "CART").total > 0
    only_src = grep(workspace, "checkout", path_glob="src/*.py")
    assert {m.path for m in only_src.matches} == {"src/app.py", "src/views.py"}
    by_name = grep(workspace, "checkout", path_glob="views.py")
    assert {m.path for m in by_name.matches} == {"src/views.py"}


def test_context_lines(workspace: Workspace) -> None:
    match = grep(workspace, "def total", path_glob="src/*", context=1).matches[0]
    assert match.before == ("",) and match.after == (
        "        return sum(item.price for item in self.items)",
    )
    assert "8: " in grep(workspace, "def total", path_glob="src/*", context=1).render()


def test_result_cap_says_what_was_cut(repo: Path, tmp_path: Path) -> None:
    (repo / "many.py").write_text("".join(f"value_{i} = {i}\n" for i in range(300)))
    workspace = Workspace(repo, Settings(), home=tmp_path / "h")
    result = grep(workspace, r"^value_\d+", max_results=20)
    assert len(result.matches) == 20 and result.total == 300
    assert result.render().endswith(
        "(showing 20 of 300 matches in 1 files — narrow the pattern or add a path_glob)"
    )
    capped = grep(workspace, r"^value_\d+", max_results=10_000)
    assert len(capped.matches) == Settings().grep_max_results


def test_character_cap(repo: Path, tmp_path: Path) -> None:
    (repo / "wide.py").write_text("".join(f"x{i} = '{'y' * 200}'\n" for i in range(100)))
    workspace = Workspace(repo, Settings(grep_max_chars=1_000), home=tmp_path / "h")
    result = grep(workspace, "yyyy", max_results=100)
    assert 3 <= len(result.matches) < 10 and result.cut_by_chars
    assert "showing" in result.render()


def test_long_lines_are_clipped(repo: Path, tmp_path: Path) -> None:
    (repo / "long.py").write_text("x = '" + "z" * 5_000 + "'\n")
    result = grep(Workspace(repo, home=tmp_path / "h"), "zzz")
    assert len(result.matches[0].text) == 240 and result.matches[0].text.endswith("…")


def test_no_match_and_bad_patterns_are_messages(workspace: Workspace) -> None:
    assert (
        grep(workspace, "nothing_like_this")
        .render()
        .startswith("no matches for 'nothing_like_this'")
    )
    for bad in (r"(a)\1", r"(?<=a)b", "(unclosed"):
        with pytest.raises(ToolError, match="RE2 syntax"):
            grep(workspace, bad)
    with pytest.raises(ToolError, match="empty pattern"):
        grep(workspace, "")


@pytest.mark.parametrize(
    "pattern", ["(a+)+$", "(a|aa)+b", "(.*a){20}", "^(([a-z])+.)+[A-Z]([a-z])+$"]
)
def test_catastrophic_patterns_over_10_mb_finish(repo: Path, tmp_path: Path, pattern: str) -> None:
    (repo / "huge.txt").write_text(("a" * 99 + "\n") * 100_000 + "a" * 1_000_000)  # 11 MB
    workspace = Workspace(repo, Settings(max_file_bytes=20_000_000), home=tmp_path / "h")
    started = time.monotonic()
    result = grep(workspace, pattern, path_glob="huge.txt")
    assert time.monotonic() - started < HANG_GUARD_SECONDS
    assert result.files_scanned == 1 and not result.timed_out


def test_time_cap_stops_the_scan_and_says_so(repo: Path, tmp_path: Path) -> None:
    workspace = Workspace(repo, Settings(grep_time_seconds=1e-9), home=tmp_path / "h")
    result = grep(workspace, "cart")
    assert result.timed_out
    assert "time cap" in result.render()
