"""The trace's frames as candidates: which in-app frames, and in what order.

The frames are the strongest signal (`diagnoser.candidates` puts them before every other
place): the in-app frames of the trace, innermost first, at most FRAMES_PER_FILE a file
(`frame_candidates`) — without a Go panic's deferred handlers (the frames printed above
the runtime's `panic`, not on the failing path) or the thrown error's own constructor
(`at new ObjectParameterError`: a JavaScript error records its stack there). Then
`ordered_frames` orders their files by a prior: depth decay, lifted by the headline's
relevance, a file of input checks after the others — every frame of it named like one
(`check_array`, `_check_X`, `Validate.notNull`, `requireNonNull`, `ensure_str`): the
caller passed the bad value — unless the check itself crashed on a null value (it is
broken, not checking), and so does the frame that handed the check its own parameter
as it came; a frame file whose code never mentions the function its frames name
(another release) goes after the frames that resolve. Where a file lives (`utils/`,
`helpers/`, `common/`) says nothing: such folders hold product code as often as checks
(UTILITY_PENALTY is 0). What
the crash site says moves places too (`diagnoser.crash_site`): a null dereference of a
*parameter itself* puts the caller first (the value came from there), and when the
failing line is an explicit raise under an `if`, the functions that computed what the
condition tests come right after it (the check is often right, its input wrong).

    frames = frame_candidates(report, index)
    frames, priors = ordered_frames(report, frames, workspace, headline=relevance.headline)
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import replace
from itertools import dropwhile

from diagnoser.candidate import CONTEXT_LINES, Candidate, Source, span
from diagnoser.crash_site import (
    CrashSite,
    argument_check,
    crash_site,
    forwards_to_check,
    guard_inputs,
    makes_exception,
    null_argument,
    null_member,
)
from diagnoser.errors import ToolError
from diagnoser.file_roles import is_utility
from diagnoser.intake.report import MappedFrame, Report
from diagnoser.workspace import Workspace
from repomap import SymbolIndex

FRAMES_PER_FILE = 2
"""Two functions of one file may both be on the stack; other signals give one place."""
FRAME_DECAY = 0.5
"""A frame's prior is 1 / (1 + depth) ** FRAME_DECAY, depth 0 = innermost in-app file."""
UTILITY_PENALTY = 0.0
"""Subtracted from a utility module's frame prior (by its folder or file name: `utils`,
`helpers`, `common`…). Off: such folders hold product code as often as checks, and
leave-one-project-out found no fold it helps (docs/benchmarks.md); GUARD_PENALTY demotes
by what the frame does instead."""
GUARD_PENALTY = 1.0
"""Subtracted from the prior of a frame named for checking its input (`check_array`,
`Validate.notNull`): ≥ any prior, so after the other frames."""
ARGUMENT_CHECK_PENALTY = 0.0
"""Subtracted from the innermost frame's prior when its failing line is a raise right under
a test of one of its parameters. Off: leave-one-project-out found it hurts (the test itself
is often what the fix changes: a uniqueness check that missed a constraint)."""
EXCEPTION_FACTORY_PENALTY = 1.0
"""Subtracted from the innermost frame's prior when its function only makes or throws an
exception (`crash_site.makes_exception`: Mockito's `Reporter.*`, commons-math's
`MathRuntimeException.create*`): ≥ any prior, so after its callers — the caller decided
to fail. By what the function does, not its name."""
FRAME_HEADLINE_WEIGHT = 1.5
"""How far the headline's relevance lifts a frame file."""
PANIC_HANDLERS_LAST = True
"""A Go trace's frames above the runtime's `panic` (deferred handlers that ran while it
unwound, such as a `recover` that re-panics) are not frames of the failure: their files
rank by the report's words like any other. Off: they are the innermost frames."""
ERROR_CONSTRUCTOR_NOT_A_FRAME = True
"""The innermost frames that are the thrown error's own constructor (`at new
ObjectParameterError (lib/error/objectParameter.js:23:11)`: a JavaScript error records
its stack where it is made) are not frames of the failure: the code that threw it is.
Off: the error class's file is where it failed."""
GUARD_NOT_WHEN_IT_CRASHED = True
"""A check that fails on a null dereference itself (the innermost frame, "Cannot read
properties of undefined" inside `validateSync`) did not check anything: it is broken, so
GUARD_PENALTY does not send its file after the others. A check that raises is different:
it did its job on a bad value."""
_GUARD_NAME = re.compile(
    r"^_*(?:[Vv]alidate|[Cc]heck|[Aa]ssert|[Rr]equire|[Ee]nsure|[Vv]erify)(?:$|s$|[_A-Z0-9])"
)
"""A function or class named for checking its input: `check_array`, `_check_X`,
`Validate` (`Validate.notNull`), `requireNonNull`, `assertIsValid`, `ensure_str`."""
PASS_THROUGH_PENALTY = 0.5
"""Subtracted from the prior of the frame right outside an input check that hands the check
one of its own parameters as it came (`set(instant, value)` → `verifyValueBounds(this,
value, …)`: `crash_site.forwards_to_check`): the bad value came from further out, so its
file goes after the other frames, still before the check's (GUARD_PENALTY); the whole
penalty when the check is in the same file."""
ABSENT_FUNCTION_PENALTY = 1.0
"""Subtracted from the prior of a frame file that defines none of the functions its frames
name (`MathRuntimeException.createIllegalArgumentException` mapped to a release whose
`MathRuntimeException` has no such method): the code is not what ran — another release or
another file of that name — so its line says little; after the frames that do resolve."""
_COMMENTS = re.compile(r"/\*.*?\*/|(?://|#)[^\n]*", re.DOTALL)
"""Block and line comments (`/* */`, `//`, `#`): prose, which may name what the code lacks."""
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
"""A frame's function named plainly: not `<init>`, `<lambda>`, `lambda$run$0` or `{{closure}}`."""
ON_THE_PATH = "on the failing path (trace frame)"
NOT_WHAT_RAN = "trace frame `{named}`, which this file does not define: the code is not what ran"
IN_A_CHECK = "trace frame in an input check; its caller may have passed the bad value"


