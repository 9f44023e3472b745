"""One run: the steps in order, driven by the explicit state machine
(`diagnoser.events`: `State`, `TRANSITIONS`, `Event`) to a terminal `Outcome` within ONE
timeout.

Blocking work never runs on the event loop: the blocking steps go to a worker thread
(`asyncio.to_thread`), and pydantic-ai runs its sync callbacks in threads of its own (the
tools, the offline model's replies, and the output validator with its grounding `check`,
which reads a few line ranges: cheap, but file I/O, so it is better there). The timeout
does not wait for a thread: one it abandons runs to its end in the background and is not
heard from again. Events are delivered on the caller's loop thread (`Recorder.soon`).

Failures: a model or formatter that fails ends the run `failed`, with the reason. Any
other exception (an intake error, a repository that cannot be indexed) is recorded as a
`failed` event and then raised to the caller, who maps it (`diagnoser.errors`). A run
the caller cancels ends with no terminal event: it did not end, it was stopped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic_ai.models.fallback import FallbackModel

from diagnoser.budget import RunLimits
from diagnoser.candidates import rank_candidates, uses_meaning
from diagnoser.constants import OFFLINE_MODEL, RUN_TIMEOUT_SECONDS
from diagnoser.events import TRANSITIONS, Event, Recorder, Sink, State
from diagnoser.finding import Finding, Localization, Reproduction, Suspect, TestStatus
from diagnoser.funnel import Funnel, Stage
from diagnoser.intake import Kind, Report, ReportIn, Trace
from diagnoser.models import RoleModels
from diagnoser.passages import BUDGET_SECONDS, pending
from diagnoser.pipeline.ground import ground_finding, triage_answered, triage_stage
from diagnoser.pipeline.investigation import funnel_of, investigate
from diagnoser.pipeline.report import intake, triage
from diagnoser.pipeline.step import INVESTIGATE, REVISE, STRUCTURE, StepFailed
from diagnoser.pipeline.structured import structure
from diagnoser.provenance import make_provenance
from diagnoser.suspects import SUSPECT_CANDIDATES, suspects
from diagnoser.triage import Triage
from diagnoser.usage import describe, record, total_cost, with_usage
from diagnoser.verify import Attempt, reproduce
from diagnoser.verify.fixes import check_fixes
from diagnoser.verify.fusion import fuse
from diagnoser.verify.probes import Probes
from diagnoser.verify.reproduce import at, best
from diagnoser.verify.revision import revise
from diagnoser.verify.trial import Trials
from diagnoser.workspace import Workspace
from repomap import allocator

__all__ = ["DEFAULT_TIMEOUT_SECONDS", "Outcome", "diagnose", "diagnose_async"]

DEFAULT_TIMEOUT_SECONDS = RUN_TIMEOUT_SECONDS
PLACED_KINDS = frozenset({Kind.FEATURE_REQUEST, Kind.QUESTION})
"""Kinds not investigated that still get ranked suspects: where a triager would look."""
PLACED_TITLE = "; ranked suspects only"
REPRODUCED_HEADING = "Traceback of a sandboxed run that reproduced this failure (diagnoser):"


@dataclass
class Outcome:
    state: State
    finding: Finding | None
    report: Report | None
    """The normalized report (None when the run ended before intake finished)."""
    reason: str = ""
    """Why a run `failed` or `timed_out`, in words."""
    events: list[Event] = field(default_factory=list)


def diagnose(
    report_in: ReportIn,
    workspace: Workspace,
    *,
    models: RoleModels | None = None,
    traces: Sequence[Trace] = (),
    sink: Sink | None = None,
    timeout: float | None = None,
    truncated: Sequence[str] = (),
    job_id: str | None = None,
) -> Outcome:
    """Run one diagnosis to a terminal state (blocking; see `diagnose_async`)."""
    return asyncio.run(
        diagnose_async(
            report_in, workspace, models=models, traces=traces, sink=sink, timeout=timeout,
            truncated=truncated, job_id=job_id,
        )
    )  # fmt: skip


async def diagnose_async(
    report_in: ReportIn,
    workspace: Workspace,
    *,
    models: RoleModels | None = None,
    traces: Sequence[Trace] = (),
    sink: Sink | None = None,
    timeout: float | None = None,
    truncated: Sequence[str] = (),
    job_id: str | None = None,
) -> Outcome:
    """Run one diagnosis to a terminal state within `timeout` seconds (default: the
    workspace's `Settings.timeout_seconds`), all steps included.

    `models` are the explorer's chain and the formatter (default: `offline`, no
    formatter: a report that drifted from the template fails the run; `resolve_models`
    gives a real explorer its own models as formatter when none is set); the request limit
    and funnel budgets are the workspace's `Settings`. `traces` and `truncated` are what
    a payload adapter returned with the report (`Intake`). `sink` is called with every
    `Event`, on this loop's thread; `job_id` is carried on each. Raises what intake or
    indexing raised (after a `failed` event); model failures and timeouts are outcomes,
    not exceptions."""
    run = Recorder(sink, job_id)
    job = _Job(report_in, workspace, models or RoleModels(), traces, truncated)
    if timeout is None:
        timeout = workspace.settings.timeout_seconds
    deadline = asyncio.timeout(timeout)
    try:
        async with deadline:
            return await _steps(run, job)
    except StepFailed as stop:
        run.move(State.FAILED, stop.detail)
        return Outcome(run.state, None, job.report, stop.reason, run.events)
    except TimeoutError:
        if not deadline.expired():  # raised by a step, not by our deadline
            _record_failure(run, "TimeoutError", "a step timed out")
            raise
        step = run.state.value
        run.move(State.TIMED_OUT, f"no result within {timeout:g} s (stopped in {step})")
        reason = f"timed out after {timeout:g} s in {step}"
        return Outcome(run.state, None, job.report, reason, run.events)
    except Exception as exc:
        _record_failure(run, type(exc).__name__, str(exc))
        raise
    finally:
        allocator.release()  # a run's indexes and messages: freed, and handed back


MEANING_NOTE = (
    "meaning: embedding the repository's functions for store reviews (once per revision; "
    f"a run waits {BUDGET_SECONDS:g} s at most, the rest goes on in the background)"
)


@dataclass
class _Job:
    """One run's inputs, and the report once intake made it."""

    report_in: ReportIn
    workspace: Workspace
    models: RoleModels
    traces: Sequence[Trace]
    truncated: Sequence[str]
    report: Report | None = None


