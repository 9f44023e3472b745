"""Grounding: a report's `Draft` is checked against the real files and becomes a
`Finding` — the only way one is made from a model's words.

`check(draft, workspace)` is pure over the workspace's reads and returns every problem
with a message precise enough to send back to a model as a retry ("lines 40-48 are past
the end of notes/store.py (31 lines)"). `ground` drops what fails, records a `Check` for
every location and change, computes the blast radius from the symbol index and sets the
status: `grounded` only when everything holds and a fault location is grounded — the
citations check out against the files; nothing is run here. Status, checks and blast
radius are never taken from a model: a Draft has no such fields.

Suspects (`Finding.suspects`) are hints from the ranking, not claims: they get no check
and never change the status; `ground` only drops those whose file is not in the
workspace or whose line is past its end.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import whatthepatch

from diagnoser.draft import Draft
from diagnoser.errors import ToolError
from diagnoser.finding import (
    BlastRadius,
    Change,
    Check,
    Finding,
    Location,
    ProposedChange,
    Risk,
    Role,
    Status,
    Suspect,
)
from diagnoser.intake.report import Kind
from diagnoser.workspace import Workspace

BLAST_RADIUS_FILES = 10
_SPACE = re.compile(r"\s+")


NOT_A_DIFF = "the diff is not a unified diff with hunks"


class CheckKind(StrEnum):
    PATH = "path"
    RANGE = "range"
    EVIDENCE = "evidence"
    SYMBOL = "symbol"
    DIFF = "diff"


@dataclass(frozen=True, slots=True)
class Problem:
    where: str
    """`files[0]`, `changes[1]`."""
    kind: CheckKind
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


def check(draft: Draft, workspace: Workspace) -> list[Problem]:
    """Every way the draft disagrees with the repository (empty when it is grounded)."""
    problems: list[Problem] = []
    for i, location in enumerate(draft.files):
        problems.extend(
            Problem(f"files[{i}]", k, m) for k, m in _check_location(location, workspace)
        )
    for i, change in enumerate(draft.changes):
        problems.extend(Problem(f"changes[{i}]", k, m) for k, m in _check_change(change, workspace))
    return problems


def ground(
    draft: Draft,
    workspace: Workspace,
    *,
    classification: Kind,
    markdown: str = "",
    suspects: Sequence[Suspect] = (),
) -> Finding:
    """The Finding the draft earns: failing locations and changes dropped, a check recorded
    for each, blast radius computed, status decided; `markdown` is the report it was read
    from, `suspects` our ranking (kept where its file and line exist)."""
    problems = check(draft, workspace)
    failed = {p.where for p in problems}
    checks: list[Check] = []
    for where, item in [*_indexed("files", draft.files), *_indexed("changes", draft.changes)]:
        details = [p.message for p in problems if p.where == where]
        checks.append(Check(name=f"{where} {_label(item)}", passed=not details,
                            detail="; ".join(details) or "grounded"))  # fmt: skip
    files = [loc for i, loc in enumerate(draft.files) if f"files[{i}]" not in failed]
    changes = [c for i, c in enumerate(draft.changes) if f"changes[{i}]" not in failed]
    faults = [loc for loc in files if loc.role is Role.FAULT]
    status = Status.UNGROUNDED
    if faults:
        status = Status.PARTIALLY_GROUNDED if problems else Status.GROUNDED
    risk = Risk(
        complexity=draft.complexity,
        risk=draft.risk,
        blast_radius=blast_radius(files, changes, workspace),
        rationale=draft.rationale,
    )
    return Finding(
        classification=classification,
        title=draft.title,
        root_cause=draft.root_cause,
        files=files,
        changes=[Change.model_validate(change.model_dump()) for change in changes],
        risk=risk,
        checks=checks,
        status=status,
        report_markdown=markdown,
        suspects=[s for s in suspects if _in_workspace(s, workspace)],
    )


def _in_workspace(suspect: Suspect, workspace: Workspace) -> bool:
    """Whether a suspect's file is readable in the workspace (inside it, not denied) and
    holds its line: a hint may be vague, not made up."""
    try:
        lines = workspace.read_text_lines(suspect.path)[1]
    except ToolError:
        return False
    return suspect.line <= len(lines)


def blast_radius(
    files: list[Location], changes: list[ProposedChange], workspace: Workspace
) -> BlastRadius:
    """Who references the symbols the changes touch (or, without changes, the faults)."""
    index = workspace.repository.index
    symbols: list[str] = []
    for change in changes:
        symbols.extend(_changed_symbols(change, workspace))
    if not symbols:
        symbols = [loc.symbol for loc in files if loc.role is Role.FAULT and loc.symbol]
    symbols = list(dict.fromkeys(symbols))
    users: Counter[str] = Counter()
    for symbol in symbols:
        for site in index.references(symbol):
            if not workspace.denied(site.path):
                users[site.path] += 1
    return BlastRadius(
        symbols=symbols,
        references=sum(users.values()),
        files=[path for path, _ in users.most_common(BLAST_RADIUS_FILES)],
    )


def _check_location(location: Location, workspace: Workspace) -> list[tuple[CheckKind, str]]:
    try:
        resolved, lines = workspace.read_text_lines(location.path)
    except ToolError as exc:
        return [(CheckKind.PATH, str(exc))]
    problems: list[tuple[CheckKind, str]] = []
    total = len(lines)
    if location.end_line > total:
        problems.append((CheckKind.RANGE, f"lines {location.start_line}-{location.end_line} "
                         f"are past the end of {resolved.rel} ({total} lines)"))  # fmt: skip
        return problems
    if location.evidence.strip():
        problem = _evidence_problem(location, lines, resolved.rel)
        if problem:
            problems.append((CheckKind.EVIDENCE, problem))
    if location.symbol:
        problem = _symbol_problem(location, workspace, resolved.rel)
        if problem:
            problems.append((CheckKind.SYMBOL, problem))
    return problems


def _evidence_problem(location: Location, lines: list[str], path: str) -> str | None:
    wanted = _flat(location.evidence)
    if wanted in _flat("\n".join(lines[location.start_line - 1 : location.end_line])):
        return None
    first = _flat(location.evidence.strip().splitlines()[0])
    elsewhere = [n for n, line in enumerate(lines, 1) if first and first in _flat(line)]
    hint = f"; its first line is at line {elsewhere[0]}" if elsewhere else f"; it is not in {path}"
    return f"evidence does not match lines {location.start_line}-{location.end_line}{hint}"


def _symbol_problem(location: Location, workspace: Workspace, path: str) -> str | None:
    index = workspace.repository.index
    symbol = location.symbol or ""
    for definition in index.definitions_in(path):
        if symbol in (definition.qualified, definition.name) or (
            "." + definition.qualified
        ).endswith("." + symbol):
            return None
    around = index.enclosing(path, location.start_line)
    hint = f"; line {location.start_line} is in {around.qualified}" if around else ""
    return f"{symbol} is not defined in {path}{hint}"


def _check_change(change: ProposedChange, workspace: Workspace) -> list[tuple[CheckKind, str]]:
    try:
        resolved, lines = workspace.read_text_lines(change.path)
    except ToolError as exc:
        return [(CheckKind.PATH, str(exc))]
    if change.diff is None:
        return []
    try:
        apply_diff(change.diff, lines)
    except ValueError as exc:
        why = (
            str(exc)
            if str(exc) == NOT_A_DIFF
            else f"the diff does not apply to {resolved.rel}: {exc}"
        )
        return [(CheckKind.DIFF, why)]
    return []


def apply_diff(diff: str, lines: list[str]) -> list[str]:
    """`lines` with the unified `diff` applied, patch after patch; ValueError when it is
    not a diff (`NOT_A_DIFF`) or does not apply (whatthepatch's reason)."""
    patches = [patch for patch in whatthepatch.parse_patch(diff) if patch.changes]
    if not patches:
        raise ValueError(NOT_A_DIFF)
    for patch in patches:
        try:
            lines = list(whatthepatch.apply_diff(patch, lines))
        except Exception as exc:  # whatthepatch raises its own HunkApplyException (and others)
            raise ValueError(str(exc)) from None
    return lines


def _changed_symbols(change: ProposedChange, workspace: Workspace) -> list[str]:
    """Qualified names of the definitions enclosing the lines a diff removes or edits."""
    if not change.diff:
        return []
    index = workspace.repository.index
    symbols = []
    for diff in whatthepatch.parse_patch(change.diff):
        for line in diff.changes or ():
            if line.old is not None and line.new is None:
                around = index.enclosing(change.path, line.old)
                if around:
                    symbols.append(around.qualified)
    return symbols


def _flat(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def _indexed(
    name: str, items: Sequence[Location | ProposedChange]
) -> list[tuple[str, Location | ProposedChange]]:
    return [(f"{name}[{i}]", item) for i, item in enumerate(items)]


def _label(item: Location | ProposedChange) -> str:
    if isinstance(item, Location):
        return f"{item.path}:{item.start_line}-{item.end_line}"
    return f"{item.path} ({'diff' if item.diff else 'no diff'})"
