"""Shared fixtures: a private data directory per test and a factory for small repositories."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
GOLDEN_REPO = FIXTURES / "golden_repo"

MakeRepo = Callable[[dict[str, str | bytes]], Path]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh `$DIAGNOSER_HOME`, outside every repository the test makes."""
    path = tmp_path / "home"
    monkeypatch.setenv("DIAGNOSER_HOME", str(path))
    return path


@pytest.fixture
def make_repo(tmp_path: Path) -> MakeRepo:
    """Write `{relative path: text or bytes}` into a new folder and return it."""
    counter = iter(range(1_000))

    def make(files: dict[str, str | bytes]) -> Path:
        root = tmp_path / f"repo{next(counter)}"
        root.mkdir()
        for rel, content in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content)
        return root

    return make
