"""The map says when it indexes suspiciously few of the source files on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from repomap.build import build
from repomap.coverage import (
    FEW_FILES_RATIO,
    MIN_MISSING_FILES,
    check_coverage,
    count_source_files,
    coverage_warning,
)
from repomap.deny import DenyList
from repomap.files import walk_files
from tests.conftest import MakeRepo

SOURCE = "def f():\n    return 1\n"


def tree(count: int, folder: str = "src") -> dict[str, str | bytes]:
    return {f"{folder}/m{i}.py": SOURCE for i in range(count)}


def test_nothing_indexed_of_something_on_disk_warns_and_names_the_ignore_rules() -> None:
    warning = coverage_warning(0, 3, ignore_files=(".gitignore",))
    assert warning is not None
    assert warning.startswith("only 0 of 3 source files") and "`.gitignore`" in warning
    assert "deny-list" in warning and "size limits" in warning


@pytest.mark.parametrize(
    ("indexed", "on_disk", "warns"),
    [
        (0, 0, False),  # nothing to index: the map says so itself
        (5, 5, False),
        (1, 1 + MIN_MISSING_FILES - 1, False),  # a handful missing is no sign
        (2, 2 + MIN_MISSING_FILES, True),
        (int(1000 * FEW_FILES_RATIO), 1000, False),
        (int(1000 * FEW_FILES_RATIO) - 1, 1000, True),
    ],
)
def test_far_fewer_indexed_than_on_disk_warns(indexed: int, on_disk: int, warns: bool) -> None:
    assert (coverage_warning(indexed, on_disk) is not None) is warns


def test_the_plain_count_skips_default_ignored_and_hidden_folders_and_stops_early(
    make_repo: MakeRepo,
) -> None:
    root = make_repo({
        **tree(4), **tree(3, "gen"), "src/node_modules/x/index.js": "x",
        "src/.venv/lib/y.py": SOURCE, "src/README.md": "# r\n", "src/app.min.js": "x",
    })  # fmt: skip
    assert count_source_files(root, ["src", "gen"], stop_at=100) == (7, True)
    assert count_source_files(root, ["src", "gen"], stop_at=2) == (4, False)  # after a folder
    assert count_source_files(root, [], stop_at=2) == (0, True)


def test_the_walk_reports_what_rules_left_out(make_repo: MakeRepo) -> None:
    root = make_repo({
        **tree(3), **tree(2, "out"), "a.py": SOURCE, "b.py": SOURCE, "notes.txt": "x",
        "node_modules/x.js": "x", ".gitignore": "/out/\na.py\nnotes.txt\n",
    })  # fmt: skip
    walked = walk_files(root, mapped_only=True, deny=DenyList(()))
    assert (len(walked.files), walked.excluded, walked.pruned) == (4, 1, ["out"])
    assert check_coverage(root, 4, walked) is None


def test_a_root_gitignore_of_everything_is_named_in_the_maps_warnings(
    make_repo: MakeRepo, home: Path
) -> None:
    root = make_repo({**tree(30), ".gitignore": "*\n"})
    result = build(root, home=home)
    assert result.stats.files == 0
    [first, *_] = result.warnings
    assert first.path == "." and first.reason.startswith("only 0 of at least 30 source files")
    assert "`.gitignore`" in first.reason


def test_ignoring_every_folder_is_far_fewer(make_repo: MakeRepo, home: Path) -> None:
    root = make_repo({**tree(40), "main.py": SOURCE, ".gitignore": "/*/\n"})
    result = build(root, home=home)
    assert result.stats.files == 1
    assert result.warnings[0].reason.startswith("only 1 of at least 41 source files")


def test_a_healthy_repository_has_no_coverage_warning(make_repo: MakeRepo, home: Path) -> None:
    root = make_repo({**tree(30), "build/gen.py": SOURCE, ".gitignore": "*.log\nlocal/\n"})
    result = build(root, home=home)
    assert result.warnings == [] and result.stats.files == 30
