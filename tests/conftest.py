"""Shared fixtures: a private data directory per test, a factory for small repositories and
an interpreter with pytest alone (for sandboxed runs);
Ctrl-C restored when the shell ignored it; no garbage collection over what the collection
loaded; how pytest-xdist shares the tests among its
workers (`tests/scheduling.py`)."""

from __future__ import annotations

import gc
import os
import shutil
import signal
import venv
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
    in each worker too.

    No garbage collection while the test modules, and all they import, load: it ran
    over the same million objects again and again, 4–5 s of each worker's 15 s
    collection (`pytest_collection_finish` turns it on again)."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    gc.disable()


def pytest_collection_finish() -> None:
    """The collector on again, past what the collection loaded: it stays for the whole
    session, and every full collection in a test went over it (as `repomap.collector`
    does for the CLIs)."""
    gc.freeze()
    gc.enable()


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: unknown without it
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto`: one worker more than the cores this process may use. A worker spends
    about 40 % of its time waiting on the processes its tests start (servers, workers,
    sandboxes, the fleet), which a third worker fills: `make test` 232–240 s with 3 on
    2 cores, 241–248 s with 2 (docs/benchmarks.md, "Test time").
    `PYTEST_XDIST_AUTO_NUM_WORKERS` still decides when set (xdist's own hook reads it)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    usable = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None  # not on macOS
    return (len(usable) if usable else os.cpu_count() or 1) + 1


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


LEAN_PACKAGES = ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "pygments", "py.py")


@pytest.fixture(scope="session")
def lean_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """An interpreter with pytest and nothing else: the test environment's own loads a
    dozen plugins at every start (3 s against 0.4 s), which a project's would not."""
    root = tmp_path_factory.mktemp("lean")
    venv.create(root / "venv", with_pip=False)
    packages = root / "packages"
    packages.mkdir()
    site = Path(pytest.__file__).parent.parent
    for entry in site.iterdir():
        name = entry.name.split("-")[0]
        if entry.name in LEAN_PACKAGES or (entry.suffix == ".dist-info" and name in LEAN_PACKAGES):
            copy = shutil.copytree if entry.is_dir() else shutil.copy
            copy(entry, packages / entry.name)
    (next((root / "venv" / "lib").glob("python3*")) / "site-packages" / "lean.pth").write_text(
        f"{packages}\n"
    )
    return str(root / "venv" / "bin" / "python")
