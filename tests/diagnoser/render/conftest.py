"""Hand-written Findings from `tests/fixtures/findings/`, loaded by name."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from diagnoser.finding import Finding, Signal, Suspect
from tests.conftest import FIXTURES

FINDINGS = FIXTURES / "findings"
FINDING_NAMES = sorted(path.stem for path in FINDINGS.glob("*.json"))
"""python_crash, js_bug_partial, feature_request, hostile_markdown."""

LoadFinding = Callable[[str], Finding]

SUSPECTS = [
    Suspect(path="src/shop/cart.py", symbol="Cart.total", line=14, score=1.0,
            source=Signal.FRAME, reason="where it failed: the innermost in-app frame"),
    Suspect(path="src/shop/a|b.py", symbol=None, line=3, score=0.4567,
            source=Signal.WORDS, reason="shares the report's words: `x | y`"),
]  # fmt: skip
"""A frame suspect, and a hostile one (a `|` in its path and in a code span of its reason)."""


def with_suspects(finding: Finding) -> Finding:
    return finding.model_copy(update={"suspects": SUSPECTS})


def read_finding(name: str) -> Finding:
    return Finding.model_validate_json((FINDINGS / f"{name}.json").read_text(encoding="utf-8"))


@pytest.fixture
def load_finding() -> LoadFinding:
    return read_finding
