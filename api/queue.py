"""The job queue in one process: DBOS launched (a runner) or only a client (a process
that answers requests), from `claim` and `launch` at start to `shutdown` at the end. The
workflow it runs is `api.jobs`.

A process that runs jobs (`Jobs(runner=True)`: `diagnoser serve`, `diagnoser worker`)
is a DBOS executor named by `DIAGNOSER_EXECUTOR_ID` (`diagnoser.executor`): it dequeues,
at launch recovers what it left unfinished under that name, and belongs to the fleet
(`api.fleet`), which takes over the jobs of a runner that died or stopped. On PostgreSQL
any number of runners share the queue; on SQLite (one machine) a second is refused at
start. A process that only answers requests (`serve --no-jobs`, the web workers of
`serve --workers N`) only enqueues (`runner=False`): a `DBOSClient` writes the workflow
to DBOS's system database by name, with no DBOS launched in it.

On PostgreSQL DBOS keeps its tables in the app's own database, so a new job's workflow
is written in the transaction that stores the job (`Jobs.enqueue_in`, through a client on
the store's engine): one commit per accepted report instead of two, and a job is never
stored without being queued. SQLite keeps DBOS in a file of its own: a second transaction.

The runner also enforces the retention policy (`api.retention`): a DBOS scheduled
workflow (`DBOS.apply_schedules`, which works on either system database), so a sweep
missed while the process was down is not replayed, and with several runners a sweep
time runs once (its workflow id is the schedule's time).
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from typing import Any

from dbos import DBOS, DBOSClient, EnqueueOptions, WorkflowStatusString
from dbos import _dbos as dbos_instance
from sqlalchemy import Connection, Engine, create_engine, event

from api import retention
from api.database import SQLITE_PRAGMAS, is_sqlite, normalise_url
from api.fleet import Fleet
from api.jobs import (
    APP_NAME,
    QUEUE,
    RETENTION_WORKFLOW,
    WORKFLOW,
    Runtime,
    enqueue,
    install,
    recover,
    retention_sweep,
)
from api.schemas import JobState
from diagnoser import ConfigError

POLL_SECONDS = 0.25
"""How often an idle worker looks at the queue (a new job waits at most this long)."""
LEGACY_EXECUTOR = "local"
"""DBOS's default executor id, every runner's before the fleet: a runner recovers what
one left unfinished."""
RUNNER_LOCK = "runner.lock"
"""In an SQLite database's folder: held by the one process that runs its jobs."""
UNFINISHED_WORKFLOWS = [WorkflowStatusString.ENQUEUED.value, WorkflowStatusString.PENDING.value]
"""Workflows DBOS may be running, or start before its queue stops: a stop waits for them."""
NOTIFICATION_POLL_SECONDS = 0.1
"""How often DBOS's listener looks for notifications on SQLite (PostgreSQL notifies): a
stop waits for its sleep to end (DBOS's default, 1 s, made every stop take ~1 s)."""
DRAIN_POLL_SECONDS = 0.05
"""How often a stop looks whether the workflows running here have ended (`_drain`)."""


