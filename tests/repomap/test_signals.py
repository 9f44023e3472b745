"""run_stoppable: a stop request becomes one line and the shell's exit code, never a traceback."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from repomap.signals import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    run_stoppable,
)


def test_a_normal_run_returns_its_own_code_and_restores_the_sigterm_handler() -> None:
    before = signal.getsignal(signal.SIGTERM)
    assert run_stoppable(lambda: 7, prog="x") == 7
    assert signal.getsignal(signal.SIGTERM) == before


def test_ctrl_c_is_one_line_and_exit_130(capsys: pytest.CaptureFixture[str]) -> None:
    def main() -> int:
        raise KeyboardInterrupt

    assert run_stoppable(main, prog="repomap") == EXIT_INTERRUPTED == 130
    assert capsys.readouterr().err == "repomap: interrupted\n"


def test_sigterm_is_one_line_and_exit_143_and_finally_blocks_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    cleaned: list[bool] = []

    def main() -> int:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            signal.pause()  # the handler raises before this returns
            return 0
        finally:
            cleaned.append(True)

    assert run_stoppable(main, prog="diagnoser") == EXIT_TERMINATED == 143
    assert cleaned == [True]
    assert capsys.readouterr().err == "diagnoser: terminated\n"


def test_a_closed_stdout_ends_quietly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def main() -> int:
        raise BrokenPipeError

    with (tmp_path / "stdout").open("w") as stdout:  # what gets pointed at /dev/null
        monkeypatch.setattr(sys, "stdout", stdout)
        assert run_stoppable(main, prog="x") == EXIT_BROKEN_PIPE == 141


def test_sigterm_inside_an_event_loop_callback_still_stops_the_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    async def diagnosis() -> int:
        loop = asyncio.get_running_loop()
        loop.call_soon(os.kill, os.getpid(), signal.SIGTERM)  # lands inside a loop callback
        await asyncio.sleep(30)  # asyncio logs and swallows most exceptions raised there
        return 0

    assert run_stoppable(lambda: asyncio.run(diagnosis()), prog="diagnoser") == EXIT_TERMINATED
    assert capsys.readouterr().err == "diagnoser: terminated\n"


def test_ctrl_c_while_loading_exits_at_once_with_one_line() -> None:
    """Not a KeyboardInterrupt: raised inside a C extension's start-up it can surface as
    another error with a traceback (seen with pydantic-core)."""
    probe = (
        "import os, signal, time\n"
        "from repomap.signals import exit_on_interrupt\n"
        "with exit_on_interrupt('probe'):\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    time.sleep(5)\n"
        "print('not reached')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False
    )
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "probe: interrupted\n")
