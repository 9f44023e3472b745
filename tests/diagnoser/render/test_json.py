from __future__ import annotations

import json

import pytest

from diagnoser.finding import Finding
from diagnoser.render import to_json
from tests.diagnoser.render.conftest import FINDING_NAMES, LoadFinding, with_suspects


@pytest.mark.parametrize("name", FINDING_NAMES)
def test_round_trip(name: str, load_finding: LoadFinding) -> None:
    finding = load_finding(name)
    assert Finding.model_validate_json(to_json(finding)) == finding


def test_is_the_finding_itself_with_files_in_relevance_order(load_finding: LoadFinding) -> None:
    finding = load_finding("python_crash")
    data = json.loads(to_json(finding))
    assert data == finding.model_dump(mode="json")
    assert [entry["path"] for entry in data["files"]] == [
        "src/shop/cart.py",
        "src/shop/api.py",
        "src/shop/views.py",
    ]
    assert data["files"][0]["role"] == "fault"
    assert to_json(finding).startswith('{\n  "classification": "crash"')


def test_suspects_are_in_the_json_and_round_trip(load_finding: LoadFinding) -> None:
    finding = with_suspects(load_finding("python_crash"))
    data = json.loads(to_json(finding))
    assert [(s["path"], s["score"], s["source"]) for s in data["suspects"]] == [
        ("src/shop/cart.py", 1.0, "frame"),
        ("src/shop/a|b.py", 0.4567, "words"),
    ]
    assert Finding.model_validate_json(to_json(finding)) == finding
