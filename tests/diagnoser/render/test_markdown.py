"""Markdown goldens: `tests/fixtures/findings/NAME.md` for each `NAME.json`.

Regenerate with `UPDATE_GOLDEN=1 pytest tests/diagnoser/render` and review the diff.
"""

from __future__ import annotations

import os
import re

import pytest

from diagnoser.finding import (
    Change,
    Finding,
    Location,
    Origin,
    ReproducerSource,
    Reproduction,
    ReproductionStatus,
    RootCause,
    RunFrame,
    Tested,
    TestStatus,
)
from diagnoser.intake.report import Classification, Kind
from diagnoser.render import to_markdown
from diagnoser.render.markdown import PLACED_NOTE, SUSPECTS_NOTE
from tests.diagnoser.render.conftest import FINDING_NAMES, FINDINGS, LoadFinding, with_suspects

UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"


@pytest.mark.parametrize("name", FINDING_NAMES)
def test_golden(name: str, load_finding: LoadFinding) -> None:
    rendered = to_markdown(load_finding(name))
    golden = FINDINGS / f"{name}.md"
    if UPDATE:
        golden.write_text(rendered, encoding="utf-8")
    assert golden.exists(), f"no golden {golden.name}: run with UPDATE_GOLDEN=1"
    assert rendered == golden.read_text(encoding="utf-8")


def test_not_actionable_is_a_short_note(load_finding: LoadFinding) -> None:
    assert to_markdown(load_finding("feature_request")) == (
        "# Please add a dark mode\n\nClassified as feature_request — not investigated.\n"
    )
    untitled = Finding(classification=Kind.NOISE, title="")
    assert to_markdown(untitled) == "# noise report\n\nClassified as noise — not investigated.\n"


def test_grounded_crash_has_every_section(load_finding: LoadFinding) -> None:
    text = to_markdown(load_finding("python_crash"))
    headings = re.findall(r"^#{1,2} .*$", text, flags=re.MULTILINE)
    assert headings == [
        "# TypeError in Cart.total when an item has no price",
        "## Root cause",
        "## Locations",
        "## Proposed changes",
        "## Risk",
        "## Checks",
        "## Provenance",
    ]
    assert "**crash** · ✅ grounded" in text
    assert "Confidence: 87%" in text
    assert "1. `src/shop/cart.py:14-15` — `Cart.total` — **fault** — Sums prices" in text
    assert "3. `src/shop/views.py:8` — `checkout` — **propagation**" in text
    assert text.count("```python\n") == 3
    assert "```diff\n--- a/src/shop/cart.py\n" in text
    assert "7 references in 3 files" in text
    assert "- ✓ **diff applies**: src/shop/cart.py" in text
    assert "Cost: $0.1914" in text
    assert "Tool calls: explore 6 · deep\\_dive 3 · report 0 (total 9)" in text


def test_failed_checks_and_unknown_cost(load_finding: LoadFinding) -> None:
    text = to_markdown(load_finding("js_bug_partial"))
    assert "⚠️ partially grounded" in text
    assert "- ✗ **evidence matches**: dropped" in text
    assert "- Cost: unknown" in text
    assert "```javascript\n" in text and "```tsx\n" in text


def test_cached_tokens_and_the_models_without_a_price_are_named(
    load_finding: LoadFinding,
) -> None:
    finding = load_finding("js_bug_partial")
    provenance = finding.provenance.model_copy(update={
        "input_tokens": 12_000, "cache_read_tokens": 9_000,
        "costs": {"gpt-4o": 0.01, "my-model": None}, "cost_usd": None,
    })  # fmt: skip
    text = to_markdown(finding.model_copy(update={"provenance": provenance}))
    assert "tokens: 12,000 in (9,000 cached), " in text
    assert "- Cost: unknown (no price known for `my-model`)" in text


def _fences(text: str) -> list[tuple[str, str]]:
    """(opening fence, info) of each fenced block, pairing each opener with its closer."""
    blocks, opener = [], None
    for line in text.splitlines():
        match = re.match(r"^(`{3,})(.*)$", line)
        if opener is None and match:
            opener = (match.group(1), match.group(2))
        elif opener is not None and re.fullmatch(rf"`{{{len(opener[0])},}}\s*", line):
            blocks.append(opener)
            opener = None
    assert opener is None, "a fence is left open"
    return blocks


