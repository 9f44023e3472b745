"""A run stopped during a cold index leaves nothing behind.

A real `python -m repomap` indexes a generated tree big enough for the process pool;
once its parse workers exist it is killed (SIGKILL to the parent alone) or interrupted
(SIGINT to its whole process group, as Ctrl-C in a terminal does). Every process it
started — fork server, workers, resource tracker — must then be gone. The last cases
pin the interruption down with workers that hang in their chunk: waiting for running or
queued work, or for the rest of a result a worker sent half of, would never end; and a
worker idle when Ctrl-C comes must not print a traceback. Linux only: the process tree
is read from /proc.
"""

from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from repomap.build import _tag_chunk
from repomap.cache import CachedFile
from repomap.constants import MIN_FILES_FOR_POOL, PARSE_CHUNK_FILES
from repomap.files import FileEntry
from tests.conftest import MakeRepo

PROJECT_ROOT = Path(__file__).resolve().parents[2]
FILES = 3_000
"""~1.8 s of parsing on two idle cores; workers are seen within the first ~0.5 s."""
SETTLE_SECONDS = 0.3
"""After the first worker is seen, keep recording this long so every worker is seen."""
DEADLINE_SECONDS = 10.0
"""Generous bound for the processes to go: the test is about termination, not speed."""

Proc = tuple[int, int]
"""(pid, start time in clock ticks): a pid alone could be reused by an unrelated process."""

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


@pytest.fixture(scope="module")
def big_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("big_repo")
    body = "".join(
        f"class C{{n}}_{j}:\n    def m{j}(self, x):\n        return helper_{j}(x)\n\n"
        for j in range(10)
    )
    for n in range(FILES):
        folder = root / f"p{n // 100}"
        folder.mkdir(exist_ok=True)
        (folder / f"m{n}.py").write_text(body.replace("{n}", str(n)))
    assert FILES >= 10 * MIN_FILES_FOR_POOL
    return root


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, start time) of a process, or None when it no longer exists."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw.rsplit(")", 1)[1].split()  # the command name may hold spaces or ')'
    return fields[0], int(fields[1]), int(fields[19])


