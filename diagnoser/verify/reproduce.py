"""`reproduce`: the base gate of one diagnosis — run the report's reproducers in the
sandbox, each in a fresh throwaway copy, and say whether the failure was reproduced.

Off unless the workspace's settings say `verify`; never unsandboxed (no bubblewrap: not
attempted, with why). One attempt per reproducer source (a named test, then a snippet),
all within `Settings.verify_seconds`; the first that reproduces ends it, else the most
telling result stands (a different failure over a clean run over an error). Each run's
log is stored (`Logs`) and referenced from the result. Blocking: call it off the loop.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from diagnoser.finding import Reproduction, ReproductionStatus
from diagnoser.intake import Report, Trace
from diagnoser.verify.logs import Logs
from diagnoser.verify.reproducer import Reproducer, find_reproducers
from diagnoser.verify.runner import Runner, RuntimeMissing, find_runner, prepare
from diagnoser.verify.sandbox import Limits, Sandbox, SandboxUnavailable
from diagnoser.verify.scratch import Scratch, ScratchTooLarge
from diagnoser.verify.trial import Bench
from diagnoser.verify.verdict import judge
from diagnoser.workspace import Workspace

NO_REPRODUCER = (
    "the report carries no reproducer: no failing test it names (tests/x.py::test_y, a "
    "JUnit CartTest.total, a node:test file) and no runnable Python code (or JavaScript, "
    "in a repository that has some)"
)
MIN_RUN_SECONDS = 5.0
"""A run given less than this is not started (the budget is spent)."""
PREFERENCE = (
    ReproductionStatus.REPRODUCED, ReproductionStatus.DIFFERENT_FAILURE,
    ReproductionStatus.NOT_REPRODUCED, ReproductionStatus.ERROR,
    ReproductionStatus.NOT_ATTEMPTED,
)  # fmt: skip
"""Which result stands when several reproducers ran: the most telling first."""


@dataclass(frozen=True, slots=True)
class Attempt:
    reproduction: Reproduction
    traces: tuple[Trace, ...] = ()
    """The reproducing run's traces (empty unless `reproduced`), their offsets in
    `traceback`: intake ranks from them."""
    traceback: str = ""
    """Their text, as the run printed it (paths repository-relative)."""
    bench: Bench | None = None
    """What reproduced it, to check proposed changes with (`trial.Trials`)."""


def reproduce(report: Report, workspace: Workspace, *, home: Path | None = None) -> Attempt:
    """Try the report's reproducers at the workspace's tree; `home`: the data directory."""
    settings = workspace.settings
    if not settings.verify:
        return Attempt(Reproduction())
    reproducers = find_reproducers(report.text, workspace.file_paths)
    if not reproducers:
        return _not_attempted(NO_REPRODUCER)
    return run_reproducers(reproducers, report, workspace, seconds=settings.verify_seconds,
                           home=home)  # fmt: skip


def run_reproducers(reproducers: Sequence[Reproducer], report: Report, workspace: Workspace,
                    *, seconds: float, home: Path | None = None) -> Attempt:  # fmt: skip
    """Run `reproducers` in order within `seconds`, until one reproduces the failure;
    the most telling result."""
    settings = workspace.settings
    limits = Limits(
        seconds=settings.verify_run_seconds, cpu_seconds=max(1, int(settings.verify_run_seconds)),
        memory_bytes=settings.verify_memory_bytes, processes=settings.verify_processes,
    )  # fmt: skip
    try:
        sandbox = Sandbox.find(limits)
    except SandboxUnavailable as exc:
        return _not_attempted(str(exc))
    deadline = time.monotonic() + seconds
    results: list[Attempt] = []
    runners: dict[str, Runner | RuntimeMissing] = {}  # one probe of each runtime
    for reproducer in reproducers:
        left = deadline - time.monotonic()
        if left < MIN_RUN_SECONDS:
            break
        if reproducer.language not in runners:
            try:
                runners[reproducer.language] = find_runner(reproducer.language, settings)
            except RuntimeMissing as exc:
                runners[reproducer.language] = exc
        runner = runners[reproducer.language]
        if isinstance(runner, RuntimeMissing):
            results.append(_not_attempted(str(runner)))
            continue
        bench = Bench(sandbox.within(left), runner, reproducer, deadline, home)
        results.append(_attempt(bench, report, workspace))
        if results[-1].reproduction.status is ReproductionStatus.REPRODUCED:
            break
    if not results:
        return _not_attempted(f"no time left of the {seconds:g} s budget")
    return best(results)


def best(attempts: Sequence[Attempt]) -> Attempt:
    """The most telling of several attempts (`PREFERENCE`; the first of equals)."""
    return min(attempts, key=lambda a: PREFERENCE.index(a.reproduction.status))


def _attempt(bench: Bench, report: Report, workspace: Workspace) -> Attempt:
    reproducer, runner, home = bench.reproducer, bench.runner, bench.home
    files = workspace.file_paths
    try:
        with Scratch(home).copy(workspace) as copy:
            ready = prepare(runner, reproducer, copy, files)
            run = bench.sandbox.run(
                ready.command, copy=copy, binds=runner.binds(), env=ready.environment
            )
    except RuntimeMissing as exc:
        return _not_attempted(str(exc))
    except (ScratchTooLarge, SandboxUnavailable, OSError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return Attempt(Reproduction(status=ReproductionStatus.ERROR, reason=why,
                                    source=reproducer.source))  # fmt: skip
    shown = shlex.join(ready.command)
    verdict = judge(run, report, files, reproducer.source, runner.trace_formats)
    log = Logs(home).save(shown, run.output)
    reproduction = Reproduction(
        status=verdict.status, reason=verdict.reason, source=reproducer.source, command=shown,
        exception=verdict.exception, frames=list(verdict.frames), seconds=round(run.seconds, 2),
        log=log,
    )  # fmt: skip
    if verdict.status is not ReproductionStatus.REPRODUCED or not verdict.traces:
        return Attempt(reproduction)
    start = verdict.traces[0].start
    traceback = run.output[start : verdict.traces[-1].end]
    return Attempt(reproduction, tuple(at(t, -start) for t in verdict.traces), traceback, bench)


def at(trace: Trace, shift: int) -> Trace:
    """`trace` with its offsets moved by `shift` characters (into another text)."""
    return trace.model_copy(update={"start": trace.start + shift, "end": trace.end + shift})


def _not_attempted(reason: str) -> Attempt:
    return Attempt(Reproduction(status=ReproductionStatus.NOT_ATTEMPTED, reason=reason))