class Jobs:
    """The queue's lifecycle in one process: `claim` and `launch` at start, `shutdown` at
    the end. A runner dequeues and runs jobs; otherwise (a process that only answers
    requests) it only enqueues them. `role` names what the runner is in the fleet:
    `serve` (it answers requests too) or `worker`."""

    def __init__(
        self, runtime_: Runtime, *, database_url: str, data_dir: Path, runner: bool = True,
        sweep_cron: str = retention.SWEEP_CRON, role: str = "serve",
    ) -> None:  # fmt: skip
        self.runtime = runtime_
        self.sweep_cron = sweep_cron
        """When the runner enforces the retention policy (DBOS cron, seconds first)."""
        self.database_url = database_url
        self.data_dir = data_dir
        self.runner = runner
        self.launched = False
        settings = runtime_.settings
        self.executor_id = settings.executor()
        self.fleet = Fleet(
            runtime_.store, self.executor_id, role=role,
            takeover_seconds=settings.takeover_seconds, recover=recover,
        )  # fmt: skip
        self._client: DBOSClient | None = None
        self._client_engine: Engine | None = None
        self._in_transaction: DBOSClient | None = None
        self._lock: int | None = None
        self._claimed = False
        """`claim` passed: `launch` need not ask again (until `shutdown` lets go)."""

    def claim(self) -> None:
        """Refuse, with ConfigError, to run jobs where another runner may not be joined:
        a second runner of one SQLite database, or a live process under this executor id
        (a no-op for a process that only enqueues)."""
        if not self.runner or self._claimed:
            return
        if is_sqlite(normalise_url(self.database_url)):
            self._lock = _sole_runner(self.data_dir)
        self.fleet.check()
        self._claimed = True

    @property
    def transactional(self) -> bool:
        """A new job can be queued in the transaction that stores it (`enqueue_in`):
        DBOS's tables are in the app's database (PostgreSQL)."""
        return self._in_transaction is not None

    def launch(self) -> None:
        config = self._config()
        if self.runner:
            self.claim()
            install(self.runtime)
            limits = self._queue_limits()
            _declare_queue(config, limits)
            DBOS(config=config)
            DBOS.launch()
            # Now DBOS's own rule for a queue's settings in a rolling deploy: the latest
            # application version's win.
            DBOS.register_queue(QUEUE, **limits)
            DBOS.apply_schedules([{
                "schedule_name": RETENTION_WORKFLOW, "workflow_fn": retention_sweep,
                "schedule": self.sweep_cron,
            }])  # fmt: skip
        if not is_sqlite(config["system_database_url"]):
            # On the store's own engine: its connections are the ones `enqueue_in` gets,
            # and DBOS then runs its insert precompiled (it compiles it on every call for
            # a connection of another engine). DBOS leaves an engine it was given open.
            self._in_transaction = DBOSClient(
                system_database_engine=self.runtime.store.engine, application_name=APP_NAME
            )
            if not self.runner:
                self._client = self._in_transaction
        elif not self.runner:
            self._client_engine = config["system_database_engine"]
            self._client = client_for(config)
        self.launched = True
        if self.runner:
            self.fleet.join()
            if self.executor_id != LEGACY_EXECUTOR:
                recover([LEGACY_EXECUTOR])
            self.requeue()

    def requeue(self) -> None:
        """Hand the queue every job the database says is unfinished (enqueue is
        idempotent): one stored by a process that died before it enqueued it."""
        for job_id in self.runtime.store.unfinished():
            self.enqueue(job_id)

    def enqueue(self, job_id: str) -> None:
        """Hand a stored job to the queue (idempotent: the job id is the workflow id)."""
        if self._client is None:
            enqueue(job_id)
            return
        self._client.enqueue(_options(job_id), job_id)

    def enqueue_in(self, connection: Connection, job_id: str) -> None:
        """Queue a job in the caller's open transaction on the store's database, which
        commits it (only when `transactional`)."""
        if self._in_transaction is None:
            raise RuntimeError("this database cannot queue a job in the store's transaction")
        self._in_transaction.enqueue_in_transaction(connection, _options(job_id), job_id)

    def shutdown(self) -> None:
        if self._in_transaction is not None:
            self._in_transaction.destroy()
        if self._client is not None and self._client is not self._in_transaction:
            self._client.destroy()
            if self._client_engine is not None:  # ours: the client leaves it open
                self._client_engine.dispose()
        if self.runner and self.launched:
            # The queue takes no new job; the running ones get the grace to end. Without
            # one, a running workflow outlives DBOS and fails on its next step ("System
            # database accessed before DBOS was launched"), in a traceback, or retries for
            # ever to record its end. `_drain` waits in short steps while any runs here.
            # Meanwhile this runner beats on (the fleet must not take its running jobs)
            # but takes over no more.
            self.fleet.retire()
            left = self._drain(self.runtime.settings.stop_grace_seconds)
            DBOS.destroy(destroy_registry=False, workflow_completion_timeout_sec=int(left))
            self.fleet.leave()  # what is still running here is the fleet's to take
        if self._lock is not None:
            os.close(self._lock)  # closing the file releases its lock
            self._lock = None
        self._claimed = False
        self._client = self._in_transaction = self._client_engine = None
        self.launched = False
        install(None)

    def held(self) -> int:
        """Jobs this runner started last and that have not ended: after a stop, the ones
        it handed back to the fleet."""
        return self.runtime.store.held(self.executor_id)

    def _unfinished(self) -> bool:
        """Whether DBOS may still run a workflow here: a job the store calls queued (it
        may start until the queue stops) or running, or a workflow whose end DBOS has not
        yet recorded (a job the store calls finished is, for a moment). The store first:
        DBOS retries its own queries until the database answers."""
        counts = self.runtime.store.job_counts()
        if counts.get(JobState.QUEUED.value) or counts.get(JobState.RUNNING.value):
            return True
        unfinished = DBOS.list_workflows(
            status=UNFINISHED_WORKFLOWS, limit=1, load_input=False, load_output=False
        )
        return bool(unfinished)

    def _drain(self, seconds: float) -> float:
        """Stop DBOS's queue (no workflow starts here any more) and wait, up to `seconds`,
        for the workflows running here to end, looking every DRAIN_POLL_SECONDS; what is
        left for DBOS's own wait (0 once they ended or the grace is spent). DBOS's wait
        sleeps a whole second before it first looks: a job that ended 0.1 s into a stop
        held the stop for 1 s. A workflow runs here while DBOS counts it active, or while
        it is PENDING under this executor (dequeued, not yet counted: DBOS hands it to a
        thread after the claim). This reads DBOS's internals (3.4: its background
        threads' stop events, its set of active workflows); without them, DBOS waits
        the whole grace, in whole seconds, when a workflow may run (`_unfinished`)."""
        dbos = dbos_instance._dbos_global_instance
        stops = getattr(dbos, "background_thread_stop_events", None)
        active = getattr(dbos, "_active_workflows_set", None)
        if stops is None or active is None:
            return seconds if self._unfinished() else 0.0
        for stop in stops:  # what DBOS's destroy does first
            stop.set()

        def running() -> bool:
            return bool(active.activeList()) or bool(DBOS.list_workflows(
                status=WorkflowStatusString.PENDING.value, executor_id=self.executor_id,
                limit=1, load_input=False, load_output=False,
            ))  # fmt: skip

        deadline = time.monotonic() + seconds
        while running() and time.monotonic() < deadline:
            time.sleep(DRAIN_POLL_SECONDS)
        return 0.0

    def _queue_limits(self) -> dict[str, Any]:
        settings = self.runtime.settings
        return {
            "worker_concurrency": settings.job_concurrency,
            "global_concurrency": settings.fleet_concurrency,
            "polling_interval_sec": POLL_SECONDS,
        }

    def _config(self) -> Any:
        url = normalise_url(self.database_url)
        config: dict[str, Any] = {
            "name": APP_NAME, "log_level": "WARNING", "executor_id": self.executor_id,
            "notification_listener_polling_interval_sec": NOTIFICATION_POLL_SECONDS,
        }  # fmt: skip
        if is_sqlite(url):
            system = f"sqlite:///{self.data_dir / 'dbos.sqlite'}"
            config["system_database_url"] = system
            config["system_database_engine"] = _sqlite_engine(system)
        else:  # DBOS keeps its tables in their own schema of the same database
            config["system_database_url"] = url
        return config