async def _steps(run: Recorder, job: _Job) -> Outcome:
    workspace = job.workspace
    report = job.report = await asyncio.to_thread(
        intake, job.report_in, workspace, job.traces, job.truncated
    )
    verdict = report.classification
    run.move(State.CLASSIFIED, f"{verdict.kind.value} ({verdict.confidence:.2f})")
    for cut in report.truncated:  # said where a caller looks: the events, the CLI's progress
        run.note(f"intake cut {cut}")
    triaged = await triage(report, job.models.triage, workspace, on_note=run.note)
    report = job.report = report.model_copy(update={"classification": triaged.classification})
    kind = report.classification.kind
    if not report.classification.actionable:
        return await _not_investigated(run, job, report, triaged)
    attempt, reported = await _reproduce(run, job, report)
    mapped = sum(1 for f in reported.frames if f.in_app)
    run.move(State.MAPPED, f"{mapped} in-app frames of {len(reported.frames)}")
    _say_meaning(run, report, workspace)
    ranked = await asyncio.to_thread(rank_candidates, report, workspace, limit=SUSPECT_CANDIDATES)
    if reported is not report:  # a reproduced failure's traceback: both rankings, fused
        from_run = await asyncio.to_thread(
            rank_candidates, reported, workspace, limit=SUSPECT_CANDIDATES
        )
        ranked = fuse(ranked, from_run)[:SUSPECT_CANDIDATES]
        report = reported
    suspected = suspects(ranked)
    run.move(State.EXPLORING, f"model {job.models.explorer.name}")
    probes = _probes(job, report, attempt)
    investigation = await investigate(
        report, workspace, job.models.explorer, funnel=_follow(run, workspace),
        on_tool=lambda detail: run.soon(run.note, f"tool {detail}"), candidates=ranked,
        suspects=suspected, probe=probes,
    )  # fmt: skip
    if probes is not None and probes.attempts:  # the explorer's own reproducer may do better
        attempt = best([attempt, *probes.attempts])
    spent = record(investigation.usage)
    run.note(f"usage {INVESTIGATE}: {describe(spent, total_cost(investigation.costs))}", spent)
    if run.state is not State.REPORTING:  # the model wrote without passing every stage
        run.move(State.REPORTING, "report written")
    run.move(State.STRUCTURING, f"{len(investigation.markdown)} characters of report")
    structured = await structure(
        investigation.markdown, job.models.formatter, on_note=run.note,
        limits=RunLimits.of(workspace.settings), spent=investigation.usage,
    )  # fmt: skip
    if structured.formatter:
        spent = record(structured.usage)
        run.note(f"usage {STRUCTURE}: {describe(spent, total_cost(structured.costs))}", spent)
    found = structured.draft
    run.move(State.GROUNDING, f"{len(found.files)} locations, {len(found.changes)} changes")
    grounded = await asyncio.to_thread(
        ground_finding, structured, workspace, investigation, kind=kind,
        durations=dict(run.durations), suspected=suspected, triaged=triaged,
    )  # fmt: skip
    offline = investigation.model == OFFLINE_MODEL
    probed = probes.attempts if probes is not None else []
    grounded = await _test_fixes(run, grounded, attempt, job, templates=offline, probed=probed)
    tested = run.state is State.TESTING
    run.move(State.COMPLETE, grounded.status.value)
    said: dict[str, object] = {
        "localized_from": Localization.REPRODUCTION if attempt.traces else Localization.REPORT
    }
    if tested:  # the provenance was made before the testing step: its time too
        said["durations"] = dict(run.durations)
    grounded = grounded.model_copy(update={
        "triage": report.classification, "reproduction": attempt.reproduction,
        "provenance": grounded.provenance.model_copy(update=said),
    })  # fmt: skip
    return Outcome(run.state, grounded, report, events=run.events)