def test_hostile_content_cannot_break_the_document(load_finding: LoadFinding) -> None:
    finding = load_finding("hostile_markdown")
    text = to_markdown(finding)
    # Only our own headings: nothing from the Finding starts a heading line.
    assert re.findall(r"^#+ ", text, flags=re.MULTILINE) == ["# ", *["## "] * 6]
    # The evidence holds runs of 3 and 5 backticks: its fence is longer, and every block closes.
    assert _fences(text) == [("``````", "python"), ("````", "diff")]
    assert "\n<script>" not in text and "\\<script\\>" in text
    assert "`` Renderer.`render` ``" in text
    assert not re.search(r"^ {4}not code", text, flags=re.MULTILINE)


def test_one_line_location_and_no_evidence() -> None:
    finding = Finding(
        classification=Kind.BUG,
        title="t",
        files=[Location(path="a.rb", start_line=5, end_line=5, role="trigger")],
    )
    text = to_markdown(finding)
    assert "1. `a.rb:5` — **trigger**\n" in text
    assert "```" not in text
    assert "_No root cause was established._" in text


def _triaged(kind: Kind, signals: list[str]) -> Finding:
    triage = Classification(kind=kind, confidence=0.85, signals=signals, prior="review")
    return Finding(classification=kind, title="t", triage=triage)


def test_the_triage_line_names_kind_confidence_and_deciding_signals() -> None:
    text = to_markdown(
        _triaged(Kind.PRAISE, ["prior:review", "rule:praise", "negated:never failed"])
    )
    assert text.endswith(
        "Triage: praise · 85% confident · `prior:review`, `rule:praise`, `negated:never failed`\n"
    )
    crash = _triaged(Kind.CRASH, ["prior:developer", "rule:trace", "trace:python"])
    crash = crash.model_copy(update={"root_cause": RootCause(summary="x", confidence=0.5)})
    assert "Triage: crash · 85% confident · `prior:developer`" in to_markdown(crash)


def test_the_triage_line_is_one_line_however_many_signals() -> None:
    many = [f"failure:phrase {n}" for n in range(20)] + ["evil `tick`\n# heading"]
    [line] = [row for row in to_markdown(_triaged(Kind.BUG, many)).splitlines() if "Triage" in row]
    assert line.endswith("(+15 more)") and "# heading" not in line


def test_suspects_are_a_table_after_the_locations(load_finding: LoadFinding) -> None:
    text = to_markdown(with_suspects(load_finding("python_crash")))
    headings = re.findall(r"^## .*$", text, flags=re.MULTILINE)
    assert headings[headings.index("## Locations") + 1] == "## Suspects"
    assert "| # | file:line | function | score | why |" in text
    assert (
        "| 1 | `src/shop/cart.py:14` | `Cart.total` | 1.00 | "
        "frame: where it failed: the innermost in-app frame |"
    ) in text
    assert (
        "| 2 | `src/shop/a\\|b.py:3` | — | 0.46 | words: shares the report's words: `x \\| y` |"
        in text
    )
    assert "## Suspects" not in to_markdown(load_finding("python_crash"))  # none: no section


def test_the_suspects_table_has_five_cells_a_row_even_with_pipes(load_finding: LoadFinding) -> None:
    markdown_it = pytest.importorskip("markdown_it")
    text = to_markdown(with_suspects(load_finding("python_crash")))
    parser = markdown_it.MarkdownIt("commonmark").enable("table")  # GFM tables
    tokens = parser.parse(text)
    cells_per_row: list[int] = []
    for token in tokens:
        if token.type == "tr_open":
            cells_per_row.append(0)
        elif token.type in ("td_open", "th_open"):
            cells_per_row[-1] += 1
    assert cells_per_row == [5, 5, 5]
    html = parser.render(text)
    assert "<code>src/shop/a|b.py:3</code>" in html


