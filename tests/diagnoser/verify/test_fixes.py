"""A Finding's changes run, and template fixes kept only when a run passed them."""

from __future__ import annotations

from pathlib import Path

from diagnoser.finding import (
    Change,
    Finding,
    Kind,
    Location,
    Origin,
    Reproduction,
    Role,
    TestStatus,
)
from diagnoser.intake import ReportIn, build_report
from diagnoser.settings import Settings
from diagnoser.verify import reproduce
from diagnoser.verify.fixes import NO_DIFF, check_fixes
from diagnoser.workspace import Workspace

REPORT = (
    "Page 2 of 25 items is refused:\n\n```python\nfrom pager import page\n"
    "print(page(list(range(25)), 2, 20))\n```\n\nLookupError: page 2 of 1"
)


def _reproduced(pager: Path, settings: Settings, home: Path) -> tuple[Workspace, Finding, object]:
    workspace = Workspace(pager, settings)
    report = build_report(ReportIn(text=REPORT), files=workspace.file_paths)
    attempt = reproduce(report, workspace, home=home)
    assert attempt.bench is not None, attempt.reproduction.reason
    finding = Finding(
        classification=Kind.BUG, title="page refused",
        files=[Location(path="pager.py", start_line=5, end_line=9, role=Role.FAULT),
               Location(path="pager.py", start_line=1, end_line=2, role=Role.CONTEXT)],
        changes=[Change(path="pager.py", summary="look at the check")],
        reproduction=attempt.reproduction,
    )  # fmt: skip
    return workspace, finding, attempt.bench


def test_offline_a_passing_template_fix_is_added_labelled(pager: Path, verifying: Settings,
                                                          home: Path) -> None:  # fmt: skip
    workspace, finding, bench = _reproduced(pager, verifying, home)
    checked = check_fixes(finding, bench, workspace, templates=True)
    first, *made = checked.changes
    assert first.tested.status is TestStatus.NOT_RUN and first.tested.detail == NO_DIFF
    assert made and all(c.origin is Origin.TEMPLATE for c in made)
    assert all(c.tested.status is TestStatus.PASSED for c in made)
    ceiling = next(c for c in made if "ceiling" in c.summary)
    assert "+    return max(1, -(-total // per_page))" in (ceiling.diff or "")
    assert "2 neighbouring tests pass as at base" in ceiling.tested.detail
    assert "not by a model" in ceiling.rationale


def test_with_a_model_no_template_is_tried_and_its_diff_is_tested(
    pager: Path, verifying: Settings, home: Path
) -> None:
    workspace, finding, bench = _reproduced(pager, verifying, home)
    wrong = (
        "--- a/pager.py\n+++ b/pager.py\n@@ -1,2 +1,2 @@\n def page_count(total, per_page):\n"
        "-    return max(1, total // per_page)\n+    return max(2, total // per_page)\n"
    )
    proposed = finding.model_copy(
        update={"changes": [Change(path="pager.py", summary="x", diff=wrong)]}
    )
    checked = check_fixes(proposed, bench, workspace, templates=False)
    assert len(checked.changes) == 1
    tested = checked.changes[0].tested
    assert (
        tested.status is TestStatus.FAILED
    )  # the reproducer passes; an empty list has 2 pages now
    assert "test_one_page_when_empty" in tested.detail


def test_a_failure_no_template_fixes_adds_nothing(
    shop: Path, verifying: Settings, home: Path
) -> None:
    workspace = Workspace(shop, verifying)
    code = "from shop.cart import Cart\nc = Cart()\nc.add('tea', 3)\nc.total()"
    text = f"```python\n{code}\n```\nKeyError"
    attempt = reproduce(build_report(ReportIn(text=text), files=workspace.file_paths), workspace,
                        home=home)  # fmt: skip
    assert attempt.bench is not None
    finding = Finding(
        classification=Kind.BUG, title="t", reproduction=attempt.reproduction,
        files=[Location(path="shop/cart.py", start_line=11, end_line=12, role=Role.FAULT)],
    )  # fmt: skip
    checked = check_fixes(finding, attempt.bench, workspace, templates=True)
    assert checked.changes == []  # .get("price") gives None + None: tried, failed, not shown
    assert isinstance(checked.reproduction, Reproduction)
