"""Hostile reproducers: code in a report that attacks the machine running `--verify`.
Each is contained, ends with a clear status and reason, and changes nothing outside its
throwaway copy (`diagnoser.verify`: the sandbox is bubblewrap, `make test` installs it)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from diagnoser.finding import ReproductionStatus
from diagnoser.intake import ReportIn, build_report
from diagnoser.settings import Settings
from diagnoser.verify import Logs, reproduce
from diagnoser.workspace import Workspace
from tests.conftest import MakeRepo

CANARY = "canary-5e1f"
DIFFERENT = ReproductionStatus.DIFFERENT_FAILURE
LEFT_RUNNING = "import time\nwhile True: time.sleep(1)"
HOSTILE = {
    "network": (
        "import socket\nsocket.create_connection(('pypi.org', 443), timeout=3)\n",
        ReproductionStatus.DIFFERENT_FAILURE, "raised",
    ),
    "writes outside the copy": (
        "import pathlib\nfor p in ('{outside}', '/etc/x', '{home}/x'):\n"
        "    try:\n        pathlib.Path(p).write_text('x')\n    except OSError:\n        pass\n",
        ReproductionStatus.NOT_REPRODUCED, "ran to the end",
    ),
    "reads secrets and the environment": (
        "import os, pathlib\nprint(sorted(os.environ))\n"
        "print(pathlib.Path('{home}/.ssh/id_rsa').read_text())\n",
        ReproductionStatus.DIFFERENT_FAILURE, "raised",
    ),
    "fork bomb": (
        "import os, time\nwhile True:\n    if os.fork() == 0:\n        time.sleep(60)\n",
        ReproductionStatus.DIFFERENT_FAILURE, "raised BlockingIOError",
    ),
    "endless loop": ("while True:\n    pass\n", DIFFERENT, "did not finish"),
    "10 GB allocation": ("x = bytearray(10 * 1024**3)\n", DIFFERENT, "MemoryError"),
    "1 GB of output": (
        "import sys\nline = 'y' * 1023 + '\\n'\n"
        "for _ in range(1024 * 1024):\n    sys.stdout.write(line)\n",
        ReproductionStatus.NOT_REPRODUCED, "ran to the end",
    ),
    "a process left running": (
        f"import subprocess, sys\nforever = {LEFT_RUNNING!r}\n"
        "subprocess.Popen([sys.executable, '-c', forever], start_new_session=True)\n",
        ReproductionStatus.NOT_REPRODUCED, "ran to the end",
    ),
}  # fmt: skip
RUN_SECONDS = 4
"""The run's time limit: what "endless loop" waits for."""
SLOW_RUN_SECONDS = {"1 GB of output": 30}
"""Writing a gigabyte through the pipe takes 3–5 s on a busy 2-core machine: a limit of 4 s
would make the case a timing test, not one of the output bound."""


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_reproducer_is_contained_with_a_clear_status(  # noqa: PLR0917 (fixtures)
    name: str, make_repo: MakeRepo, home: Path, lean_python: str, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setenv("DIAGNOSER_MODEL_API_KEY", CANARY)
    secret_home = Path.home()
    outside = tmp_path / "outside.txt"
    code, status, why = HOSTILE[name]
    code = code.format(outside=outside, home=secret_home)
    repo = make_repo({"app.py": "VALUE = 1\n"})
    settings = Settings(verify=True, verify_python=lean_python,
                        verify_run_seconds=SLOW_RUN_SECONDS.get(name, RUN_SECONDS),
                        verify_memory_bytes=1024**3, verify_processes=32)  # fmt: skip
    workspace = Workspace(repo, settings)
    text = f"```python\nimport app\n{code}```\nIt raises KeyError."
    before = {p.name for p in repo.iterdir()}
    started = time.monotonic()
    tried = reproduce(build_report(ReportIn(text=text), files=workspace.file_paths), workspace,
                      home=home).reproduction  # fmt: skip
    assert tried.status is status and why in tried.reason, tried.reason
    assert time.monotonic() - started < 60
    log = Logs(home).load(tried.log or "") or ""
    assert CANARY not in log and "DIAGNOSER" not in log.split("\n", 1)[-1]
    assert not outside.exists() and {p.name for p in repo.iterdir()} == before
    assert not any((home / "verify" / "scratch").iterdir())  # the copy is gone
    if name == "a process left running":
        time.sleep(0.5)
        assert not [
            p
            for p in os.popen("ps -eo args").read().splitlines()
            if "while True: time.sleep(1)" in p
        ]


HANG_GUARD_SECONDS = 60.0
"""Far above what finding reproducers in these texts takes (well under a second each):
only a pattern that backtracks over them reaches it."""


def test_reproducers_are_found_in_runs_of_path_characters_without_backtracking() -> None:
    """`[\\w./-]*?[\\w.-]+\\.py::` tried every split of a run of path characters at every
    start: 5,000 letters took minutes. A process, not a thread: only a process can be
    stopped by the guard while a regular expression holds the GIL."""
    code = (
        "from diagnoser.verify.reproducer import find_reproducers\n"
        "files = {'a.py', 'test/a.test.js', 'src/test/java/ATest.java'}\n"
        "for run in ('a', 'a/', 'a.', 'A.', 'a-', 'a.py', 'x.js ', 'a.py:', '>>> ', '('):\n"
        "    find_reproducers(run * (200_000 // len(run)), files)\n"
        "print('done')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True,
                          text=True, timeout=HANG_GUARD_SECONDS)  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "done", done.stderr
