"""Shared fixtures: a private data directory per test and a factory for small repositories;
Ctrl-C restored when the shell ignored it; how pytest-xdist shares the tests among its
workers (`tests/scheduling.py`)."""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
GOLDEN_REPO = FIXTURES / "golden_repo"

MakeRepo = Callable[[dict[str, str | bytes]], Path]


def pytest_configure() -> None:
    """Ctrl-C as a terminal sends it: a shell that starts a command in the background
    (`make test &`, `nohup`) has it ignore SIGINT, and every process the tests start
    would inherit that (the tests of what Ctrl-C does would fail). Under pytest-xdist,
    in each worker too."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: unknown without it
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under `-n` with the default `--dist load`: test by test, `tests/hostile/` whole on
    one worker. Any other `--dist` is xdist's own."""
    if config.getvalue("dist") != "load":
        return None
    from tests.scheduling import Scheduling  # noqa: PLC0415  (xdist only under -n)

    return Scheduling(config, log)


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
