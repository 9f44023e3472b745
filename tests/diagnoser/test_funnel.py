"""The funnel with scripted PydanticAI models swapped into the one explorer agent
(`explorer.override`): locked tools are not offered and cannot run; budgets move the
stages on by themselves."""

from __future__ import annotations

from pydantic_ai.agent import AgentRunResult
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from diagnoser.agent import TRIMMED, ExplorerDeps, explorer, trim_history
from diagnoser.draft import Draft
from diagnoser.finding import Location, RootCause
from diagnoser.funnel import Funnel, Stage
from diagnoser.intake import ReportIn, build_report
from diagnoser.template import render
from diagnoser.workspace import Workspace

REPORT = render(
    Draft(
        title="TypeError in Cart.total",
        root_cause=RootCause(summary="sums prices that may be None", confidence=0.7),
        files=[Location(path="src/app.py", start_line=8, end_line=9, symbol="Cart.total")],
    )
)
"""A report in the template that grounds in the fixture repository."""


def deps(workspace: Workspace, funnel: Funnel | None = None) -> ExplorerDeps:
    report = build_report(ReportIn(text="checkout crashes"), files=workspace.file_paths)
    return ExplorerDeps(workspace=workspace, report=report, funnel=funnel or Funnel())


def scripted(steps: list[ModelResponse], offered: list[set[str]]) -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        offered.append({t.name for t in info.function_tools})
        return steps[min(len(offered) - 1, len(steps) - 1)]

    return FunctionModel(respond)


def run(
    steps: list[ModelResponse], offered: list[set[str]], deps: ExplorerDeps
) -> AgentRunResult[str]:
    with explorer.override(model=scripted(steps, offered)):
        return explorer.run_sync("go", deps=deps)


def returns(messages: list[ModelMessage]) -> list[tuple[str, str]]:
    return [(p.tool_name, str(p.content)) for m in messages if isinstance(m, ModelRequest)
            for p in m.parts if isinstance(p, ToolReturnPart)]  # fmt: skip


def test_stages_offer_only_their_tools_and_refuse_locked_ones(workspace: Workspace) -> None:
    offered: list[set[str]] = []
    steps = [
        ModelResponse(parts=[ToolCallPart("conclude", {})]),  # locked in explore
        ModelResponse(parts=[ToolCallPart("find_symbol", {"name": "Cart"})]),
        ModelResponse(parts=[ToolCallPart("focus", {"locations": ["src/app.py:4-9"]})]),
        ModelResponse(parts=[ToolCallPart("grep", {"pattern": "cart"})]),  # locked in deep-dive
        ModelResponse(
            parts=[ToolCallPart("read_range", {"path": "src/app.py", "start": 4, "end": 9})]
        ),
        ModelResponse(parts=[ToolCallPart("conclude", {})]),
        ModelResponse(parts=[TextPart(REPORT)]),
    ]
    run_deps = deps(workspace)
    run_deps.keep_tool_results = None  # the history as it was, untrimmed
    result = run(steps, offered, run_deps)
    assert offered[0] == {"grep", "read_range", "list_dir", "find_symbol", "focus"}
    assert offered[3] == {"read_range", "conclude"}
    assert offered[-1] == set()
    texts = dict(returns(result.all_messages()))
    assert "Unknown tool name: 'conclude'" in str(result.all_messages())
    assert "Unknown tool name: 'grep'" in str(result.all_messages())
    assert texts["find_symbol"].startswith("Cart: ")
    assert run_deps.funnel.stage is Stage.REPORT and result.output == REPORT