def is_guard_name(name: str) -> bool:
    """Whether any part of a dotted name names an input check (`Validate.notNull`,
    `sklearn.utils.validation.check_array`, `Form._check_fields`)."""
    return any(_GUARD_NAME.match(part) for part in re.split(r"[.:$#]+", name) if part)


def frame_candidates(report: Report, index: SymbolIndex) -> list[Candidate]:
    """In-app frames innermost first, at most FRAMES_PER_FILE per file, no place twice;
    without a Go panic's deferred handlers (PANIC_HANDLERS_LAST)."""
    found: list[Candidate] = []
    per_file: Counter[str] = Counter()
    innermost_reasons = (ON_THE_PATH, IN_A_CHECK) if _check_crashed(report) else (ON_THE_PATH,)
    for mapped in _innermost_first(report):
        candidate = _at_frame(mapped, index)
        if candidate is None or per_file[candidate.path] >= FRAMES_PER_FILE:
            continue
        if all((c.path, c.symbol) != (candidate.path, candidate.symbol) for c in found):
            if not found and candidate.reason in innermost_reasons:
                candidate = replace(candidate, reason="where it failed: the innermost in-app frame")
            found.append(candidate)
            per_file[candidate.path] += 1
    return found


def ordered_frames(
    report: Report, frames: list[Candidate], workspace: Workspace, *, headline: dict[str, float]
) -> tuple[list[Candidate], dict[str, float]]:
    """The frames, their files best prior first, with what the crash site says applied:
    the caller first when it handed over the null value (`null_argument`), else the
    functions a failing check tested right after the crash site (`guard_inputs`, as
    `Source.DATAFLOW` places). Also each frame file's prior (`headline`: each file's
    relevance to the headline, normalised to the best)."""
    index = workspace.repository.index
    lacking = _not_what_ran(report, workspace) if ABSENT_FUNCTION_PENALTY else {}
    frames = [
        replace(c, reason=NOT_WHAT_RAN.format(named=lacking[c.path])) if c.path in lacking else c
        for c in frames
    ]
    innermost = frames[:2]
    site = crash_site(frames[0], workspace) if frames else None
    forwarding = _forwarding_caller(report, frames, workspace)
    guards = _guard_files(report, frames, site, forwarding, set(lacking))
    priors = _frame_priors([c.path for c in frames], headline, guards)
    frame_order = _frame_file_order(priors)
    frames = sorted(frames, key=lambda c: frame_order[c.path])
    if site is not None and frames[0] != innermost[0]:
        site = None
    if (
        site is not None
        and len(innermost) == 2
        and null_argument(report, site, innermost[1], workspace)
    ):
        frames.remove(innermost[1])
        why = "passes the missing value on to the crashing call below it (trace frame)"
        frames.insert(0, replace(innermost[1], reason=why))
    elif site is not None:
        frames[1:1] = [
            span(path, target, target.line, Source.DATAFLOW, why)
            for path, target, why in guard_inputs(site, index)
        ]
    return frames, priors


