"""The template: `parse_report` reads reports into Drafts, `render` writes Drafts back,
and the two round-trip — over generated drafts and over hand-written findings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnoser.draft import Draft
from diagnoser.finding import Change, Finding, Level, Location, Role, RootCause
from diagnoser.grounding import ground
from diagnoser.intake.report import Kind
from diagnoser.template import SKELETON, TEMPLATE, TemplateError, parse_report, render
from diagnoser.workspace import Workspace
from tests.conftest import FIXTURES

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


def test_the_template_parses_into_a_draft() -> None:
    draft = parse_report(REPORT)
    assert draft.title == "TypeError in Cart.total when an item has no price"
    assert draft.root_cause.summary.startswith("`Cart.total` sums")
    assert draft.root_cause.confidence == 0.85
    assert [(f.path, f.start_line, f.end_line, f.symbol, f.role) for f in draft.files] == [
        ("src/app.py", 8, 9, "Cart.total", Role.FAULT),
        ("src/views.py", 4, 5, "view", Role.TRIGGER),
    ]
    assert draft.files[0].reason == "sums prices that may be None"
    assert "return sum(item.price for item in self.items)" in draft.files[0].evidence
    [change] = draft.changes
    assert (change.path, change.summary) == ("src/app.py", "treat a missing price as 0")
    assert change.diff is not None and change.diff.startswith("--- a/src/app.py\n")
    assert (draft.complexity, draft.risk) == (Level.LOW, Level.MEDIUM)
    assert draft.rationale == "one line; callers see 0 instead of an exception"


def test_a_parsed_report_grounds_against_the_repo(workspace: Workspace) -> None:
    draft = parse_report(REPORT)  # fences indented under items
    grounded = ground(draft, workspace, classification=Kind.CRASH, markdown=REPORT)
    assert [c.passed for c in grounded.checks] == [True, True, True], grounded.checks
    assert grounded.status.value == "grounded" and grounded.report_markdown == REPORT


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        ("no heading at all", "no '# title' line"),
        ("# Title\n\n## Risk\nComplexity: low\n", "lacks the section(s): Root cause, Locations"),
        ("# T\n## Root cause\nx\n## Locations\n1. somewhere in app.py\n", "needs `path:start-end`"),
        ("# T\n## Root cause\n\n## Locations\n", "root cause section is empty"),
        ("```\n# T\n## Root cause\nx\n## Locations\n```\n", "no '# title' line"),  # all code
    ],
)
def test_reports_off_template_say_what_is_missing(broken: str, message: str) -> None:
    with pytest.raises(TemplateError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_report(broken)


def test_changes_and_risk_are_optional() -> None:
    minimal = "# T\n## Root cause\nx\n## Locations\n1. `src/app.py:8-9` — fault\n"
    draft = parse_report(minimal)
    assert draft.changes == [] and [f.path for f in draft.files] == ["src/app.py"]
    assert (draft.complexity, draft.risk, draft.rationale) == (Level.MEDIUM, Level.MEDIUM, "")
    assert parse_report(render(draft)) == draft


def test_a_path_with_spaces_is_one_location_and_one_change() -> None:
    spaced = REPORT.replace("src/app.py", "test cases/7 gnome/app.py")
    draft = parse_report(spaced)
    assert draft.files[0].path == "test cases/7 gnome/app.py"
    assert (draft.files[0].start_line, draft.files[0].end_line) == (8, 9)
    assert draft.changes[0].path == "test cases/7 gnome/app.py"


def test_fields_and_headings_inside_code_are_code() -> None:
    """Evidence that looks like the template (a heading, an item, a field, a fence) stays
    evidence: it neither ends a section nor fills a field."""
    evidence = "## Risk\n1. `x.py:1-2` — fault\nReason: not mine\n```\nConfidence: 0.1"
    draft = Draft(
        title="T",
        root_cause=RootCause(summary="s", confidence=0.9),
        files=[Location(path="a.py", start_line=1, end_line=5, evidence=evidence)],
    )
    markdown = render(draft)
    assert "   ````\n" in markdown  # fenced with more backticks than the evidence holds
    parsed = parse_report(markdown)
    assert parsed == draft and parsed.files[0].reason == ""


def test_the_template_the_explorer_is_shown_is_the_renderers_and_parses() -> None:
    assert render(SKELETON) == TEMPLATE
    assert parse_report(TEMPLATE) == SKELETON
    assert TEMPLATE.splitlines()[:3] == ["# <what fails, where>", "", "## Root cause"]


# Round trips: parse_report(render(d)) == d.

_ONE_LINE = st.characters(exclude_categories=("Cs", "Cc", "Zl", "Zp"))
"""Anything but line breaks and control characters (what `str.splitlines` splits on)."""
_CODE = st.one_of(_ONE_LINE, st.sampled_from("\t`"))


def _one_line(*, empty: bool = False) -> st.SearchStrategy[str]:
    text = st.text(_ONE_LINE, max_size=30).map(str.strip).filter(bool)
    return st.just("") | text if empty else text


def _prose_line(line: str) -> bool:
    """A line of prose, not template syntax (a heading, a fence, a confidence)."""
    bare = line.lstrip()
    return not bare.startswith(("#", "`")) and not bare.lower().startswith("confidence")


_PROSE = _one_line().filter(_prose_line)
_EXPLANATION = st.lists(st.text(_ONE_LINE, max_size=30).filter(_prose_line), max_size=4).map(
    lambda lines: "\n".join(lines).strip()
)
_LOOKALIKES = st.sampled_from(
    ["```", "   ````python", "\t```", "## Risk", "# T", "1. `a.py:1-2` — fault", "Reason: r",
     "Rationale: q", "Confidence: 0.3", "", "   "]
)  # fmt: skip
"""Code lines that look like the template's own syntax."""
_CODE_TEXT = st.lists(st.text(_CODE, max_size=30) | _LOOKALIKES, max_size=5).map("\n".join)
_PATH = st.lists(
    st.text(st.characters(exclude_categories=("Cs", "Cc", "Zl", "Zp"), exclude_characters="`:"),
            min_size=1, max_size=12).map(str.strip).filter(bool),
    min_size=1, max_size=3,
).map("/".join)  # fmt: skip
_SYMBOL = st.from_regex(r"[A-Za-z_$<>][\w.$<>]{0,20}", fullmatch=True)


