"""The executor identity (`diagnoser.executor`): stable per data directory, distinct
between two, settable, and validated when set."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest
from pydantic import ValidationError

from diagnoser import Settings
from diagnoser.executor import EXECUTOR_ID_PATTERN, default_executor_id, executor_id


def test_the_default_is_the_host_and_a_digest_of_the_data_directory(tmp_path: Path) -> None:
    one = default_executor_id(tmp_path / "a")
    assert one == default_executor_id(tmp_path / "a")  # stable across restarts
    assert one != default_executor_id(tmp_path / "b")  # two workers, two directories
    assert one.startswith(re.sub(r"[^A-Za-z0-9._-]+", "-", socket.gethostname())[:20])
    assert re.fullmatch(EXECUTOR_ID_PATTERN, one)


def test_a_configured_id_wins_and_a_bad_one_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert executor_id("worker-7", tmp_path) == "worker-7"
    monkeypatch.setenv("DIAGNOSER_HOME", str(tmp_path))
    assert Settings().executor() == default_executor_id(tmp_path)
    assert Settings(executor_id="eu-1:worker@3").executor() == "eu-1:worker@3"
    for bad in ("", "has space", "-leading", "x" * 129, "new\nline"):
        with pytest.raises(ValidationError):
            Settings(executor_id=bad)