def test_budgets_force_the_next_stage(workspace: Workspace) -> None:
    offered: list[set[str]] = []
    grep_forever = ModelResponse(parts=[ToolCallPart("grep", {"pattern": "def"})])
    read_forever = ModelResponse(
        parts=[ToolCallPart("read_range", {"path": "src/app.py", "start": 1, "end": 3})]
    )
    steps = [grep_forever] * 3 + [read_forever] * 2 + [ModelResponse(parts=[TextPart(REPORT)])]
    funnel = Funnel(explore_budget=3, deep_dive_budget=2)
    result = run(steps, offered, deps(workspace, funnel))
    assert [("focus" in o, "conclude" in o, not o) for o in offered] == [
        (True, False, False), (True, False, False), (True, False, False),
        (False, True, False), (False, True, False),
        (False, False, True),
    ]  # fmt: skip
    assert funnel.calls[Stage.EXPLORE] == 3 and funnel.calls[Stage.DEEP_DIVE] == 2
    assert result.output == REPORT


def test_tool_errors_come_back_as_retries_the_model_can_act_on(workspace: Workspace) -> None:
    offered: list[set[str]] = []
    steps = [
        ModelResponse(parts=[ToolCallPart("read_range", {"path": "app.py", "start": 1, "end": 3})]),
        ModelResponse(parts=[TextPart(REPORT)]),
    ]
    result = run(steps, offered, deps(workspace))
    assert "no such file: app.py; did you mean src/app.py?" in str(result.all_messages())


def test_deep_dive_reads_only_focused_files_and_neighbours(workspace: Workspace) -> None:
    offered: list[set[str]] = []
    steps = [
        ModelResponse(parts=[ToolCallPart("focus", {"locations": ["src/views.py:4-5"]})]),
        ModelResponse(
            parts=[ToolCallPart("read_range", {"path": "secrets.py", "start": 1, "end": 2})]
        ),
        ModelResponse(
            parts=[ToolCallPart("read_range", {"path": "src/app.py", "start": 1, "end": 2})]
        ),
        ModelResponse(parts=[TextPart(REPORT)]),
    ]
    result = run(steps, offered, deps(workspace))
    text = str(result.all_messages())
    assert "in deep-dive only focused files and their neighbours" in text  # secrets.py
    assert ('read_range', ) and any(name == "read_range" and "src/app.py lines" in body
                                    for name, body in returns(result.all_messages()))  # fmt: skip


def test_old_tool_results_are_trimmed_from_history() -> None:
    messages: list[ModelMessage] = []
    for i in range(9):
        messages.append(
            ModelResponse(parts=[ToolCallPart("grep", {"pattern": str(i)}, tool_call_id=f"c{i}")])
        )
        messages.append(
            ModelRequest(parts=[ToolReturnPart("grep", "x" * 500, tool_call_id=f"c{i}")])
        )
    kept = [
        str(p.content)
        for m in trim_history(messages)
        if isinstance(m, ModelRequest)
        for p in m.parts
    ]
    assert kept[:3] == ["[trimmed: 500 chars, read again if needed]"] * 3
    assert kept[3:] == ["x" * 500] * 6


def test_trimming_keeps_what_it_is_told_and_none_keeps_all() -> None:
    messages: list[ModelMessage] = []
    for i in range(4):
        messages.append(ModelResponse(parts=[ToolCallPart("grep", {}, tool_call_id=f"c{i}")]))
        messages.append(ModelRequest(parts=[ToolReturnPart("grep", f"r{i}", tool_call_id=f"c{i}")]))
    contents = [str(p.content) for m in trim_history(messages, 1) if isinstance(m, ModelRequest)
                for p in m.parts]  # fmt: skip
    assert [c.startswith("[trimmed") for c in contents] == [True, True, True, False]
    assert trim_history(messages, None) is messages


def test_the_runs_trimming_applies_to_what_the_model_sees(workspace: Workspace) -> None:
    """`keep_tool_results` on the deps: 1 → the model's last request shows one whole result
    of five; None → all five."""
    seen: dict[int | None, list[str]] = {}
    for keep in (1, None):
        offered: list[set[str]] = []
        steps = [ModelResponse(parts=[ToolCallPart("grep", {"pattern": "cart"})])] * 5
        run_deps = deps(workspace, Funnel(explore_budget=5, deep_dive_budget=1))
        run_deps.keep_tool_results = keep
        result = run([*steps, ModelResponse(parts=[TextPart(REPORT)])], offered, run_deps)
        seen[keep] = [body for _, body in returns(result.all_messages())]
    assert sum(not b.startswith("[trimmed") for b in seen[1]) == 1
    assert len(seen[None]) == 5 and not any(b.startswith("[trimmed") for b in seen[None])


