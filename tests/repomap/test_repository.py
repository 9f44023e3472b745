"""The whole map of a small fixture repo, checked against golden files.

Regenerate after an intended change: `UPDATE_GOLDEN=1 pytest tests/repomap/test_repository.py`,
then read the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from repomap.repository import Repository
from tests.conftest import FIXTURES, GOLDEN_REPO

CASES = {
    "golden_repo.map": {"tokens": 2048, "focus": []},
    "golden_repo.focus_api.map": {"tokens": 80, "focus": ["notes/api.py"]},
    "golden_repo.focus_js.map": {"tokens": 60, "focus": ["request"]},
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_map_matches_golden_file(name: str, home: Path) -> None:
    case = CASES[name]
    text = Repository.open(GOLDEN_REPO, home=home).map(
        tokens=int(case["tokens"]),  # type: ignore[call-overload]
        focus=list(case["focus"]),  # type: ignore[call-overload]
    )
    golden = FIXTURES / name
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text()


def test_warm_open_reuses_everything(home: Path) -> None:
    Repository.open(GOLDEN_REPO, home=home)
    warm = Repository.open(GOLDEN_REPO, home=home)
    assert (warm.stats.parsed, warm.stats.reused) == (0, warm.stats.files)
    assert warm.stats.files == 7
