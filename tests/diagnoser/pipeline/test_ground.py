"""`diagnoser.pipeline.ground`: the draft checked against the files, and the Finding's
provenance — every model's usage and cost — and suspects."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RunUsage

from diagnoser.candidate import Source as SuspectSource
from diagnoser.events import State
from diagnoser.finding import Status
from diagnoser.intake import Kind, ReportIn, Source
from diagnoser.models import RoleModels
from diagnoser.pipeline import (
    Investigation,
    diagnose,
    ground_finding,
    intake,
    investigate,
    structure,
)
from diagnoser.pipeline.run import PLACED_TITLE
from diagnoser.workspace import Workspace
from tests.diagnoser.pipeline.scripted import (
    CART_DRAFT,
    CRASH,
    REPORT,
    SAMPLES,
    TRACE,
    formatter_answering,
    writer,
)


def test_ground_finding_checks_the_files_and_adds_provenance(workspace: Workspace) -> None:
    markdown = REPORT.format(path="src/app.py")
    structured = asyncio.run(structure(markdown, None))
    cost = Investigation(
        markdown, "scripted", RunUsage(requests=3, input_tokens=90), {"explore": 1}
    )
    finding = ground_finding(
        structured, workspace, cost, kind=Kind.CRASH, durations={"exploring": 0.5}
    )
    assert finding.status is Status.GROUNDED and finding.classification is Kind.CRASH
    assert finding.report_markdown == markdown
    assert finding.provenance.models == ["scripted"] and finding.provenance.requests == 3
    assert finding.provenance.input_tokens == 90
    assert finding.provenance.tool_calls == {"explore": 1}
    assert finding.provenance.durations == {"exploring": 0.5}


def test_the_formatters_usage_is_counted_in_the_provenance(workspace: Workspace) -> None:
    model, _ = writer("The bug: Cart.total in src/app.py lines 8-9 sums None prices.")
    report = intake(ReportIn(text=TRACE), workspace)
    explored = asyncio.run(investigate(report, workspace, model))
    structured = asyncio.run(structure(explored.markdown, formatter_answering(CART_DRAFT)))
    assert structured.formatter == "cheap-formatter"
    assert structured.usage.requests == 1 and structured.usage.input_tokens > 0
    finding = ground_finding(structured, workspace, explored, kind=Kind.CRASH, durations={})
    both = explored.usage + structured.usage
    assert finding.provenance.requests == both.requests == explored.usage.requests + 1
    assert finding.provenance.input_tokens == both.input_tokens > explored.usage.input_tokens
    assert finding.provenance.output_tokens == both.output_tokens
    chosen = RoleModels.using(model, formatter_answering(CART_DRAFT))
    outcome = diagnose(ReportIn(text=TRACE), workspace, models=chosen)
    assert outcome.finding is not None and outcome.finding.provenance.requests == both.requests
    # Per part of the run, and in the events: the formatter's apart, as `structure`.
    assert outcome.finding.provenance.usage["structure"].requests == 1
    notes = {e.detail.split(":")[0]: e.usage for e in outcome.events if e.usage}
    assert notes.keys() == {"usage investigate", "usage structure"}
    assert notes["usage structure"] == outcome.finding.provenance.usage["structure"]
    # Neither function model has a price: unknown, not zero.
    assert outcome.finding.provenance.costs == {model.model_name: None, "cheap-formatter": None}
    assert outcome.finding.provenance.cost_usd is None


def test_the_offline_investigator_costs_nothing_and_says_so(demo: Workspace) -> None:
    outcome = diagnose(ReportIn(text=CRASH.read_text()), demo)
    assert outcome.finding is not None
    provenance = outcome.finding.provenance
    assert provenance.costs == {"offline": 0.0} and provenance.cost_usd == 0.0
    assert provenance.requests == sum(u.requests for u in provenance.usage.values()) > 0
    assert any(e.detail.endswith(", $0.0000") for e in outcome.events if e.usage)


def test_a_trace_that_never_enters_the_repo_is_reported_as_not_located(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("# nothing to map\n")
    trace = (
        'Traceback (most recent call last):\n  File "/x/app.py", line 3, in main\n'
        "    f()\nValueError: bad\n"
    )
    outcome = diagnose(ReportIn(text=trace), Workspace(repo, home=tmp_path / "home"))
    finding = outcome.finding
    assert outcome.state is State.COMPLETE and finding is not None
    assert finding.title == "Not located: ValueError: bad"
    assert finding.files == [] and finding.status is Status.UNGROUNDED
    assert finding.root_cause is not None and finding.root_cause.confidence == 0.1


def test_a_real_model_gets_our_suspects_too_not_its_own(workspace: Workspace) -> None:
    model, _ = writer("The bug: Cart.total in src/app.py lines 8-9 sums None prices.")
    formatter = formatter_answering(
        {
            **CART_DRAFT,
            "suspects": [{"path": "made/up.py", "line": 1, "score": 9, "source": "frame"}],
        }
    )
    outcome = diagnose(ReportIn(text=TRACE), workspace, models=RoleModels.using(model, formatter))
    assert outcome.finding is not None and outcome.finding.suspects
    assert outcome.finding.suspects[0].path == "src/app.py"
    assert "made/up.py" not in [s.path for s in outcome.finding.suspects]


def test_a_report_not_investigated_has_no_suspects(demo: Workspace) -> None:
    praise = (SAMPLES / "reports/review_praise.txt").read_text()
    outcome = diagnose(ReportIn(text=praise, source=Source.REVIEW, rating=5), demo)
    assert outcome.state is State.NOT_ACTIONABLE and outcome.finding is not None
    assert outcome.finding.suspects == []


def test_a_request_is_not_investigated_but_gets_ranked_suspects_without_a_model_call(
    demo: Workspace,
) -> None:
    calls: list[object] = []

    def refuse(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls.append(messages)
        raise AssertionError("a request is ranked, never investigated")

    request = (SAMPLES / "reports/feature_request_tags.txt").read_text()
    models = RoleModels.using(FunctionModel(refuse), FunctionModel(refuse))
    outcome = diagnose(ReportIn(text=request, source=Source.GITHUB), demo, models=models)
    finding = outcome.finding
    assert outcome.state is State.NOT_ACTIONABLE and finding is not None and calls == []
    assert finding.classification is Kind.FEATURE_REQUEST and finding.files == []
    assert finding.title.endswith(PLACED_TITLE) and finding.suspects
    assert {s.source for s in finding.suspects} <= {SuspectSource.WORDS, SuspectSource.MENTION}
    assert State.EXPLORING not in [e.state for e in outcome.events]
