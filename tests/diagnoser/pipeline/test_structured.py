"""`diagnoser.pipeline.structured`: the template parsed for free, an off-template report
structured by the formatter model (and failing without one), and nothing a formatter
claims beyond the Draft kept."""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic_ai.usage import RunUsage

from diagnoser.events import State
from diagnoser.finding import Status
from diagnoser.intake import Kind, ReportIn
from diagnoser.models import RoleModels
from diagnoser.pipeline import StepFailed, diagnose, structure
from diagnoser.workspace import Workspace
from tests.diagnoser.pipeline.scripted import CART_DRAFT, REPORT, TRACE, formatter_answering, writer


def test_structure_parses_the_template_and_fails_off_it_without_a_formatter() -> None:
    structured = asyncio.run(structure(REPORT.format(path="src/app.py"), None))
    assert structured.formatter is None and structured.draft.files[0].path == "src/app.py"
    assert structured.usage == RunUsage()  # the parser costs nothing
    with pytest.raises(StepFailed, match="no '# title' line"):
        asyncio.run(structure("no template here", None))


def test_an_off_template_report_goes_to_the_formatter_model(workspace: Workspace) -> None:
    model, _ = writer("The bug: Cart.total in src/app.py lines 8-9 sums None prices.")
    formatter = formatter_answering(CART_DRAFT)
    outcome = diagnose(ReportIn(text=TRACE), workspace, models=RoleModels.using(model, formatter))
    assert outcome.state is State.COMPLETE and outcome.finding is not None
    assert outcome.finding.status is Status.GROUNDED
    assert outcome.finding.classification is Kind.CRASH  # intake's, not the formatter's
    assert outcome.finding.provenance.models[-1] == "cheap-formatter"
    assert any("formatter model takes over" in e.detail for e in outcome.events)


def test_a_formatter_cannot_claim_status_checks_or_blast_radius(workspace: Workspace) -> None:
    """The formatter's schema has no field for what grounding computes; whatever a model
    sends there anyway is dropped, and the Finding's checks are grounding's alone."""
    claimed = {
        **CART_DRAFT,
        "files": [{"path": "src/cart.py", "start_line": 8, "end_line": 9}],  # no such file
        "status": "grounded",
        "checks": [{"name": "all good", "passed": True, "detail": "trust me"}],
        "blast_radius": {"symbols": ["everything"], "references": 999},
        "provenance": {"models": ["gpt-9"], "requests": 0},
        "suspects": [{"path": "made/up.py", "line": 1, "score": 9, "source": "frame"}],
        "classification": "praise",
    }
    schemas: list[dict[str, object]] = []
    model, _ = writer("The bug: Cart.total in src/cart.py lines 8-9 sums None prices.")
    outcome = diagnose(
        ReportIn(text=TRACE),
        workspace,
        models=RoleModels.using(model, formatter_answering(claimed, schemas)),
    )
    properties = set(schemas[0]["properties"])  # type: ignore[call-overload]
    assert not properties & {"status", "checks", "provenance", "suspects", "classification"}
    assert "blast_radius" not in json.dumps(schemas[0])
    finding = outcome.finding
    assert outcome.state is State.COMPLETE and finding is not None
    assert finding.status is Status.UNGROUNDED and finding.classification is Kind.CRASH
    assert [(c.name, c.passed) for c in finding.checks] == [("files[0] src/cart.py:8-9", False)]
    assert finding.risk.blast_radius.symbols == [] and finding.risk.blast_radius.references == 0
    assert finding.provenance.models == [model.model_name, "cheap-formatter"]
    assert "made/up.py" not in [s.path for s in finding.suspects]
