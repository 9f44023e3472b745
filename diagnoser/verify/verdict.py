"""The base gate: did a run fail the way the report says? (pure; fail-closed)

`reproduced` needs all of: the run raised; its exception is of a type the report names
(its traceback's, or an exception name in its text — `KeyError`, `ValueError: …`; an
`…Exception` the reporter wrote for an `…Error` counts); and a frame of the run's traceback
lies in the repository. A report whose traceback was cut before its exception line (the
names in its prose may be causes, not the failure) is matched by place instead: the run
fails in a repository function that traceback shows. A named failing test that fails is
what its report says when the report names no exception. Anything
else that failed is `different_failure`, with why; a clean exit is `not_reproduced`; a
sandbox that could not start, or a runtime that lacks what the code imports (an import
error the report does not name) or lacks pytest, is `error`.
"""

from __future__ import annotations

import re
import signal
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from diagnoser.finding import ReproducerSource, ReproductionStatus, RunFrame
from diagnoser.intake import Report, Trace
from diagnoser.intake.intake import exception_chain
from diagnoser.intake.mapping import map_frames
from diagnoser.intake.report import TraceFormat
from diagnoser.intake.traces import find_traces
from diagnoser.verify.sandbox import SandboxRun

_NAMED_EXCEPTION = re.compile(
    r"\b(?:[a-z_][\w]*\.)*(?P<name>[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning|Failure|Fault)"
    r"|StopIteration|KeyError|IndexError)\b"
)
TEST_NOT_FOUND = frozenset({4, 5})
"""A test runner's exit statuses for a usage or build error and for no test collected
(pytest's, and `JavaRunner`'s)."""
SANDBOX_FAILED = "bwrap:"
PYTHON_FORMATS = frozenset({TraceFormat.PYTHON.value})
SHOWN_CHARS = 300
"""Of a run's output, quoted in a reason."""
DIFFERENT = ReproductionStatus.DIFFERENT_FAILURE
IMPORT_ERRORS = frozenset({"ModuleNotFoundError", "ImportError"})
EXCEPTION_ENDINGS = ("Exception", "Error")
NOT_RUNNABLE = frozenset({126, 127})
"""A shell's statuses for a command that is not executable or not found."""
SIGNAL_EXIT = 128
MAX_SIGNAL = 64
LIMIT_SIGNALS: dict[int, str] = {
    signal.SIGKILL: "killed (memory, process or time limit)",
    signal.SIGXCPU: "over its CPU-time limit",
    signal.SIGXFSZ: "over its file-size limit",
    signal.SIGSEGV: "crashed (segmentation fault)",
}


@dataclass(frozen=True, slots=True)
class Verdict:
    status: ReproductionStatus
    reason: str
    exception: str = ""
    """The run's exception line (`KeyError: 'name'`)."""
    frames: tuple[RunFrame, ...] = ()
    """The run's frames in the repository, outermost first."""
    traces: tuple[Trace, ...] = ()
    """The run's Python traces (for intake to re-rank from)."""


def judge(
    run: SandboxRun, report: Report, files: Collection[str], source: ReproducerSource,
    formats: Collection[str] = PYTHON_FORMATS,
) -> Verdict:  # fmt: skip
    """The run's verdict against the report's failure; `formats`: the trace formats the
    run's language prints."""
    if run.exit_code != 0 and run.output.startswith(SANDBOX_FAILED):
        return Verdict(ReproductionStatus.ERROR, f"the sandbox failed: {_shown(run.output)}")
    traces = _distinct(t for t in find_traces(run.output).traces if t.format.value in formats)
    chain = exception_chain(traces)
    top = chain[-1].exception if chain and chain[-1].exception else None
    raised = (top.type or "") if top else ""
    line = f"{raised}: {top.message}" if top and top.message else raised
    frames = tuple(_in_repository(chain, files))
    if run.timed_out:
        why = f"did not finish within {run.seconds:.0f} s (killed)"
        return Verdict(DIFFERENT, why, line, frames, traces)
    if not raised:
        return _without_traceback(run, source)
    status, why = _raised(raised, line, frames, report, source)
    return Verdict(status, why, line, frames, traces)


def _raised(raised: str, line: str, frames: tuple[RunFrame, ...], report: Report,
            source: ReproducerSource) -> tuple[ReproductionStatus, str]:  # fmt: skip
    """The verdict on a run that raised `raised` (its exception line `line`)."""
    kind, named = _base(raised), expected_exceptions(report)
    if kind in IMPORT_ERRORS and kind not in named:
        return ReproductionStatus.ERROR, (
            f"the runtime lacks what the code imports ({line}); give DIAGNOSER_VERIFY_PYTHON "
            "an interpreter with the project's dependencies"
        )
    if not frames:
        return DIFFERENT, f"raised {raised}, but no frame of its traceback is in the repository"
    if _stem(kind) in {_stem(name) for name in named}:
        return ReproductionStatus.REPRODUCED, f"raised {raised} in {frames[-1].path}"
    shared = _shared_place(frames, report) if not _trace_exceptions(report) else ""
    if shared:  # the report's traceback lost its exception line: its place must match
        return ReproductionStatus.REPRODUCED, (
            f"raised {raised} in {shared}, where the report's traceback fails too"
        )
    if not named and source is ReproducerSource.NAMED_TEST:
        return ReproductionStatus.REPRODUCED, f"the named test fails: {raised} in {frames[-1].path}"
    says = ", ".join(sorted(named)) if named else "no exception to compare with"
    return DIFFERENT, f"raised {raised}; the report names {says}"


