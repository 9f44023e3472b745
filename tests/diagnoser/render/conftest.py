"""Hand-written Findings from `tests/fixtures/findings/`, loaded by name."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from diagnoser.finding import Finding
from tests.conftest import FIXTURES

FINDINGS = FIXTURES / "findings"
FINDING_NAMES = sorted(path.stem for path in FINDINGS.glob("*.json"))
"""python_crash, js_bug_partial, feature_request, hostile_markdown."""

LoadFinding = Callable[[str], Finding]


def read_finding(name: str) -> Finding:
    return Finding.model_validate_json((FINDINGS / f"{name}.json").read_text(encoding="utf-8"))


@pytest.fixture
def load_finding() -> LoadFinding:
    return read_finding
