"""`diagnoser worker`: a process that only runs jobs, no HTTP.

    diagnoser worker            # dequeue and diagnose until SIGINT or SIGTERM
    diagnoser worker --check    # is this machine's worker alive and warm? (exit 0 / 1)

Any number of workers, on any number of machines, share the queue through
`DIAGNOSER_DATABASE_URL` on PostgreSQL, with `diagnoser serve --no-jobs` taking the
requests (`docs/scaling.md`). Each is an executor of the fleet (`api.fleet`), under its
own id and with its own data directory (index caches): nothing but the database is
shared.

Stopping: SIGINT or SIGTERM stops taking jobs, lets the running ones end within
`DIAGNOSER_STOP_GRACE_SECONDS`, hands the rest back to the fleet, and exits 130 / 143
with one line; a second signal exits at once (the fleet takes over what it held).

Health: a worker serves no port. `--check` reads its heartbeat from the database, as an
orchestrator's exec probe would (Kubernetes `livenessProbe.exec`, Docker `HEALTHCHECK`):
ready (0) once the worker beats and every served repository's index is warm.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from types import FrameType

from sqlalchemy.exc import SQLAlchemyError

from api.database import connect
from api.service import Service
from api.settings import ServiceSettings
from api.store import Executor, Store
from api.store.transactions import utcnow
from diagnoser.redact import scrub
from diagnoser.settings import default_database_url

log = logging.getLogger(__name__)
PROG = "diagnoser worker"
STOP_SIGNALS = {signal.SIGINT: ("interrupted", 130), signal.SIGTERM: ("terminated", 143)}
"""A stop signal → what the last line says, and the exit code (128 + the signal)."""
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
THREAD_END_SECONDS = 1.0
"""How long, once the queue has stopped, its idle threads get to end before a thread
still running counts as a job's (`_lingering`)."""


def run(service: Service) -> int:
    """Run jobs until a stop signal; the exit code it asks for."""
    stopped = threading.Event()
    received: list[int] = []

    def stop(number: int, _frame: FrameType | None) -> None:
        if received:  # a second signal: now
            print(f"{PROG}: {STOP_SIGNALS[signal.Signals(number)][0]} again: exiting now",
                  file=sys.stderr, flush=True)  # fmt: skip
            os._exit(STOP_SIGNALS[signal.Signals(number)][1])
        received.append(number)
        stopped.set()

    previous = {number: signal.signal(number, stop) for number in STOP_SIGNALS}
    try:
        service.jobs.launch()
        threading.Thread(target=_warm_then_ready, args=(service,), name="warm", daemon=True).start()
        stopped.wait()
        held = service.jobs.held()
        service.jobs.shutdown()
        handed = service.jobs.held()
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        service.store.engine.dispose()
    word, code = STOP_SIGNALS[signal.Signals(received[0])]
    abandoned = bool(handed) or _lingering()
    if abandoned:  # their threads run on without DBOS: what they would say is noise now
        _mute_abandoned()
    print(
        f"{PROG}: {word}: {held - handed} running jobs ended, {handed} handed back to the fleet",
        file=sys.stderr, flush=True,
    )  # fmt: skip
    if abandoned:  # their threads run on, DBOS gone: the interpreter would wait for them
        sys.stdout.flush()
        os._exit(code)
    return code


def _lingering() -> bool:
    """Whether a thread the interpreter waits for at exit still runs once the queue has
    stopped: a job's, even one the store does not count as held — a workflow DBOS
    started as its queue stopped, before the job's start was stored. DBOS gone, such a
    thread may retry its next step for ever, and the exit with it."""
    deadline = time.monotonic() + THREAD_END_SECONDS
    for thread in threading.enumerate():
        if thread is threading.current_thread() or thread.daemon:
            continue
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            return True
    return False


def _mute_abandoned() -> None:
    """Silence the threads of the jobs handed back to the fleet: DBOS is gone, so the step
    each is in fails when it ends ("System database accessed before DBOS was launched"),
    a traceback that would follow our last line. Their jobs are the fleet's to run."""
    threading.excepthook = lambda _args: None
    logging.disable(logging.CRITICAL)


def _warm_then_ready(service: Service) -> None:
    """Index every served repository, then say the worker is ready (`--check`)."""
    service.warm()
    service.jobs.fleet.ready = True


@dataclass(frozen=True, slots=True)
class Health:
    ready: bool
    line: str


def health(
    executor: Executor | None, executor_id: str, *, takeover: float, now: datetime
) -> Health:
    """What `--check` says of this machine's worker, from its row in the fleet."""
    if executor is None:
        return Health(False, f"{executor_id}: not running (no heartbeat in the database)")
    if executor.stopped_at is not None:
        return Health(
            False, f"{executor_id}: stopped at {executor.stopped_at:%Y-%m-%d %H:%M:%S} UTC"
        )
    age = (now - executor.seen_at).total_seconds()
    where = f"pid {executor.pid} on {executor.host}"
    if age > takeover:
        return Health(False, f"{executor_id}: silent for {age:.0f} s ({where}): taken for dead")
    if not executor.ready:
        return Health(False, f"{executor_id}: alive ({where}), still indexing")
    return Health(True, f"{executor_id}: ready ({where}, seen {age:.1f} s ago)")


def check(settings: ServiceSettings) -> Health:
    """`--check`: this machine's worker's health, from its row in the database; a
    database that cannot be read is a health that says so, not a traceback."""
    executor_id = settings.executor()
    url = settings.database_url or default_database_url()
    engine = connect(url)  # a malformed URL: ConfigError, for the caller's one line
    try:
        member = Store(engine).executor(executor_id)
    except SQLAlchemyError as exc:
        lines = str(getattr(exc, "orig", None) or exc).strip().splitlines() or ["unreachable"]
        reason = scrub(lines[0], url)
        return Health(False, f"{executor_id}: the database cannot be read: {reason}")
    finally:
        engine.dispose()
    return health(member, executor_id, takeover=settings.takeover_seconds, now=utcnow())
