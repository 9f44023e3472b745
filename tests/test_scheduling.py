"""How pytest-xdist shares the tests (`tests/scheduling.py`, the hooks in
`tests/conftest.py`)."""

from __future__ import annotations

import os
from typing import Any

import pytest

from tests import conftest
from tests.scheduling import SERIAL, Scheduling

NO_CONFIG: Any = None
"""The hook reads no option."""


def test_auto_starts_one_worker_more_than_the_usable_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    assert conftest.pytest_xdist_auto_num_workers(NO_CONFIG) == 3
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "2")
    assert conftest.pytest_xdist_auto_num_workers(NO_CONFIG) is None  # xdist's own reads it


def test_the_hostile_suite_is_one_unit_and_every_other_test_its_own() -> None:
    split = Scheduling._split_scope
    hostile = f"{SERIAL[0]}test_connections.py::test_a"
    assert split(NO_CONFIG, hostile) == SERIAL[0]
    assert split(NO_CONFIG, "tests/api/test_jobs.py::test_b") == "tests/api/test_jobs.py::test_b"