def _innermost_first(report: Report) -> list[MappedFrame]:
    """The frames innermost first. In a Go trace the frames printed above the runtime's
    `panic` are deferred functions that ran while it unwound (a `recover` that re-panics:
    "[recovered]"), not the failing path: they are left out when in-app frames panicked.
    The error's own constructor (`at new ObjectParameterError`, where a JavaScript error
    records its stack) is not where it failed either (ERROR_CONSTRUCTOR_NOT_A_FRAME)."""
    order = report.frames[::-1]
    raised = next((n for n, m in enumerate(order) if _is_go_panic(m)), None)
    if PANIC_HANDLERS_LAST and raised is not None:
        below = order[raised + 1 :]
        order = below if any(m.in_app for m in below) else order
    error = (report.exception.type or "") if report.exception else ""
    if ERROR_CONSTRUCTOR_NOT_A_FRAME and error:
        built = error.rsplit(".", 1)[-1]
        after = list(dropwhile(lambda m: _function_name(m) == built, order))
        order = after if any(m.in_app for m in after) else order
    return order


def _function_name(mapped: MappedFrame) -> str:
    return re.split(r"[.:#]+", mapped.frame.function or "")[-1]


def _is_go_panic(mapped: MappedFrame) -> bool:
    frame = mapped.frame
    return (
        not mapped.in_app
        and (frame.function or "") in ("panic", "runtime.gopanic", "gopanic")
        and (frame.file or "").endswith("runtime/panic.go")
    )


def _at_frame(mapped: MappedFrame, index: SymbolIndex) -> Candidate | None:
    """The frame's place. When the code has moved since the trace was taken (the enclosing
    definition at that line has another name), the definition the frame names wins."""
    path, line = mapped.repo_path, mapped.frame.line
    if mapped.in_app and path and not line and mapped.symbol:  # mapped by the name it gives
        named_here = [d for d in index.definitions_in(path) if d.qualified == mapped.symbol]
        if named_here:
            return span(path, named_here[0], named_here[0].line, Source.FRAME, ON_THE_PATH)
    if not (mapped.in_app and path and line):
        return None
    definition = index.enclosing(path, line)
    named = (mapped.frame.function or "").rsplit(".", 1)[-1]
    why = ON_THE_PATH
    if is_guard_name(f"{mapped.frame.function or ''}.{definition.qualified if definition else ''}"):
        why = IN_A_CHECK
    elif UTILITY_PENALTY and is_utility(path):
        why = "trace frame in a shared utility module; its caller may have passed the bad value"
    if named and (definition is None or definition.name != named):
        moved = [d for d in index.definitions_in(path) if d.name == named]
        if moved:  # overloads: the one nearest the trace's line
            nearest = min(moved, key=lambda d: abs(d.line - line))
            why = f"trace frame `{named}` (line {line} in the trace; the code has moved since)"
            return span(path, nearest, nearest.line, Source.FRAME, why)
    if definition is None:
        start = max(1, line - CONTEXT_LINES)
        return Candidate(path, line, start, line + CONTEXT_LINES, None, Source.FRAME, why)
    return span(path, definition, line, Source.FRAME, why)


def _not_what_ran(report: Report, workspace: Workspace) -> dict[str, str]:
    """Frame files whose every frame names a plain function the file's code never mentions
    (not defined, not called, not a key; comments do not count) → a name it lacks
    (ABSENT_FUNCTION_PENALTY). A closure our definitions do not list (`function wrapper`
    inside `wrapHelper`) is still in the code, so its file is what ran."""
    index = workspace.repository.index
    lacking: dict[str, str] = {}
    present: set[str] = set()
    code: dict[str, str] = {}
    for mapped in report.frames:
        path, named = mapped.repo_path, _function_name(mapped)
        if not (mapped.in_app and path) or path in present:
            continue
        definitions = index.definitions_in(path)
        absent = False
        if _IDENTIFIER.match(named) and definitions and all(d.name != named for d in definitions):
            if path not in code:  # each file read once, however many frames it has
                code[path] = _code_of(path, workspace)
            absent = re.search(rf"(?<![\w$]){named}(?![\w$])", code[path]) is None
        if absent:
            lacking.setdefault(path, named)
        else:
            present.add(path)
            lacking.pop(path, None)
    return lacking


