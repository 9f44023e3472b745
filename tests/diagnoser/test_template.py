from __future__ import annotations

import pytest

from diagnoser.finding import Level, Role
from diagnoser.grounding import ground
from diagnoser.intake.report import Kind
from diagnoser.template import TemplateError, parse_report
from diagnoser.workspace import Workspace

REPORT = """# TypeError in Cart.total when an item has no price

## Root cause
`Cart.total` sums `item.price` without handling items whose price is `None`.
Items created from the legacy import have no price, so `sum` meets `None` and raises.

Confidence: 85%

## Locations
1. `src/app.py:8-9` — `Cart.total` — fault
   Reason: sums prices that may be None
   ```python
       def total(self):
           return sum(item.price for item in self.items)
   ```
2. `src/views.py:4-5` — `view` — trigger
   Reason: every page view calls checkout
   ```python
   def view(cart):
       return checkout(cart)
   ```

## Proposed changes
1. `src/app.py` — treat a missing price as 0
   Rationale: keeps totals defined for legacy items
   ```diff
   --- a/src/app.py
   +++ b/src/app.py
   @@ -8,2 +8,2 @@
        def total(self):
   -        return sum(item.price for item in self.items)
   +        return sum(item.price or 0 for item in self.items)
   ```

## Risk
Complexity: low
Risk: medium — totals change for legacy carts
Rationale: one line; callers see 0 instead of an exception
"""


def dedent_fences(text: str) -> str:
    """The template indents fenced blocks under list items by three spaces."""
    return (
        "\n".join(line[3:] if line.startswith("   ") else line for line in text.splitlines()) + "\n"
    )


def test_the_template_parses_into_a_finding() -> None:
    finding = parse_report(REPORT, classification=Kind.CRASH)
    assert finding.title == "TypeError in Cart.total when an item has no price"
    assert finding.root_cause is not None
    assert finding.root_cause.summary.startswith("`Cart.total` sums")
    assert finding.root_cause.confidence == 0.85
    assert [(f.path, f.start_line, f.end_line, f.symbol, f.role) for f in finding.files] == [
        ("src/app.py", 8, 9, "Cart.total", Role.FAULT),
        ("src/views.py", 4, 5, "view", Role.TRIGGER),
    ]
    assert finding.files[0].reason == "sums prices that may be None"
    assert "return sum(item.price for item in self.items)" in finding.files[0].evidence
    [change] = finding.changes
    assert (change.path, change.summary) == ("src/app.py", "treat a missing price as 0")
    assert change.diff is not None and change.diff.startswith("--- a/src/app.py\n")
    assert (finding.risk.complexity, finding.risk.risk) == (Level.LOW, Level.MEDIUM)
    assert finding.report_markdown == REPORT


def test_a_parsed_report_grounds_against_the_repo(workspace: Workspace) -> None:
    finding = parse_report(REPORT, classification=Kind.CRASH)  # fences indented under items
    grounded = ground(finding, workspace)
    assert [c.passed for c in grounded.checks] == [True, True, True], grounded.checks
    assert grounded.status.value == "verified"


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        ("no heading at all", "no '# title' line"),
        ("# Title\n\n## Risk\nComplexity: low\n", "lacks the section(s): Root cause, Locations"),
        ("# T\n## Root cause\nx\n## Locations\n1. somewhere in app.py\n", "needs `path:start-end`"),
        ("# T\n## Root cause\n\n## Locations\n", "root cause section is empty"),
    ],
)
def test_reports_off_template_say_what_is_missing(broken: str, message: str) -> None:
    with pytest.raises(TemplateError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_report(broken, classification=Kind.BUG)


def test_changes_and_risk_are_optional() -> None:
    minimal = "# T\n## Root cause\nx\n## Locations\n1. `src/app.py:8-9` — fault\n"
    finding = parse_report(minimal, classification=Kind.BUG)
    assert finding.changes == [] and [f.path for f in finding.files] == ["src/app.py"]


def test_a_path_with_spaces_is_one_location_and_one_change() -> None:
    spaced = REPORT.replace("src/app.py", "test cases/7 gnome/app.py")
    finding = parse_report(spaced, classification=Kind.CRASH)
    assert finding.files[0].path == "test cases/7 gnome/app.py"
    assert (finding.files[0].start_line, finding.files[0].end_line) == (8, 9)
    assert finding.changes[0].path == "test cases/7 gnome/app.py"
