"""Loading the payload fixtures in `tests/fixtures/payloads/` and the reference samples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "payloads"
REFERENCE = Path(__file__).resolve().parents[5] / "shared" / "reference" / "webhooks"
"""The shared reference samples (../shared beside the repository, as in CI); tests using
them skip where it is absent."""


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def load_reference(name: str) -> Any:
    path = REFERENCE / name
    if not path.exists():
        pytest.skip(f"reference sample {name} not available")
    return json.loads(path.read_text(encoding="utf-8"))


def wrong_types(value: Any) -> Any:
    """`value` with every scalar swapped for one of another type (containers kept): the
    shape an adapter looks for, with nothing usable in it."""
    if isinstance(value, dict):
        return {key: wrong_types(item) for key, item in value.items()}
    if isinstance(value, list):
        return [wrong_types(item) for item in value]
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, str):
        return 0
    if isinstance(value, int | float):
        return [value]
    return value
