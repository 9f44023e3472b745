"""Shared helpers for the trace-parser tests: fixture texts and compact frame views."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from diagnoser.intake.report import Trace

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "traces"


def read_fixture(name: str) -> str:
    """The fixture's exact text (bytes decoded, line endings untouched)."""
    return (FIXTURES / name).read_bytes().decode("utf-8")


def where(trace: Trace) -> list[tuple[str | None, int | None, str | None]]:
    """(file, line, function) of each frame, innermost last."""
    return [(f.file, f.line, f.function) for f in trace.frames]


@pytest.fixture
def fixture_text() -> Callable[[str], str]:
    return read_fixture
