"""The `diagnoser` command under hostile input and hostile stops: exit 0, 1 or 2 (or the
signal's 130/143), one line of explanation, never a traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from repomap.signals import EXIT_INTERRUPTED, EXIT_TERMINATED

ROOT = Path(__file__).resolve().parents[2]
STARTUP_SECONDS = 60.0
"""Generous bound on a loaded machine: the assertion is that it stops, not how fast."""


def _waiting_on_stdin(home: Path) -> subprocess.Popen[bytes]:
    """`diagnoser diagnose -` blocked reading a report that never ends."""
    env = {**os.environ, "DIAGNOSER_HOME": str(home)}
    process = subprocess.Popen(
        [sys.executable, "-m", "diagnoser", "diagnose", "-"],
        cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert process.stdin is not None
    process.stdin.write(b"Traceback (most recent call last):\n")
    process.stdin.flush()
    deadline = time.monotonic() + STARTUP_SECONDS
    # Until it is past its imports and blocked reading the pipe (the kernel's wait channel).
    while "pipe_read" not in Path(f"/proc/{process.pid}/wchan").read_text():
        assert time.monotonic() < deadline, "never started reading stdin"
        time.sleep(0.05)
    return process


@pytest.mark.parametrize(
    ("signum", "code", "said"),
    [
        (signal.SIGTERM, EXIT_TERMINATED, "diagnoser: terminated"),
        (signal.SIGINT, EXIT_INTERRUPTED, "diagnoser: interrupted"),
    ],
)
def test_a_stop_signal_is_one_line_and_the_signal_exit_code(
    tmp_path: Path, signum: int, code: int, said: str
) -> None:
    process = _waiting_on_stdin(tmp_path / "home")
    process.send_signal(signum)
    out, err = process.communicate(timeout=STARTUP_SECONDS)
    assert process.returncode == code
    assert err.decode().strip() == said and out == b""
