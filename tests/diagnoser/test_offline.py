"""The offline investigator's own judgement: risk from how widely the fault is used."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnoser.candidates import Candidate, Source
from diagnoser.offline import _risk
from diagnoser.workspace import Workspace
from tests.conftest import MakeRepo


@pytest.mark.parametrize(("users", "level"), [(0, "low"), (2, "low"), (3, "medium"), (11, "high")])
def test_risk_follows_how_many_other_files_use_the_fault(
    make_repo: MakeRepo, home: Path, users: int, level: str
) -> None:
    files: dict[str, str | bytes] = {"core.py": "def shared_total(items):\n    return sum(items)\n"}
    files |= {
        f"user{n}.py": "from core import shared_total\nshared_total([])\n" for n in range(users)
    }
    workspace = Workspace(make_repo(files), home=home)
    fault = Candidate("core.py", 2, 1, 2, "shared_total", Source.FRAME)
    risk, rationale = _risk(fault, workspace)
    assert risk == f"Risk: {level}" and f"used in {users} other file(s)" in rationale