@st.composite
def _locations(draw: st.DrawFn) -> Location:
    start = draw(st.integers(1, 10**6))
    return Location(
        path=draw(_PATH),
        start_line=start,
        end_line=start + draw(st.integers(0, 500)),
        symbol=draw(st.none() | _SYMBOL),
        role=draw(st.sampled_from(Role)),
        evidence=draw(_CODE_TEXT),
        reason=draw(_one_line(empty=True)),
    )


_CHANGES = st.builds(
    Change,
    path=_PATH,
    summary=_one_line(),
    rationale=_one_line(empty=True),
    diff=st.none() | _CODE_TEXT.map(lambda text: text + "\n"),
)
DRAFTS = st.builds(
    Draft,
    title=_one_line(),
    root_cause=st.builds(
        RootCause,
        summary=_PROSE.filter(lambda s: len(s) <= 500),
        explanation=_EXPLANATION,
        confidence=st.floats(0.0, 1.0),
    ),
    files=st.lists(_locations(), max_size=3),
    changes=st.lists(_CHANGES, max_size=2),
    complexity=st.sampled_from(Level),
    risk=st.sampled_from(Level),
    rationale=_one_line(empty=True),
)


@settings(deadline=None, max_examples=200)
@given(DRAFTS)
def test_every_draft_renders_to_a_report_that_parses_back_to_it(draft: Draft) -> None:
    assert parse_report(render(draft)) == draft


def _draft_of(finding: Finding) -> Draft:
    assert finding.root_cause is not None
    return Draft(
        title=finding.title,
        root_cause=finding.root_cause,
        files=finding.files,
        changes=finding.changes,
        complexity=finding.risk.complexity,
        risk=finding.risk.risk,
        rationale=finding.risk.rationale,
    )


@pytest.mark.parametrize("name", ["python_crash", "js_bug_partial"])
def test_hand_written_findings_round_trip(name: str) -> None:
    finding = Finding.model_validate(
        json.loads(Path(FIXTURES / "findings" / f"{name}.json").read_text())
    )
    draft = _draft_of(finding)
    assert parse_report(render(draft)) == draft
    assert render(parse_report(render(draft))) == render(draft)