def _say_meaning(run: Recorder, report: Report, workspace: Workspace) -> None:
    """Before a store review's ranking, when the repository's functions are not all
    embedded yet: why the next step may take a while."""
    if uses_meaning(report, workspace) and pending(workspace):
        run.note(MEANING_NOTE)


async def _not_investigated(run: Recorder, job: _Job, report: Report,
                            triaged: Triage) -> Outcome:  # fmt: skip
    """A kind not investigated: a short Finding, with where a request or a question would
    land (the ranking alone: no model, no tool call)."""
    workspace, kind = job.workspace, report.classification.kind
    run.move(State.NOT_ACTIONABLE, "no investigation for this kind")
    placed: list[Suspect] = []
    if kind in PLACED_KINDS:
        _say_meaning(run, report, workspace)
        ranked = await asyncio.to_thread(rank_candidates, report, workspace,
                                         limit=SUSPECT_CANDIDATES)  # fmt: skip
        placed = suspects(ranked)
    title = f"{kind.value.replace('_', ' ')} — not investigated"
    title += PLACED_TITLE if placed else ""
    provenance = await asyncio.to_thread(
        make_provenance, workspace, dict(run.durations), answered=triage_answered(triaged),
        usage=triaged.usage, stages=triage_stage(triaged), priced=triaged.costs,
    )  # fmt: skip
    finding = Finding(classification=kind, title=title, provenance=provenance,
                      triage=report.classification, suspects=placed)  # fmt: skip
    return Outcome(run.state, finding, report, events=run.events)