def _shared_place(frames: tuple[RunFrame, ...], report: Report) -> str:
    """A function of the repository on both the run's and the report's traceback
    (`path:function`), the innermost; "" when they share none."""
    theirs = {(f.repo_path, f.frame.function) for f in report.frames if f.in_app and f.repo_path}
    for frame in reversed(frames):
        if (frame.path, frame.function) in theirs:
            return f"{frame.path}:{frame.function}"
    return ""


def _trace_exceptions(report: Report) -> set[str]:
    """The exception types the report's own tracebacks end with."""
    return {t.exception.type for t in report.traces if t.exception and t.exception.type}


def _stem(name: str) -> str:
    """An exception name without its `Error` / `Exception` ending: reporters write one
    for the other (`UndefinedException` for `UndefinedError`)."""
    for ending in EXCEPTION_ENDINGS:
        if name.endswith(ending) and len(name) > len(ending):
            return name[: -len(ending)]
    return name


def expected_exceptions(report: Report) -> frozenset[str]:
    """Exception type names (last dotted part) the report's traceback or text names."""
    names = {_base(report.exception.type)} if report.exception and report.exception.type else set()
    names |= {_base(t.exception.type) for t in report.traces if t.exception and t.exception.type}
    text = f"{report.title or ''}\n{report.text}"
    names |= {m["name"] for m in _NAMED_EXCEPTION.finditer(text)}
    return frozenset(names)


def _without_traceback(run: SandboxRun, source: ReproducerSource) -> Verdict:
    if run.exit_code == 0:
        return Verdict(ReproductionStatus.NOT_REPRODUCED, "ran to the end without failing")
    code = run.exit_code
    if source is ReproducerSource.NAMED_TEST and code in TEST_NOT_FOUND:
        if "No module named pytest" in run.output:
            return Verdict(ReproductionStatus.ERROR, "the runtime has no pytest")
        why = f"the tests could not be built or found here (exit {code}): {_shown(run.output)}"
        return Verdict(ReproductionStatus.ERROR, why)
    if code in NOT_RUNNABLE:
        why = f"the command could not start (exit {code}): {_shown(run.output)}"
        return Verdict(ReproductionStatus.ERROR, why)
    killed_by = _signal(code)
    if killed_by:
        why = LIMIT_SIGNALS.get(killed_by, f"killed by signal {killed_by}")
        return Verdict(DIFFERENT, f"{why}, with no traceback")
    return Verdict(DIFFERENT, f"exited with status {code}, with no traceback")


def _shown(output: str) -> str:
    return output.strip()[:SHOWN_CHARS]


def _signal(exit_code: int) -> int | None:
    """The signal that ended a run: a negative status (ours), or 128 + N (a shell's,
    bubblewrap's)."""
    if exit_code < 0:
        return -exit_code
    if SIGNAL_EXIT < exit_code <= SIGNAL_EXIT + MAX_SIGNAL:
        return exit_code - SIGNAL_EXIT
    return None


def _distinct(traces: Iterable[Trace]) -> tuple[Trace, ...]:
    """`traces` without repeats: a runner that prints a failure again in its summary
    (Node's) shows one failure, not a chain of two."""
    seen: dict[tuple[object, ...], Trace] = {}
    for trace in traces:
        raised = (trace.exception.type, trace.exception.message) if trace.exception else ()
        frames = tuple((f.file, f.line, f.function) for f in trace.frames)
        seen.setdefault((*raised, frames), trace)
    return tuple(seen.values())


def _in_repository(chain: list[Trace], files: Collection[str]) -> list[RunFrame]:
    """The frames of the chain's exceptions that are repository files, outermost first: by
    their path, or — a JVM frame names only its file (`Cart.java`) — by their class."""
    every = [frame for trace in chain for frame in trace.frames]
    jvm = [f for f in every if "/" not in (f.file or "").removeprefix("./") and f.module]
    by_class = {id(f): m.repo_path for f, m in zip(jvm, map_frames(jvm, files), strict=True)}
    frames: list[RunFrame] = []
    for frame in every:
        path = by_class.get(id(frame)) or (frame.file or "").removeprefix("./")
        if path in files and frame.line:
            frames.append(RunFrame(path=path, line=frame.line, function=frame.function))
    return frames


def _base(name: str) -> str:
    return name.rsplit(".", 1)[-1]
