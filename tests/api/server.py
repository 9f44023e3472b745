"""`diagnoser serve` and `diagnoser worker` as real subprocesses, for the tests that need
the process itself (restart recovery, signals, the address it binds, the fleet): started
as `[sys.executable, "-m", "api.cli", "serve", …]` from the project root, with only the
`DIAGNOSER_*` settings a test gives it, its stderr kept in a file.

    with serve(env, log=tmp_path / "server.log") as server:
        server.wait_ready()
        server.client.post("/diagnose", …)
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from api.database import connect
from api.store import Store

ROOT = Path(__file__).resolve().parents[2]
START_DEADLINE_SECONDS = 120.0
"""Until `/readyz` says 200: a hang guard (a start takes a few seconds)."""
STOP_DEADLINE_SECONDS = 60.0
"""Until the process has exited after a signal: a hang guard."""
POLL_SECONDS = 0.1


def free_port() -> int:
    """A loopback port nobody listens on now (the server binds it a moment later)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def server_env(settings: Mapping[str, str]) -> dict[str, str]:
    """This process's environment without its `DIAGNOSER_*` settings, plus `settings`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIAGNOSER_")}
    return {**env, **settings}


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "api.cli", *args]


@dataclass
class Process:
    """A running `diagnoser` process and the file its output goes to."""

    process: subprocess.Popen[bytes]
    log: Path

    @property
    def output(self) -> str:
        """What it printed so far (stdout and stderr)."""
        return self.log.read_text(encoding="utf-8", errors="replace")

    def send(self, number: signal.Signals) -> int | None:
        """Send `number`; the exit code once the process has ended (None: it runs on)."""
        self.process.send_signal(number)
        if number in (signal.SIGSTOP, signal.SIGCONT):
            return None
        return self.process.wait(timeout=STOP_DEADLINE_SECONDS)

    def freeze(self) -> None:
        """SIGSTOP, returning once every thread has stopped (it is delivered
        asynchronously): from then on the process commits nothing until SIGCONT."""
        self.send(signal.SIGSTOP)
        deadline = time.monotonic() + STOP_DEADLINE_SECONDS
        while not _frozen(self.process.pid):
            if time.monotonic() > deadline:
                raise AssertionError("the process did not stop on SIGSTOP")
            time.sleep(0.001)

    def kill(self) -> None:
        """`kill -9`: no shutdown, no cleanup, as a crash or an OOM kill would."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=STOP_DEADLINE_SECONDS)


def _frozen(pid: int) -> bool:
    """Every thread of `pid` is stopped."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            state = (task / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:  # a thread that just ended
            continue
        if state not in ("T", "t"):
            return False
    return True


@dataclass
class Server(Process):
    """`diagnoser serve`, on `port`, with a client for it."""

    port: int
    client: httpx.Client

    def wait_ready(self) -> None:
        """Until `/readyz` answers 200; fails with the server's log if it exits first."""
        deadline = time.monotonic() + START_DEADLINE_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(
                    f"the server exited ({self.process.returncode}):\n{self.output}"
                )
            try:
                if self.client.get("/readyz").status_code == 200:
                    return
            except httpx.TransportError:
                pass  # not listening yet
            time.sleep(POLL_SECONDS)
        raise AssertionError(f"not ready within {START_DEADLINE_SECONDS} s:\n{self.output}")


@contextmanager
def serve(
    settings: Mapping[str, str],
    *,
    log: Path,
    args: Sequence[str] = (),
    port: int | None = None,
    preexec: Callable[[], None] | None = None,
) -> Iterator[Server]:
    """A running `diagnoser serve` on a free loopback port; killed at the end if it still
    runs (a stopped one is continued first, or SIGKILL would wait for nothing). `preexec`
    runs in the child before the server starts (e.g. to lower its file limit)."""
    port = port or free_port()
    with log.open("ab") as sink:
        process = subprocess.Popen(
            command("serve", "--port", str(port), *args),
            cwd=ROOT, env=server_env(settings), stdout=sink, stderr=subprocess.STDOUT,
            preexec_fn=preexec,  # noqa: PLW1509 - the tests' only use: a setrlimit call
        )  # fmt: skip
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60.0)
    try:
        yield Server(process, log, port, client)
    finally:
        client.close()
        if process.poll() is None:
            process.send_signal(signal.SIGCONT)
            process.kill()
        process.wait(timeout=STOP_DEADLINE_SECONDS)


Worker = Process
"""A running `diagnoser worker` (no port: a test reads the database)."""


@contextmanager
def work(settings: Mapping[str, str], *, log: Path, args: Sequence[str] = ()) -> Iterator[Worker]:
    """A running `diagnoser worker`, killed at the end if it still runs."""
    with log.open("ab") as sink:
        process = subprocess.Popen(
            command("worker", *args), cwd=ROOT, env=server_env(settings), stdout=sink,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        yield Worker(process, log)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=STOP_DEADLINE_SECONDS)


FLEET_DEADLINE_SECONDS = 300.0
"""Hang guard of a fleet's waits."""


def until(
    what: str, ready: Callable[[], bool], *, deadline: float = FLEET_DEADLINE_SECONDS
) -> None:
    """Wait until `ready()` (a hang guard, not a timing)."""
    end = time.monotonic() + deadline
    while not ready():
        if time.monotonic() > end:
            raise AssertionError(f"not within {deadline} s: {what}")
        time.sleep(0.05)


@contextmanager
def fleet(
    url: str, home: Path, workers: Mapping[str, Mapping[str, str]], common: Mapping[str, str]
) -> Iterator[tuple[Server, dict[str, Worker], Store]]:
    """`serve --no-jobs` and the named workers on the database `url`, each process with
    its own data directory under `home`, the `common` settings and a worker's own; when
    every worker beats and is warm: the server, the workers, and a store on `url` (the
    caller's view of what they share)."""
    shared = {"DIAGNOSER_DATABASE_URL": url, **common}
    with ExitStack() as stack:
        api = stack.enter_context(serve(
            {**shared, "DIAGNOSER_HOME": str(home / "api")}, log=home / "api.log",
            args=("--no-jobs",),
        ))  # fmt: skip
        api.wait_ready()  # migrated: the workers start on the schema
        running = {}
        for name, own in workers.items():
            settings = {**shared, "DIAGNOSER_HOME": str(home / name), **own}
            running[name] = stack.enter_context(work(settings, log=home / f"{name}.log"))
        engine = connect(url)
        stack.callback(engine.dispose)
        store = Store(engine)

        def ready() -> bool:
            for worker in running.values():
                if worker.process.poll() is not None:
                    raise AssertionError(f"a worker exited:\n{worker.output}")
            members = store.executors()
            return len(members) == len(running) and all(member.ready for member in members)

        until("every worker ready", ready)
        yield api, running, store