def client_for(config: Any) -> DBOSClient:
    """A DBOS client on the system database of `config` (`Jobs._config`): its URL, and
    its engine where we make it (SQLite's)."""
    return DBOSClient(
        system_database_url=config["system_database_url"],
        system_database_engine=config.get("system_database_engine"),
        application_name=APP_NAME,
    )


def _declare_queue(config: Any, limits: dict[str, Any]) -> None:
    """Make DBOS's system database, and our queue in it if it has none, before DBOS
    launches. DBOS's queue thread looks for new queues at launch and then once a second:
    a queue registered after launch got its worker up to a second later, and a new
    database's first job waited that long. An existing queue is left as it is here."""
    DBOS.migrate(config["system_database_url"])
    client = client_for(config)
    try:
        client.register_queue(QUEUE, **limits, on_conflict="never_update")
    finally:
        client.destroy()


def _sole_runner(data_dir: Path) -> int:
    """Hold the SQLite database folder's runner lock (its descriptor); ConfigError when
    another process holds it. The kernel releases it when this process ends, however."""
    data_dir.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(data_dir / RUNNER_LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        raise ConfigError(
            f"another process runs the jobs of the SQLite database in {data_dir}: SQLite "
            "is one machine's, one job runner's; stop it, start this one with --no-jobs, "
            "or put the fleet on PostgreSQL (DIAGNOSER_DATABASE_URL)"
        ) from None
    return descriptor


def _options(job_id: str) -> EnqueueOptions:
    return {"queue_name": QUEUE, "workflow_name": WORKFLOW, "workflow_id": job_id}


def _sqlite_engine(url: str) -> Engine:
    engine = create_engine(url, connect_args={"check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _pragmas(connection: Any, _record: Any) -> None:
        cursor = connection.cursor()
        for pragma in SQLITE_PRAGMAS:
            cursor.execute(pragma)
        cursor.close()

    return engine
