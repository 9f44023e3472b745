"""The one explorer agent: its instructions show the template, and its output validator
sends a report off the template or off the files back with the exact mismatch — at most
OUTPUT_RETRIES times, the same bound as the agent's output budget."""

from __future__ import annotations

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from diagnoser.agent import INSTRUCTIONS, OUTPUT_RETRIES, ExplorerDeps, explorer
from diagnoser.draft import Draft
from diagnoser.finding import Location, RootCause
from diagnoser.funnel import Funnel, Stage
from diagnoser.intake import ReportIn, build_report
from diagnoser.template import TEMPLATE, render
from diagnoser.workspace import Workspace


def report_stage(workspace: Workspace) -> ExplorerDeps:
    """Deps of a run already in the report stage: no tools, only the writing."""
    report = build_report(ReportIn(text="checkout crashes"), files=workspace.file_paths)
    return ExplorerDeps(workspace=workspace, report=report, funnel=Funnel(stage=Stage.REPORT))


def writing(*reports: str) -> tuple[FunctionModel, list[ModelRequest]]:
    """A model that writes `reports` in turn (the last one again and again); it keeps
    every request it answers."""
    requests: list[ModelRequest] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        assert isinstance(messages[-1], ModelRequest)
        requests.append(messages[-1])
        return ModelResponse(parts=[TextPart(reports[min(len(requests), len(reports)) - 1])])

    return FunctionModel(respond), requests


def cited(start: int, end: int) -> str:
    return render(
        Draft(
            title="TypeError in Cart.total",
            root_cause=RootCause(summary="sums prices that may be None", confidence=0.7),
            files=[Location(path="src/app.py", start_line=start, end_line=end)],
        )
    )


def test_the_instructions_show_the_template_and_its_vocabulary() -> None:
    assert INSTRUCTIONS.endswith(TEMPLATE)
    assert "fault|trigger|propagation|context" in INSTRUCTIONS
    assert "low|medium|high" in INSTRUCTIONS


def test_a_citation_off_the_files_goes_back_once_with_the_exact_mismatch(
    workspace: Workspace,
) -> None:
    model, requests = writing(cited(40, 48), cited(8, 9))
    with explorer.override(model=model):
        result = explorer.run_sync("go", deps=report_stage(workspace))
    assert result.output == cited(8, 9) and len(requests) == 2
    assert "files[0]: lines 40-48 are past the end of src/app.py (13 lines)" in str(requests[1])


def test_the_validator_gives_up_after_output_retries_and_keeps_the_last_answer(
    workspace: Workspace,
) -> None:
    """Not a failure: grounding drops what still fails, and the run ends with a Finding."""
    model, requests = writing("no template", cited(40, 48))
    with explorer.override(model=model):
        result = explorer.run_sync("go", deps=report_stage(workspace))
    assert len(requests) == 1 + OUTPUT_RETRIES
    assert "no '# title' line" in str(requests[1])
    assert result.output == cited(40, 48)


def test_the_repo_map_is_in_the_instructions_of_the_first_request(workspace: Workspace) -> None:
    model, requests = writing(cited(8, 9))
    with explorer.override(model=model):
        explorer.run_sync("go", deps=report_stage(workspace))
    instructions = requests[0].instructions or ""
    assert instructions.startswith(INSTRUCTIONS[:40]) and "Repository map" in instructions
    assert "src/app.py" in instructions
