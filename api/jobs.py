"""Durable diagnosis jobs on DBOS Transact: a queue with a concurrency limit, and a
workflow of three steps that each take and return plain values:

    prepare (stored input → report, fingerprint claim) → investigate (the pipeline)
            → finish (Finding stored, job ended)

DBOS records every step; a process killed mid-job re-runs the unfinished step on restart
(`api.queue.Jobs.launch` also hands the queue every job the database says is unfinished,
in case the process died between storing a job and queueing it). `Store.finish` ends a job once,
so a re-run never stores a second Finding. Every job ends in a terminal state with a
reason: an unexpected error ends it `failed`, the pipeline's timeout `timed_out`.

DBOS keeps its functions in a process-wide registry, so the workflow reads its
collaborators from the one `Runtime` that `api.queue.Jobs.launch` installs.

The queue's life in a process (launch, enqueue, stop) is `api.queue.Jobs`.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from dbos import DBOS, SetWorkflowID
from sqlalchemy.exc import OperationalError

from api import retention
from api.inputs import DIAGNOSE, read_input
from api.metrics import Metrics
from api.schemas import JobState
from api.settings import ServiceSettings
from api.store import Store
from api.store.transactions import utcnow
from diagnoser import DiagnoserError, Finding, State
from diagnoser.events import Event
from diagnoser.intake import Intake, IntakeError, ReportIn, report_fingerprint
from diagnoser.registry import Workspaces
from diagnoser.verify import Logs
from repomap import RepoMapError

if TYPE_CHECKING:  # PydanticAI loads only where jobs run (`api.preflight` resolves the
    # models at start, `investigate` imports the pipeline), never in a process that only
    # takes requests: a web worker of `serve --workers N`, `serve --no-jobs`
    from diagnoser.models import RoleModels

log = logging.getLogger(__name__)

APP_NAME = "diagnoser"
QUEUE = "diagnoses"
WORKFLOW = "diagnosis"
"""The workflow's registered name, by which a `DBOSClient` enqueues it."""
RETENTION_WORKFLOW = "retention"
"""The scheduled workflow enforcing the retention policy, and its schedule's name."""
STEP_ATTEMPTS = 3
"""Tries of a step that failed on a transient error (a locked or lost database)."""
OUTCOME_STATES = {
    State.COMPLETE: JobState.COMPLETE,
    State.NOT_ACTIONABLE: JobState.NOT_ACTIONABLE,
    State.FAILED: JobState.FAILED,
    State.TIMED_OUT: JobState.TIMED_OUT,
}


@dataclass
class Runtime:
    """What the workflow's steps work with."""

    store: Store
    workspaces: Workspaces
    settings: ServiceSettings
    models: RoleModels | None
    """The explorer's chain and the formatter, resolved at start (`resolve_models`); None
    in a process that runs no jobs."""
    metrics: Metrics


_installed: list[Runtime] = []
"""The launched runtime (at most one per process)."""


def install(runtime_: Runtime | None) -> None:
    """Make `runtime_` the one the steps read (None: none, after a stop)."""
    _installed[:] = [runtime_] if runtime_ is not None else []


def runtime() -> Runtime:
    if not _installed:
        raise RuntimeError("jobs are not launched (Jobs.launch)")
    return _installed[0]


@dataclass(frozen=True)
class Prepared:
    """A report ready to investigate (pickled by DBOS between steps)."""

    report: ReportIn
    intake: Intake


@dataclass(frozen=True)
class Preparation:
    """What `prepare` made of the stored input."""

    prepared: Prepared | None
    """The report to investigate; None when the job already ended."""
    parts: tuple[str, ...] = ()
    """Jobs made for the payload's other reports, for the workflow to queue (a step
    cannot start workflows)."""


@dataclass(frozen=True)
class Investigated:
    state: JobState
    reason: str
    finding_json: str | None


def _transient(exc: BaseException) -> bool:
    return isinstance(exc, OperationalError)


@DBOS.workflow(name=WORKFLOW)
def diagnosis(job_id: str) -> str:
    """One job, from its stored input to a terminal state. Outside any step, so each run
    of it (the first, a recovery, a takeover) records its attempt."""
    _record_attempt(job_id)
    try:
        preparation = prepare(job_id)
        for part_id in preparation.parts:
            enqueue(part_id)
        if preparation.prepared is None:
            return _state(job_id)
        result = investigate(job_id, preparation.prepared)
        return finish(job_id, result)
    except Exception as exc:  # a bug or a lost database: end it, saying so
        log.exception("job %s failed", job_id)
        reason = f"internal error ({type(exc).__name__}); the input is kept"
        return finish(job_id, Investigated(JobState.FAILED, reason, None))


def _record_attempt(job_id: str) -> None:
    try:
        runtime().store.start_attempt(job_id, DBOS.executor_id)
    except OperationalError:  # the record of who ran it is not worth failing the job
        log.warning("job %s: could not record its attempt", job_id)


