"""The one explorer agent: its instructions show the template, and its output validator
sends a report off the template or off the files back with the exact mismatch — at most
OUTPUT_RETRIES times, the same bound as the agent's output budget."""

from __future__ import annotations

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from diagnoser.agent import (
    INSTRUCTIONS,
    OUTPUT_RETRIES,
    SUSPECTS_HEADER,
    ExplorerDeps,
    explorer,
    suspect_hints,
)
from diagnoser.draft import Draft
from diagnoser.finding import Location, RootCause, Signal, Suspect
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


SUSPECTS = [
    Suspect(path="src/app.py", symbol="Cart.total", line=9, score=1.0, source=Signal.FRAME,
            reason="where it failed: the innermost in-app frame"),
    Suspect(path="src/views.py", symbol="view", line=5, score=0.5, source=Signal.FRAME,
            reason="trace frame on the path to the failure"),
    Suspect(path="README.md", line=1, score=0.1, source=Signal.WORDS, reason="shares words"),
    Suspect(path="secrets.py", line=1, score=0.1, source=Signal.WORDS, reason="shares words"),
]  # fmt: skip
INVESTIGATION = [
    ToolCallPart("grep", {"pattern": "total"}),
    ToolCallPart("read_range", {"path": "src/app.py", "start": 1, "end": 13}),
    ToolCallPart("focus", {"locations": ["src/app.py:8-9"]}),
    ToolCallPart("read_range", {"path": "src/app.py", "start": 8, "end": 9}),
    ToolCallPart("conclude", {}),
]
"""Every stage of the funnel: two discovery calls, focus, a read in deep-dive, conclude."""


def investigating() -> tuple[FunctionModel, list[str]]:
    """A model that walks the funnel (INVESTIGATION), then writes a grounded report; it
    keeps the instructions of every request it answers."""
    seen: list[str] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        assert isinstance(messages[-1], ModelRequest)
        seen.append(messages[-1].instructions or "")
        if len(seen) <= len(INVESTIGATION):
            return ModelResponse(parts=[INVESTIGATION[len(seen) - 1]])
        return ModelResponse(parts=[TextPart(cited(8, 9))])

    return FunctionModel(respond), seen


def explore_stage(workspace: Workspace, suspects: list[Suspect]) -> ExplorerDeps:
    report = build_report(ReportIn(text="checkout crashes in Cart.total"),
                          files=workspace.file_paths)  # fmt: skip
    return ExplorerDeps(workspace=workspace, report=report, funnel=Funnel(), suspects=suspects)


def test_the_suspects_are_hints_after_the_map_with_their_reasons_in_ranking_order(
    workspace: Workspace,
) -> None:
    model, seen = investigating()
    with explorer.override(model=model):
        explorer.run_sync("go", deps=explore_stage(workspace, SUSPECTS))
    instructions = seen[0]
    assert "hints, not facts: confirm or reject them by reading" in SUSPECTS_HEADER
    block = instructions[instructions.index(SUSPECTS_HEADER) :].splitlines()
    assert block == [
        SUSPECTS_HEADER,
        "1. `src/app.py:9` `Cart.total` (frame): where it failed: the innermost in-app frame",
        "2. `src/views.py:5` `view` (frame): trace frame on the path to the failure",
        "3. `README.md:1` (words): shares words",
        "4. `secrets.py:1` (words)",  # a reason said once is not repeated
    ]
    # after the static instructions and the map: the block ends the prefix
    assert instructions.index(INSTRUCTIONS) < instructions.index("Repository map")
    assert instructions.index("Repository map") < instructions.index(SUSPECTS_HEADER)


def test_the_instructions_are_the_same_at_every_request_of_a_run(workspace: Workspace) -> None:
    """Map and suspects included, through every stage: a stable prefix for prompt caching."""
    model, seen = investigating()
    with explorer.override(model=model):
        result = explorer.run_sync("go", deps=explore_stage(workspace, SUSPECTS))
    assert result.output == cited(8, 9)
    assert len(seen) == len(INVESTIGATION) + 1
    assert seen == [seen[0]] * len(seen) and SUSPECTS_HEADER in seen[0]


def test_without_suspects_there_is_no_block(workspace: Workspace) -> None:
    model, seen = investigating()
    with explorer.override(model=model):
        explorer.run_sync("go", deps=explore_stage(workspace, []))
    assert suspect_hints([]) == ""
    assert "Suspects" not in seen[0] and "hints, not facts" not in seen[0]
    assert "Repository map" in seen[0] and seen[0].rstrip() == seen[0]


def test_the_map_budget_is_the_runs(workspace: Workspace) -> None:
    """A smaller `map_tokens` gives a shorter map (the fixture's full map is ~200 tokens)."""
    sizes = {}
    for tokens in (32, 4_096):
        model, seen = writing(cited(8, 9))
        deps = report_stage(workspace)
        deps.map_tokens = tokens
        with explorer.override(model=model):
            explorer.run_sync("go", deps=deps)
        sizes[tokens] = len(seen[0].instructions or "")
    assert sizes[32] < sizes[4_096]