def _descendants(root: int) -> Iterator[tuple[Proc, int]]:
    """Every (process, depth below `root`) alive now."""
    children: dict[int, list[Proc]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (info := _stat(int(entry.name))) is not None:
            children.setdefault(info[1], []).append((int(entry.name), info[2]))
    stack = [(child, 1) for child in children.get(root, [])]
    while stack:
        (pid, started), depth = stack.pop()
        yield (pid, started), depth
        stack.extend((child, depth + 1) for child in children.get(pid, []))


def _alive(proc: Proc) -> bool:
    info = _stat(proc[0])
    return info is not None and info[2] == proc[1] and info[0] != "Z"  # zombies are dead


def _start(
    repo: Path, tmp_path: Path, command: tuple[str, ...] = ("-m", "repomap")
) -> tuple[subprocess.Popen[bytes], Path]:
    err = tmp_path / "stderr"
    # Files, not pipes: a leftover process holding a pipe would hang the read of it.
    with open(os.devnull, "wb") as out, open(err, "wb") as errors:
        child = subprocess.Popen(
            [sys.executable, *command, str(repo)],
            cwd=PROJECT_ROOT,
            env={**os.environ, "DIAGNOSER_HOME": str(tmp_path / "home")},
            stdout=out,
            stderr=errors,
            start_new_session=True,  # its own process group: our SIGINT reaches only it
        )
    return child, err


def _watch_until_workers(child: subprocess.Popen[bytes]) -> set[Proc]:
    """Every descendant seen until the parse workers (grandchildren) have started."""
    seen: set[Proc] = set()
    settled_at: float | None = None
    while settled_at is None or time.monotonic() < settled_at:
        found = list(_descendants(child.pid))
        seen.update(proc for proc, _ in found)
        if settled_at is None and any(depth >= 2 for _, depth in found):
            settled_at = time.monotonic() + SETTLE_SECONDS
        if child.poll() is not None:
            if settled_at is None:
                pytest.skip("the index finished before its workers were seen")
            break
        time.sleep(0.01)
    return seen


def _survivors(seen: set[Proc]) -> set[Proc]:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while (alive := {proc for proc in seen if _alive(proc)}) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid, _ in alive:  # do not leak them into the rest of the run
        os.kill(pid, signal.SIGKILL)
    return alive


def test_killed_parent_leaves_no_process_behind(big_repo: Path, tmp_path: Path) -> None:
    child, _ = _start(big_repo, tmp_path)
    try:
        seen = _watch_until_workers(child)
    finally:
        child.kill()
        child.wait()
    assert len(seen) >= 3  # fork server, resource tracker, at least one worker
    assert _survivors(seen) == set()


REPORT = str(PROJECT_ROOT / "sample_reports" / "reports" / "issue_load_more_500.md")
STOPS = {
    "repomap, Ctrl-C to the group": (("-m", "repomap"), signal.SIGINT, "repomap: interrupted"),
    "repomap, SIGTERM": (("-m", "repomap"), signal.SIGTERM, "repomap: terminated"),
    "diagnoser, SIGTERM": (
        ("-m", "diagnoser", "diagnose", REPORT, "--quiet", "--repo"),
        signal.SIGTERM,
        "diagnoser: terminated",
    ),
}


@pytest.mark.parametrize(("command", "signum", "said"), STOPS.values(), ids=STOPS.keys())
def test_a_stop_signal_stops_everything_in_one_line(
    big_repo: Path, tmp_path: Path, command: tuple[str, ...], signum: int, said: str
) -> None:
    child, stderr = _start(big_repo, tmp_path, command)
    try:
        seen = _watch_until_workers(child)
        if child.poll() is not None:
            pytest.skip("the index finished before it could be interrupted")
        if signum == signal.SIGINT:  # Ctrl-C reaches the whole process group
            os.killpg(child.pid, signum)
        else:  # `kill PID`, as a service manager sends it, reaches the parent alone
            child.send_signal(signum)
        code = child.wait(timeout=DEADLINE_SECONDS)
    finally:
        child.kill()
        child.wait()
    errors = stderr.read_text()
    assert code == 128 + signum, errors
    assert _survivors(seen) == set()
    # Each worker used to print its own KeyboardInterrupt traceback.
    assert errors == said + "\n", errors


STUCK_FILE = "stuck.py"
"""The chunk holding it hangs; the others are tagged, and their worker goes idle."""
HALF_FILE = "half.py"
"""When it exists, every chunk hangs, and the one holding it first sends half a result,
as a worker stopped mid-send does (nothing else may write to the result pipe then)."""
HANG_SECONDS = 600.0
"""Longer than any test run: a build that waits for a hung chunk never ends in time."""
BUILD_WITH_A_STUCK_CHUNK = (
    "import sys; from repomap import build; from tests.hostile import test_stops; "
    "build._tag_chunk = test_stops.hang_in_chunk; "
    "build.build(sys.argv[1], use_cache=False, workers=2)"
)


def hang_in_chunk(root: Path, entries: list[FileEntry]) -> list[CachedFile]:
    """Stands in for `build._tag_chunk` in the workers (see STUCK_FILE and HALF_FILE);
    leaves a marker file beside the repo when it is done or about to hang."""
    paths = {entry.path for entry in entries}
    if not (root / HALF_FILE).exists() and STUCK_FILE not in paths:
        tagged = _tag_chunk(root, entries)
        (root.parent / f"done-{os.getpid()}").touch()
        return tagged
    if HALF_FILE in paths:
        frame = sys._getframe()
        while "result_queue" not in frame.f_locals:  # the worker loop of concurrent.futures
            assert frame.f_back is not None
            frame = frame.f_back
        pipe = frame.f_locals["result_queue"]._writer
        os.write(pipe.fileno(), struct.pack("!i", 1_000) + b"half")  # announces 1,000 bytes
    (root.parent / f"hung-{os.getpid()}").touch()
    time.sleep(HANG_SECONDS)
    return []


@pytest.mark.parametrize("special", [STUCK_FILE, HALF_FILE])
def test_interrupt_does_not_wait_for_running_chunks(
    special: str, make_repo: MakeRepo, tmp_path: Path
) -> None:
    files = {f"m{n}.py": "def f():\n    pass\n" for n in range(2 * PARSE_CHUNK_FILES - 1)}
    repo = make_repo({**files, special: "def g():\n    pass\n"})
    assert len(files) + 1 >= MIN_FILES_FOR_POOL
    child, stderr = _start(repo, tmp_path, ("-c", BUILD_WITH_A_STUCK_CHUNK))
    try:
        deadline = time.monotonic() + DEADLINE_SECONDS
        while len([*repo.parent.glob("done-*"), *repo.parent.glob("hung-*")]) < 2:
            assert time.monotonic() < deadline and child.poll() is None, stderr.read_text()
            time.sleep(0.01)
        time.sleep(SETTLE_SECONDS)  # a worker that is done is back waiting for work
        seen = {proc for proc, _ in _descendants(child.pid)}
        os.killpg(child.pid, signal.SIGINT)
        code = child.wait(timeout=DEADLINE_SECONDS)
    finally:
        child.kill()
        child.wait()
    errors = stderr.read_text()
    assert code != 0
    assert _survivors(seen) == set()
    assert "_process_worker" not in errors and "ForkServerProcess" not in errors, errors
    assert errors.count("KeyboardInterrupt") == 1, errors  # the parent's own (no CLI here)