def _ran(finding: Finding) -> Finding:
    """`finding` with a run that reproduced it and a change whose tests failed."""
    reproduction = Reproduction(
        status=ReproductionStatus.REPRODUCED, reason="raised TypeError in src/shop/cart.py",
        source=ReproducerSource.SNIPPET, command="python -I snippet.py",
        exception="TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'",
        frames=[RunFrame(path="src/shop/views.py", line=8, function="checkout"),
                RunFrame(path="src/shop/cart.py", line=15, function=None)],
        seconds=1.234, log="0123456789abcdef",
    )  # fmt: skip
    tested = Tested(status=TestStatus.FAILED, command="pytest -q tests/test_cart.py",
                    detail="test_total_skips_none failed", log="fedcba9876543210")  # fmt: skip
    changes = [change.model_copy(update={"tested": tested}) for change in finding.changes]
    return finding.model_copy(update={"reproduction": reproduction, "changes": changes})


def test_nothing_run_is_one_line_under_the_badge(load_finding: LoadFinding) -> None:
    lines = to_markdown(load_finding("python_crash")).splitlines()
    badge = lines.index("**crash** · ✅ grounded")
    assert lines[badge + 2] == (
        "Reproduction: not attempted — verification is off "
        "(--verify or DIAGNOSER\\_VERIFY=1 turns it on)"
    )
    assert "## Reproduction" not in lines
    assert "Tested: **not run**" in lines  # each change says its tests did not run


def test_a_reproduced_run_and_a_tested_change_are_shown(load_finding: LoadFinding) -> None:
    text = to_markdown(_ran(load_finding("python_crash")))
    headings = re.findall(r"^## .*$", text, flags=re.MULTILINE)
    assert headings[:3] == ["## Root cause", "## Reproduction", "## Locations"]
    assert "Reproduction: not attempted" not in text
    assert "**reproduced** — raised TypeError in src/shop/cart.py\n" in text
    assert "- Reproducer: code the report carries\n- Command: `python -I snippet.py`\n" in text
    assert (
        "- Exception: `TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'`"
    ) in text
    assert (
        "- Time: 1.23 s\n- Log: `0123456789abcdef` (`diagnoser log 0123456789abcdef` prints it)"
    ) in text
    assert (
        "Frames in the repository, outermost first:\n\n"
        "1. `src/shop/views.py:8` in `checkout`\n2. `src/shop/cart.py:15`\n"
    ) in text
    assert (
        "Tested: **failed** — test\\_total\\_skips\\_none failed · `pytest -q tests/test_cart.py`"
        " · log `fedcba9876543210` (`diagnoser log fedcba9876543210` prints it)"
    ) in text


def test_a_run_that_could_not_start_says_why_without_a_command() -> None:
    finding = Finding(
        classification=Kind.CRASH, title="t",
        root_cause=RootCause(summary="s", confidence=0.5),
        reproduction=Reproduction(status=ReproductionStatus.ERROR, reason="no bubblewrap"),
    )  # fmt: skip
    text = to_markdown(finding)
    assert "## Reproduction\n\n**could not run** — no bubblewrap\n\n## Locations" in text
    assert "Command:" not in text and "Time:" not in text


def test_a_template_made_change_says_so() -> None:
    made = Change(path="a.py", summary="ceiling division (line 2)", diff="--- a/a.py\n",
                  origin=Origin.TEMPLATE, tested=Tested(status=TestStatus.PASSED))  # fmt: skip
    cause = RootCause(summary="pages round down", confidence=0.6)
    finding = Finding(classification=Kind.BUG, title="t", root_cause=cause, changes=[made])
    text = to_markdown(finding)
    assert "repair template, not a model" in text and "Tested: **passed**" in text
    by_model = finding.model_copy(
        update={"changes": [made.model_copy(update={"origin": Origin.MODEL})]}
    )
    assert "repair template" not in to_markdown(by_model)


def test_a_requests_suspects_are_labelled_as_ranking_only(load_finding: LoadFinding) -> None:
    request = with_suspects(load_finding("feature_request"))
    rendered = to_markdown(request)
    assert "not investigated" in rendered and "## Suspects" in rendered
    assert PLACED_NOTE in rendered and SUSPECTS_NOTE not in rendered
    assert f"`{request.suspects[0].path}:{request.suspects[0].line}`" in rendered
