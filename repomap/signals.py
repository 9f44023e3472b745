"""Clean stops for the command-line entry points (`python -m repomap`, `diagnoser`).

Ctrl-C (SIGINT) and SIGTERM end a run with one line on stderr and the shell's exit code
for a signal (128 + its number: 130, 143), never a traceback. SIGTERM is turned into an
exception in the main thread, like Ctrl-C already is, so `finally` blocks run: the parse
pool is torn down and no worker outlives the run. A closed stdout (`… | head`) ends the
run quietly too.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType

EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_TERMINATED = 128 + signal.SIGTERM
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE


class Terminated(SystemExit):
    """SIGTERM arrived. A SystemExit, like KeyboardInterrupt a BaseException: `except
    Exception` in the middle of a run cannot swallow a request to stop, and neither can
    asyncio, which logs and drops other exceptions raised inside its callbacks but
    re-raises SystemExit. Uncaught, it still exits with the right code."""

    def __init__(self) -> None:
        super().__init__(EXIT_TERMINATED)


def run_stoppable(main: Callable[[], int], *, prog: str) -> int:
    """`main()`, with SIGINT/SIGTERM/a closed stdout turned into an exit code and one line."""
    # Handlers can only be installed from the main thread (a test runner may call us in another).
    installed = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if installed else None
    try:
        return main()
    except KeyboardInterrupt:
        _say(f"{prog}: interrupted")
        return EXIT_INTERRUPTED
    except Terminated:
        _say(f"{prog}: terminated")
        return EXIT_TERMINATED
    except BrokenPipeError:
        # Python would complain again when it flushes stdout at exit: point it elsewhere.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    finally:
        if installed:
            signal.signal(signal.SIGTERM, previous)


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise Terminated


def _say(message: str) -> None:
    with contextlib.suppress(OSError):  # stderr itself is gone: the exit code still tells
        print(message, file=sys.stderr, flush=True)


@contextlib.contextmanager
def exit_on_interrupt(prog: str) -> Iterator[None]:
    """While the block runs — a command's module imports — Ctrl-C ends the process at
    once, with one line and exit 130, instead of raising KeyboardInterrupt: raised inside
    a C extension's initialisation it can surface as another error (PyO3's, for
    pydantic-core: a Rust panic message and a PanicException traceback). Nothing that
    needs stopping has started yet. Outside the main thread it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def exit_now(signum: int, frame: FrameType | None) -> None:
        with contextlib.suppress(OSError):
            os.write(sys.stderr.fileno(), f"{prog}: interrupted\n".encode())
        os._exit(EXIT_INTERRUPTED)

    previous = signal.signal(signal.SIGINT, exit_now)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