def _code_of(path: str, workspace: Workspace) -> str:
    """A file's text without its comments ('' when unreadable). Strings stay: a handler may
    be named by one (`"CallExpression": function (node)`)."""
    try:
        text = "\n".join(workspace.read_text_lines(path)[1])
    except ToolError:
        return ""
    return _COMMENTS.sub(" ", text)


def _forwarding_caller(report: Report, frames: list[Candidate], workspace: Workspace) -> str | None:
    """The file of the frame right outside an innermost input check when it hands the check
    one of its own parameters as it came (PASS_THROUGH_PENALTY); None otherwise."""
    innermost = next((m for m in _innermost_first(report) if m.in_app and m.repo_path), None)
    if not PASS_THROUGH_PENALTY or innermost is None or len(frames) < 2 or _check_crashed(report):
        return None
    if frames[0].path != innermost.repo_path:  # the check's own frame did not resolve
        return None
    owner = (innermost.frame.module or "").rsplit(".", 1)[-1]
    check = _function_name(innermost)
    if not (_IDENTIFIER.match(check) and is_guard_name(f"{owner}.{check}")):
        return None
    caller = crash_site(frames[1], workspace)
    return frames[1].path if caller is not None and forwards_to_check(caller, check) else None


def _guard_files(
    report: Report,
    frames: list[Candidate],
    site: CrashSite | None,
    forwarding: str | None,
    lacking: set[str],
) -> dict[str, float]:
    """Frame files that go after the others → their penalty: every frame of the file named
    like a check (`check_array`, `Validate.notNull`; GUARD_PENALTY); the file of the frame
    that hands its parameter to the innermost check (`forwarding`, PASS_THROUGH_PENALTY);
    files whose code lacks the functions their frames name (`lacking`,
    ABSENT_FUNCTION_PENALTY); the innermost frame's file when it only makes the exception
    (EXCEPTION_FACTORY_PENALTY) or when its failing line is a raise right under a test of
    one of its parameters (ARGUMENT_CHECK_PENALTY). The caller handed over the bad value —
    unless the check itself crashed on a null value (GUARD_NOT_WHEN_IT_CRASHED)."""
    names: defaultdict[str, list[str]] = defaultdict(list)
    for mapped in report.frames:
        if mapped.in_app and mapped.repo_path:
            frame = mapped.frame
            owner = (frame.module or "").rsplit(".", 1)[-1]
            names[mapped.repo_path].append(f"{owner}.{frame.function or ''}.{mapped.symbol or ''}")
    checked = site.frame.path if site is not None and argument_check(site) else None
    factory = site.frame.path if site is not None and makes_exception(site) else None
    crashed = frames[0].path if frames and _check_crashed(report) else None
    guards: dict[str, float] = {}
    for path in {c.path for c in frames}:
        looks = [is_guard_name(name) for name in names.get(path, [])]
        if looks and all(looks) and path != crashed:
            guards[path] = GUARD_PENALTY
        elif path == forwarding:
            guards[path] = GUARD_PENALTY if any(looks) else PASS_THROUGH_PENALTY
        elif path in lacking:
            guards[path] = ABSENT_FUNCTION_PENALTY
        elif path == factory and len(looks) <= 1:
            guards[path] = EXCEPTION_FACTORY_PENALTY
        elif path == checked and len(looks) <= 1:
            guards[path] = ARGUMENT_CHECK_PENALTY
    return guards


def _check_crashed(report: Report) -> bool:
    """Whether a check at the innermost frame would have crashed rather than checked: the
    failure is a null dereference (GUARD_NOT_WHEN_IT_CRASHED)."""
    return GUARD_NOT_WHEN_IT_CRASHED and null_member(report) is not None


def _frame_priors(
    paths: list[str], headline: dict[str, float], guards: dict[str, float] | None = None
) -> dict[str, float]:
    """Frame files (innermost first) → their prior: depth decay, guard helpers (and, with
    UTILITY_PENALTY, utility modules) after the rest, lifted by the headline's relevance."""
    files = list(dict.fromkeys(paths))
    return {
        path: 1 / (1 + depth) ** FRAME_DECAY
        - UTILITY_PENALTY * is_utility(path)
        - (guards or {}).get(path, 0.0)
        + FRAME_HEADLINE_WEIGHT * headline.get(path, 0.0)
        for depth, path in enumerate(files)
    }


def _frame_file_order(priors: dict[str, float]) -> dict[str, int]:
    """Frame files → their rank, best prior first (ties: innermost first)."""
    return {path: rank for rank, path in enumerate(sorted(priors, key=lambda p: -priors[p]))}
