"""`diagnoser.pipeline.investigation`: the explorer through the funnel — its markdown
and cost, its failures as `StepFailed`, bounded output retries and usage, the settings
that reach it, and the model tests swap under it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from diagnoser.agent import OUTPUT_RETRIES, explorer
from diagnoser.events import State
from diagnoser.finding import Status
from diagnoser.intake import ReportIn
from diagnoser.models import RoleModels
from diagnoser.pipeline import StepFailed, diagnose, intake, investigate
from diagnoser.settings import Settings
from diagnoser.workspace import Workspace
from tests.diagnoser.pipeline.scripted import REPORT, TRACE, writer


def test_investigate_returns_the_markdown_and_what_it_cost(workspace: Workspace) -> None:
    model, _ = writer(REPORT.format(path="src/app.py"))
    report = intake(ReportIn(text=TRACE), workspace)
    found = asyncio.run(investigate(report, workspace, model))
    assert found.markdown == REPORT.format(path="src/app.py")
    assert found.model == model.model_name
    assert found.tool_calls == {"explore": 0, "deep_dive": 0, "report": 0}
    assert found.usage.requests == 3 and found.usage.input_tokens > 0


def test_investigate_turns_a_model_failure_into_step_failed(workspace: Workspace) -> None:
    def unreachable(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise ConnectionRefusedError("refused")

    report = intake(ReportIn(text=TRACE), workspace)
    with pytest.raises(StepFailed) as failed:
        asyncio.run(investigate(report, workspace, FunctionModel(unreachable)))
    assert failed.value.reason == "ConnectionRefusedError: refused"


def test_a_hallucinated_path_goes_back_as_a_retry_and_the_corrected_report_verifies(
    workspace: Workspace,
) -> None:
    model, seen = writer(REPORT.format(path="src/cart.py"), REPORT.format(path="src/app.py"))
    outcome = diagnose(ReportIn(text=TRACE), workspace, models=RoleModels.using(model))
    assert outcome.state is State.COMPLETE and outcome.finding is not None
    assert outcome.finding.status is Status.GROUNDED
    assert "files[0]: no such file: src/cart.py" in seen[1]


def test_output_that_never_fits_the_template_ends_failed_with_the_reason(
    workspace: Workspace,
) -> None:
    model, seen = writer("I think it is probably the cart, good luck!")
    outcome = diagnose(ReportIn(text=TRACE), workspace, models=RoleModels.using(model))
    assert outcome.state is State.FAILED and outcome.finding is None
    assert "no '# title' line" in outcome.reason
    assert len(seen) == 1 + OUTPUT_RETRIES  # the first answer and the bounded retries


def test_a_model_that_never_stops_hits_the_usage_limit_and_fails(workspace: Workspace) -> None:
    def forever(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart("list_dir", {"path": "."})])

    outcome = diagnose(
        ReportIn(text=TRACE), workspace, models=RoleModels.using(FunctionModel(forever))
    )
    assert outcome.state is State.FAILED and outcome.finding is None
    assert outcome.reason


def test_tests_can_swap_the_explorers_model_under_the_whole_pipeline(
    workspace: Workspace,
) -> None:
    """`explorer` is one module-level agent: overriding its model reaches every run, even
    one configured for the embedded offline model."""
    model, seen = writer(REPORT.format(path="src/app.py"))
    with explorer.override(model=model):
        outcome = diagnose(ReportIn(text=TRACE), workspace)
    assert outcome.state is State.COMPLETE and outcome.finding is not None
    assert len(seen) == 1 and outcome.finding.report_markdown == REPORT.format(path="src/app.py")


def test_the_map_size_and_the_trimming_come_from_the_workspace_settings(
    repo: Path, tmp_path: Path
) -> None:
    """`DIAGNOSER_MAP_TOKENS` and `DIAGNOSER_KEEP_TOOL_RESULTS` reach a run."""
    seen: list[tuple[str, list[str]]] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        instructions = next(m.instructions for m in messages if hasattr(m, "instructions"))
        results = [str(p.content) for m in messages for p in getattr(m, "parts", [])
                   if p.part_kind == "tool-return"]  # fmt: skip
        seen.append((instructions or "", results))
        if len(seen) <= 3:
            args = {"path": "src/app.py", "start": 1, "end": 3}
            return ModelResponse(parts=[ToolCallPart("read_range", args)])
        return ModelResponse(parts=[TextPart(REPORT)])

    def run(**settings: int) -> list[tuple[str, list[str]]]:
        seen.clear()
        home = tmp_path / f"home-{len(settings)}-{sorted(settings.items())}"
        workspace = Workspace(repo, Settings(**settings), home=home)  # type: ignore[arg-type]
        diagnose(ReportIn(text=TRACE), workspace, models=RoleModels.using(FunctionModel(respond)))
        return list(seen)

    wide, narrow = run(), run(map_tokens=64, keep_tool_results=1)
    assert len(narrow[0][0]) < len(wide[0][0])  # a smaller map in the instructions
    assert not any(r.startswith("[trimmed:") for r in wide[-1][1])  # 3 results, 6 kept
    assert [r.startswith("[trimmed:") for r in narrow[-1][1]] == [True, True, False]