@DBOS.step(retries_allowed=True, max_attempts=STEP_ATTEMPTS, should_retry=_transient)
def prepare(job_id: str) -> Preparation:
    """Stored input → the job's report (none when the job already ended: bad input, or
    an identical report's job answers it), and a job for each other report in it."""
    rt = runtime()
    job_input = rt.store.job_input(job_id)
    if not rt.store.move(job_id, JobState.RUNNING):  # ended already: nothing to redo
        return Preparation(None, ())
    try:
        intakes = read_input(job_input.source, job_input.raw, job_input.headers)
    except (IntakeError, ValueError) as exc:
        reason = f"the input was refused: {exc}"
        rt.store.reject_report(job_input.report_id, reason)
        rt.store.finish(job_id, JobState.FAILED, reason=reason)
        return Preparation(None)
    parts: list[str] = []
    if job_input.part == 0:
        for part in range(1, len(intakes)):  # a poll of several reviews: a job each
            part_id = str(uuid.uuid5(uuid.UUID(job_id), str(part)))  # the same on a re-run
            rt.store.new_job(
                repo=job_input.repo, report_id=job_input.report_id, part=part, job_id=part_id
            )
            parts.append(part_id)  # queued even if a re-run finds it made: enqueue is idempotent
    if job_input.part >= len(intakes):
        rt.store.finish(job_id, JobState.FAILED, reason="the payload holds fewer reports")
        return Preparation(None, tuple(parts))
    intake = intakes[job_input.part]
    if job_input.source != DIAGNOSE:  # /diagnose claimed in the request
        pinned = rt.workspaces.pinned_revision(job_input.repo, intake.report)
        workspace = rt.workspaces.get(job_input.repo, pinned)
        fingerprint = report_fingerprint(
            intake.report, traces=intake.traces, files=workspace.file_paths, revision=pinned
        )
        if rt.store.claim(job_id, fingerprint) is not None:
            return Preparation(None, tuple(parts))
    return Preparation(Prepared(report=intake.report, intake=intake), tuple(parts))


@DBOS.step()
def investigate(job_id: str, prepared: Prepared) -> Investigated:
    """The pipeline, to its terminal state, with every event stored as it happens."""
    rt = runtime()
    job = rt.store.job(job_id)
    assert job is not None
    if rt.store.events(job_id):
        rt.store.add_event(job_id, at=utcnow(), state="restarted", detail="after an interruption")

    def store_event(ev: Event) -> None:
        rt.store.add_event(job_id, at=ev.time, state=ev.state.value, detail=ev.detail)

    from diagnoser.pipeline import diagnose  # noqa: PLC0415 (see the imports above)

    assert rt.models is not None  # a process that runs jobs resolved them (`preflight`)
    try:
        pinned = rt.workspaces.pinned_revision(job.repo, prepared.report)
        workspace = rt.workspaces.get(job.repo, pinned)
        # Indexed first, as the CLI does; a start-up warm still running is waited for.
        workspace.warm()
        outcome = diagnose(
            prepared.report,
            workspace,
            models=rt.models,
            traces=prepared.intake.traces,
            truncated=prepared.intake.truncated,
            sink=store_event,
            job_id=job_id,
        )
    except (DiagnoserError, RepoMapError) as exc:  # a step refused (repo, report): it fails
        return Investigated(JobState.FAILED, str(exc), None)
    if outcome.finding is not None:  # here, on the worker whose data directory holds them
        rt.store.keep_run_logs(job_id, run_logs(outcome.finding))
    finding = outcome.finding.model_dump_json() if outcome.finding else None
    return Investigated(OUTCOME_STATES[outcome.state], outcome.reason, finding)


@DBOS.step(retries_allowed=True, max_attempts=STEP_ATTEMPTS, should_retry=_transient)
def finish(job_id: str, result: Investigated) -> str:
    rt = runtime()
    finding = Finding.model_validate_json(result.finding_json) if result.finding_json else None
    done = rt.store.finish(
        job_id, result.state, reason=result.reason, finding=finding,
        window=rt.settings.dedupe_window_seconds,
    )  # fmt: skip
    if finding is not None and done.finding_id:
        rt.metrics.observe_finding(finding)
    return done.state.value


def run_logs(finding: Finding) -> dict[str, str]:
    """The logs `finding` references, from this process's data directory (the one that ran
    them, in this step)."""
    refs = [finding.reproduction.log, *(change.tested.log for change in finding.changes)]
    found = {ref: Logs().load(ref) for ref in refs if ref}
    return {ref: text for ref, text in found.items() if text is not None}


@DBOS.workflow(name=RETENTION_WORKFLOW)
def retention_sweep(_scheduled_at: datetime, _context: object) -> None:
    """The retention policy, enforced (scheduled every `retention.SWEEP_CRON`)."""
    sweep()


@DBOS.step(retries_allowed=True, max_attempts=STEP_ATTEMPTS, should_retry=_transient)
def sweep() -> int:
    """Remove what the retention policy says has to go; how many inputs went."""
    rt = runtime()
    swept = retention.enforce(rt.store, retention.Policy.of(rt.settings), now=utcnow())
    if swept.removed:
        log.info("retention: %d inputs removed, %d bytes kept", swept.removed, swept.kept_bytes)
    return swept.removed


def _state(job_id: str) -> str:
    job = runtime().store.job(job_id)
    return job.state.value if job else JobState.FAILED.value


def enqueue(job_id: str) -> None:
    """Hand a stored job to the queue (idempotent: the job id is the workflow id)."""
    with SetWorkflowID(job_id):
        DBOS.enqueue_workflow(QUEUE, diagnosis, job_id)


def recover(executor_ids: list[str]) -> int:
    """Put the unfinished workflows of dead or stopped executors back on the queue (DBOS's
    recovery; idempotent, and exactly one live executor dequeues each); how many."""
    # DBOS documents it as internal: its admin API and Conductor call it (`api.fleet`).
    return len(DBOS._recover_pending_workflows(executor_ids))