async def _reproduce(run: Recorder, job: _Job, report: Report) -> tuple[Attempt, Report]:
    """The base gate, when the workspace's settings ask for it: the attempt, and the
    report to rank from (with the run's traceback when it reproduced the failure)."""
    if not job.workspace.settings.verify:
        return Attempt(Reproduction()), report
    run.move(State.REPRODUCING, "the report's reproducer, in a sandbox")
    attempt = await asyncio.to_thread(reproduce, report, job.workspace)
    tried = attempt.reproduction
    run.note(f"reproduction {tried.status.value}: {tried.reason}")
    if attempt.traces:  # the run's traceback: the frames to rank from
        report = job.report = await asyncio.to_thread(_rerun_intake, job, attempt, report)
    return attempt, report


def _probes(job: _Job, report: Report, attempt: Attempt) -> Probes | None:
    """The explorer's own reproducers, for a real model when verification is on and the
    report's did not reproduce the failure."""
    settings = job.workspace.settings
    if not settings.verify or attempt.bench is not None:
        return None
    if job.models.explorer.name == OFFLINE_MODEL:
        return None
    return Probes(report, job.workspace)


async def _test_fixes(run: Recorder, finding: Finding, attempt: Attempt, job: _Job,
                      *, templates: bool, probed: Sequence[Attempt] = ()) -> Finding:  # fmt: skip
    """The proposed changes run, when the failure was reproduced (else as they are); a
    real explorer's change that failed goes back to its model once (`revision`). The
    budget is what the reproduction (`probed`: the explorer's own runs too) left."""
    if attempt.bench is None:
        return finding
    run.move(State.TESTING, f"{len(finding.changes)} proposed changes")
    used = run.durations.get(State.REPRODUCING.value, 0.0) + sum(
        a.reproduction.seconds for a in probed
    )  # the sandbox's time so far, not the model's
    bench = attempt.bench.resumed(job.workspace.settings.verify_seconds - used)
    finding = await asyncio.to_thread(
        check_fixes, finding.model_copy(update={"reproduction": attempt.reproduction}),
        bench, job.workspace, templates=templates,
    )  # fmt: skip
    models = job.models.explorer.models
    if models and any(c.tested.status is TestStatus.FAILED for c in finding.changes):
        model = models[0] if len(models) == 1 else FallbackModel(*models)
        trials = Trials(job.workspace, bench)
        revised = await revise(finding, trials, model, on_note=run.note)
        spent = record(revised.usage)
        if spent.requests:
            run.note(f"usage {REVISE}: {describe(spent, total_cost(revised.priced))}", spent)
        finding = with_usage(revised.finding, REVISE, spent, revised.priced)
    for change in finding.changes:
        run.note(f"tested {change.path}: {change.tested.status.value} {change.tested.detail}")
    return finding


def _rerun_intake(job: _Job, attempt: Attempt, report: Report) -> Report:
    """The report with the reproducing run's traceback beside its text (for the explorer
    to read) and its frames as the ones mapped (for the ranking), classified as before."""
    before = f"{job.report_in.text}\n\n{REPRODUCED_HEADING}\n"
    traces = [at(trace, len(before)) for trace in attempt.traces]
    text = before + attempt.traceback
    rerun = intake(job.report_in.model_copy(update={"text": text}), job.workspace, traces,
                   job.truncated)  # fmt: skip
    return rerun.model_copy(update={"classification": report.classification})


def _follow(run: Recorder, workspace: Workspace) -> Funnel:
    """A funnel whose stage changes move the pipeline's state, on the loop thread."""
    states = {Stage.DEEP_DIVE: State.DEEP_DIVE, Stage.REPORT: State.REPORTING}

    def stage_changed(stage: Stage, why: str) -> None:
        if states[stage] in TRANSITIONS[run.state]:
            run.move(states[stage], why)

    funnel = funnel_of(workspace)
    funnel.listener = lambda stage, why: run.soon(stage_changed, stage, why)
    return funnel


def _record_failure(run: Recorder, kind: str, message: str) -> None:
    if not run.finished:
        run.move(State.FAILED, f"{kind}: {message}" if message else kind)
