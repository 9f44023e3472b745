"""`check_fixes`: a Finding's proposed changes tested by running them, and — when no
model proposes any — repair templates tried at the blamed line, kept only if they pass.

Only after the base gate reproduced the failure (`Attempt.bench`); every change with a
diff is tried (at most `MAX_TESTED_CHANGES`, within the verification budget) and marked
`passed` or `failed` with why — never dropped. A change without a diff stays `not_run`.
Templates (`templates.repairs`): at the run's blamed line (its innermost repository frame)
and its function, the same file's other frames and locations, then at the Finding's fault
location, tried in order until `MAX_TEMPLATE_FIXES` pass or the budget is spent; a
passing one is added as a `Change` of origin `template`. Blocking.
"""

from __future__ import annotations

from diagnoser.errors import ToolError
from diagnoser.finding import Change, Finding, Origin, Role, Tested, TestStatus
from diagnoser.verify.templates import Repair, repairs
from diagnoser.verify.trial import Bench, Trials
from diagnoser.workspace import Workspace

MAX_TESTED_CHANGES = 3
MAX_TEMPLATE_FIXES = 2
MAX_CONTEXT_LOCATIONS = 3
NO_DIFF = "no diff to apply"
TEMPLATE_RATIONALE = (
    "made by a repair template ({template}) at the blamed line, not by a model; kept "
    "because a sandboxed run passed it: {detail}"
)


def check_fixes(finding: Finding, bench: Bench, workspace: Workspace, *,
                templates: bool) -> Finding:  # fmt: skip
    """`finding` with its changes' `tested` filled in, plus passing template fixes when
    `templates` (the explorer is the offline investigator)."""
    trials = Trials(workspace, bench)
    changes = []
    for number, change in enumerate(finding.changes):
        if not change.diff:
            tested = Tested(status=TestStatus.NOT_RUN, detail=NO_DIFF)
        elif number >= MAX_TESTED_CHANGES:
            tested = Tested(status=TestStatus.NOT_RUN, detail=f"only {MAX_TESTED_CHANGES} are run")
        else:
            tested = trials.test(change.path, change.diff)
        changes.append(change.model_copy(update={"tested": tested}))
    if templates:
        changes += _template_fixes(finding, trials, workspace)
    return finding.model_copy(update={"changes": changes})


def _template_fixes(finding: Finding, trials: Trials, workspace: Workspace) -> list[Change]:
    kind, _, message = finding.reproduction.exception.partition(": ")
    candidates: list[Repair] = []
    for path, line, context in _blamed(finding, workspace):
        try:
            source = "\n".join(workspace.read_text_lines(path)[1]) + "\n"
        except ToolError:
            continue
        candidates += repairs(path, source, fault_line=line, context_lines=context,
                              exception=kind, message=message)  # fmt: skip
    kept: list[Change] = []
    for repair in candidates:
        if len(kept) == MAX_TEMPLATE_FIXES or trials.time_left <= 0:
            break
        tested = trials.test(repair.path, repair.diff)
        if tested.status is TestStatus.PASSED:
            rationale = TEMPLATE_RATIONALE.format(template=repair.template, detail=tested.detail)
            kept.append(Change(
                path=repair.path, summary=f"{repair.summary} (line {repair.line})",
                rationale=rationale, diff=repair.diff, tested=tested, origin=Origin.TEMPLATE,
            ))  # fmt: skip
    return kept


def _blamed(finding: Finding, workspace: Workspace) -> list[tuple[str, int, list[int]]]:
    """Where templates are tried, as (path, blamed line, context lines): the run's
    innermost repository frame, then the Finding's fault location when it is elsewhere.
    The context: the blamed line's function, nearest lines first, then the same file's
    other frames and locations (the functions that computed what the failing line used)."""
    frames = finding.reproduction.frames
    places = [(frames[-1].path, frames[-1].line)] if frames else []
    fault = next((f for f in finding.files if f.role is Role.FAULT), None)
    if fault is not None and all(path != fault.path for path, _ in places):
        places.append((fault.path, fault.start_line))
    index = workspace.repository.index
    blamed = []
    for path, line in places:
        around = index.enclosing(path, line)
        first, last = (around.start_line, around.end_line) if around else (line, line)
        own = sorted(range(first, last + 1), key=lambda n: (abs(n - line), n))
        others = [f.line for f in reversed(frames[:-1]) if f.path == path]
        spans = [f for f in finding.files if f.path == path][:MAX_CONTEXT_LOCATIONS]
        near = [n for f in spans for n in range(f.start_line, f.end_line + 1)]
        context = [n for n in dict.fromkeys([*own, *others, *near]) if n != line]
        blamed.append((path, line, context))
    return blamed
