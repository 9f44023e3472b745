"""`diagnoser serve --workers N`: N web worker processes accept requests; the process
started runs the jobs.

    diagnoser serve --workers 2

One process is bounded by its GIL to one core, so on a machine of several cores a
second worker accepts more reports a second. The process `diagnoser serve` starts
(the supervisor) binds the socket, runs the job queue as DBOS's executor "local" — it
dequeues, and at start recovers what a killed runner left unfinished — and runs
uvicorn's `Multiprocess`, which spawns the workers and replaces one that dies. Each
worker builds the app from the environment (`web_app`, uvicorn's factory) and only
enqueues jobs (`Jobs(runner=False)`): exactly one process ever runs or recovers them.

What stays per process: rate limits are counted in each worker's memory, so a caller
spread over N workers may get up to N times `DIAGNOSER_RATE_LIMIT_PER_MINUTE`.
Prometheus counters are kept in files of a directory the supervisor makes
(prometheus_client's multiprocess mode), so `/metrics` from any worker counts all of
them, the runner's job metrics included.

Stopping: SIGINT or SIGTERM to the supervisor stops the workers (SIGTERM: they finish
the requests in flight), then the queue. When the supervisor dies without that (kill
-9), each worker sees its parent gone and stops; the next start recovers the jobs.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from socket import socket

import uvicorn
from fastapi import FastAPI
from uvicorn.config import STARTUP_FAILURE
from uvicorn.supervisors import Multiprocess

from api.app import build_service, create_app
from api.metrics import share_between_processes
from api.service import Service
from api.settings import load_service_settings

log = logging.getLogger(__name__)
WEB_APP = "api.workers:web_app"
"""The workers' app factory, as uvicorn imports it in each worker."""
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
HEALTHCHECK_SECONDS = 30
"""How long a web worker may take to start (imports, settings, its database pool) or to
answer the supervisor's ping before it is replaced. uvicorn's 5 s default killed workers
that were merely slow on a busy 2-core machine, and the replacements were as slow."""


def web_app() -> FastAPI:
    """A web worker's app (uvicorn's factory, called in the worker): the settings from
    the environment the supervisor passed on, jobs only enqueued."""
    _stop_with_parent()
    service = build_service(load_service_settings(), runner=False)
    return create_app(service=service)


def metrics_directory() -> Path:
    """A fresh directory for the workers' and the runner's shared counters; call it
    before anything makes a `Metrics`, and remove it at the end."""
    directory = Path(tempfile.mkdtemp(prefix="diagnoser-metrics-"))
    share_between_processes(directory)
    return directory


def run(service: Service, config: uvicorn.Config, metrics: Path) -> int:
    """Run the jobs here and `config.workers` web workers until SIGINT or SIGTERM; 0,
    or 1 when a worker could not start."""
    service.jobs.launch()
    previous = {number: signal.getsignal(number) for number in STOP_SIGNALS}
    supervisor = _Supervisor(config, [config.bind_socket()], on_replace=_requeue(service))
    try:
        supervisor.run()
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        service.jobs.shutdown()
        service.store.engine.dispose()
        shutil.rmtree(metrics, ignore_errors=True)
    failed = any(process.exitcode == STARTUP_FAILURE for process in supervisor.processes)
    return 1 if failed else 0


class _Supervisor(Multiprocess):
    """uvicorn's supervisor, calling `on_replace` after it replaced a dead worker."""

    def __init__(
        self, config: uvicorn.Config, sockets: list[socket], *, on_replace: Callable[[], None]
    ) -> None:
        super().__init__(config, sockets)
        self.on_replace = on_replace

    def keep_subprocess_alive(self) -> None:
        before = [process.pid for process in self.processes]
        super().keep_subprocess_alive()
        if [process.pid for process in self.processes] != before:
            self.on_replace()


def _requeue(service: Service) -> Callable[[], None]:
    """A worker that died may have stored a job and not enqueued it: hand the queue the
    unfinished jobs again (idempotent), off the supervisor's loop."""

    def requeue() -> None:
        threading.Thread(target=service.jobs.requeue, name="requeue", daemon=True).start()

    return requeue


def _stop_with_parent() -> None:
    """SIGTERM this worker once its supervisor is gone (killed with no chance to stop it),
    so no orphan keeps serving on the port."""
    parent = multiprocessing.parent_process()
    if parent is None:  # not started by a supervisor (a test calling the factory)
        return

    def watch() -> None:
        parent.join()  # returns when the parent's end of a pipe closes: it exited
        log.warning("the supervisor exited: stopping this worker")
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