def test_after_focus_only_reads_of_focused_files_stay_and_a_stub_stays_as_it_is() -> None:
    """Discovery is over once the run focuses: what grep found and reads of other files
    are stubbed; the focused file's read and everything after the focus stay."""
    calls = [("grep", {"pattern": "total"}), ("read_range", {"path": "src/app.py"}),
             ("read_range", {"path": "src/views.py"}), ("focus", {"locations": ["src/app.py:8-9"]}),
             ("read_range", {"path": "src/views.py"})]  # fmt: skip
    messages: list[ModelMessage] = []
    for i, (name, args) in enumerate(calls):
        messages.append(ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=f"c{i}")]))
        messages.append(ModelRequest(parts=[ToolReturnPart(name, f"r{i}", tool_call_id=f"c{i}")]))
    once = trim_history(messages, 6, focused={"src/app.py"})
    contents = [str(p.content) for m in once if isinstance(m, ModelRequest) for p in m.parts]
    assert [c.startswith(TRIMMED) for c in contents] == [True, False, True, False, False]
    assert trim_history(once, 6, focused={"src/app.py"}) == once  # stubs are not re-stubbed
    assert trim_history(messages, 6) == messages  # not focused yet: nothing to drop
    assert trim_history(messages, None, focused={"src/app.py"}) is messages


def test_a_read_batched_with_conclude_counts_in_the_deep_dive(workspace: Workspace) -> None:
    """`focus`, `read_range` and `conclude` are barriers: they run after the calls made
    before them in the same turn, so a read batched with `conclude()` is a deep-dive read."""
    read = ToolCallPart("read_range", {"path": "src/app.py", "start": 8, "end": 9})
    steps = [
        ModelResponse(parts=[ToolCallPart("focus", {"locations": ["src/app.py:8-9"]})]),
        ModelResponse(parts=[read, ToolCallPart("conclude", {})]),
        ModelResponse(parts=[TextPart(REPORT)]),
    ]
    barriers: list[set[str]] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        barriers.append({t.name for t in info.function_tools if t.sequential})
        return steps[len(barriers) - 1]

    run_deps = deps(workspace)
    with explorer.override(model=FunctionModel(respond)):
        result = explorer.run_sync("go", deps=run_deps)
    assert barriers[:2] == [{"focus", "read_range"}, {"read_range", "conclude"}]
    assert run_deps.funnel.calls == {Stage.EXPLORE: 0, Stage.DEEP_DIVE: 1, Stage.REPORT: 0}
    assert result.output == REPORT


def test_reads_in_one_turn_run_and_are_told_in_the_order_asked(workspace: Workspace) -> None:
    """Several `read_range` calls in one response (as the offline model's deep-dive makes
    them) run one after another in the model's order: the run's log and the funnel's
    count follow the calls, whatever the worker threads' timing."""
    lines = [(n, n) for n in (1, 5, 2, 8, 3, 9, 4)]
    reads = [ToolCallPart("read_range", {"path": "src/app.py", "start": a, "end": b})
             for a, b in lines]  # fmt: skip
    steps = [ModelResponse(parts=reads), ModelResponse(parts=[TextPart(REPORT)])]
    told: list[str] = []
    run_deps = deps(workspace, Funnel(explore_budget=len(reads) + 1))
    run_deps.on_tool = told.append
    with explorer.override(model=scripted(steps, [])):
        explorer.run_sync("go", deps=run_deps)
    assert [event.split(" → ")[0] for event in told] == [
        f"read_range src/app.py {a}-{b}" for a, b in lines
    ]
    assert run_deps.funnel.calls[Stage.EXPLORE] == len(reads)
