"""Grounding on hand-made drafts: right ones verify, wrong ones are caught precisely, and
only grounding decides a Finding's status, checks and blast radius."""

from __future__ import annotations

import pytest

from diagnoser.draft import Draft
from diagnoser.finding import (
    Change,
    Level,
    Location,
    Role,
    RootCause,
    Signal,
    Status,
    Suspect,
    TestStatus,
)
from diagnoser.grounding import CheckKind, check, ground
from diagnoser.intake.report import Kind
from diagnoser.workspace import Workspace

TOTAL = Location(
    path="src/app.py",
    start_line=8,
    end_line=9,
    symbol="Cart.total",
    evidence="def total(self):\n    return sum(item.price for item in self.items)",
    reason="sums item.price without checking for None",
)
DIFF = """--- a/src/app.py
+++ b/src/app.py
@@ -8,2 +8,2 @@
     def total(self):
-        return sum(item.price for item in self.items)
+        return sum(item.price or 0 for item in self.items)
"""


def draft(*files: Location, changes: tuple[Change, ...] = ()) -> Draft:
    return Draft(
        title="TypeError in Cart.total",
        root_cause=RootCause(summary="None prices", confidence=0.8),
        files=list(files),
        changes=list(changes),
        complexity=Level.LOW,
        risk=Level.HIGH,
        rationale="every checkout",
    )


def test_a_correct_draft_is_grounded_with_checks_and_blast_radius(workspace: Workspace) -> None:
    written = draft(TOTAL, changes=(Change(path="src/app.py", summary="default to 0", diff=DIFF),))
    result = ground(written, workspace, classification=Kind.CRASH, markdown="# the report")
    assert result.status is Status.GROUNDED
    assert [c.passed for c in result.checks] == [True, True]
    assert result.risk.blast_radius.symbols == ["Cart.total"]
    assert result.risk.blast_radius.references >= 1  # checkout() calls cart.total()
    assert (result.classification, result.report_markdown) == (Kind.CRASH, "# the report")
    assert (result.title, result.root_cause, result.files) == (
        written.title, written.root_cause, written.files,
    )  # fmt: skip
    # The draft's changes, as a Finding's: grounded, and not tested (nothing ran).
    assert result.changes == [Change(**change.model_dump()) for change in written.changes]
    assert result.changes[0].tested.status is TestStatus.NOT_RUN
    assert (result.risk.complexity, result.risk.risk, result.risk.rationale) == (
        Level.LOW, Level.HIGH, "every checkout",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("wrong", "kind", "message"),
    [
        (
            TOTAL.model_copy(update={"path": "src/cart.py"}),
            CheckKind.PATH,
            "no such file: src/cart.py",
        ),
        (
            TOTAL.model_copy(update={"path": "../outside/secret.txt"}),
            CheckKind.PATH,
            "'..' is not allowed",
        ),
        (TOTAL.model_copy(update={"path": ".env"}), CheckKind.PATH, "secrets deny-list"),
        (
            TOTAL.model_copy(update={"start_line": 40, "end_line": 48}),
            CheckKind.RANGE,
            "lines 40-48 are past the end of src/app.py (13 lines)",
        ),
        (
            TOTAL.model_copy(update={"start_line": 4, "end_line": 5}),
            CheckKind.EVIDENCE,
            "evidence does not match lines 4-5; its first line is at line 8",
        ),
        (
            TOTAL.model_copy(update={"evidence": "return self.total_price * 2"}),
            CheckKind.EVIDENCE,
            "evidence does not match lines 8-9; it is not in src/app.py",
        ),
        (
            TOTAL.model_copy(update={"symbol": "Cart.grand_total"}),
            CheckKind.SYMBOL,
            "Cart.grand_total is not defined in src/app.py; line 8 is in Cart.total",
        ),
    ],
)
def test_wrong_locations_are_caught_with_the_exact_mismatch(
    workspace: Workspace, wrong: Location, kind: CheckKind, message: str
) -> None:
    [problem] = check(draft(wrong), workspace)
    assert (problem.where, problem.kind) == ("files[0]", kind)
    assert message in problem.message


def test_evidence_matches_whitespace_insensitively(workspace: Workspace) -> None:
    loose = TOTAL.model_copy(
        update={"evidence": "def   total(self):\n\treturn sum(item.price   for item in self.items)"}
    )
    assert check(draft(loose), workspace) == []


@pytest.mark.parametrize(
    ("diff", "message"),
    [
        (DIFF.replace("self.items)\n+", "self.things)\n+"), "does not apply to src/app.py"),
        ("just some words, not a diff", "not a unified diff"),
    ],
)
def test_diffs_must_apply(workspace: Workspace, diff: str, message: str) -> None:
    [problem] = check(
        draft(TOTAL, changes=(Change(path="src/app.py", summary="x", diff=diff),)), workspace
    )
    assert (problem.where, problem.kind) == ("changes[0]", CheckKind.DIFF)
    assert message in problem.message


def test_failures_are_dropped_and_recorded_and_status_is_earned(workspace: Workspace) -> None:
    bad = TOTAL.model_copy(update={"path": "src/nope.py"})
    context = Location(
        path="src/views.py", start_line=4, end_line=5, role=Role.CONTEXT, symbol="view"
    )
    partial = ground(draft(TOTAL, bad, context), workspace, classification=Kind.CRASH)
    assert partial.status is Status.PARTIALLY_GROUNDED
    assert [f.path for f in partial.files] == ["src/app.py", "src/views.py"]
    assert [(c.name, c.passed) for c in partial.checks] == [
        ("files[0] src/app.py:8-9", True),
        ("files[1] src/nope.py:8-9", False),
        ("files[2] src/views.py:4-5", True),
    ]
    only_context = ground(draft(bad, context), workspace, classification=Kind.CRASH)
    assert only_context.status is Status.UNGROUNDED  # no grounded fault location
    assert [f.role for f in only_context.files] == [Role.CONTEXT]


def test_grounding_keeps_only_suspects_whose_file_and_line_exist(workspace: Workspace) -> None:
    def suspect(path: str, line: int) -> Suspect:
        return Suspect(path=path, line=line, score=0.5, source=Signal.WORDS, reason="words")

    kept = suspect("src/app.py", 9)
    suspects = [
        kept,
        suspect("../outside/secret.txt", 1),  # outside the repository
        suspect("src/cart.py", 1),  # no such file
        suspect("src/app.py", 900),  # past the end
        suspect(".env", 1),  # denied
    ]
    result = ground(draft(TOTAL), workspace, classification=Kind.CRASH, suspects=suspects)
    assert result.suspects == [kept]
    plain = ground(draft(TOTAL), workspace, classification=Kind.CRASH)
    assert result.status is plain.status is Status.GROUNDED  # hints: no checks, no status
    assert result.checks == plain.checks
