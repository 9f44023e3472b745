"""A run's limits: the funnel goes to its report while one still fits, and a run over a
hard limit fails naming the setting to raise."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RunUsage

from diagnoser.agent import OUTPUT_RETRIES
from diagnoser.budget import REPORT_REQUESTS, Budget, RunLimits
from diagnoser.draft import Draft
from diagnoser.events import State
from diagnoser.finding import Location, RootCause
from diagnoser.funnel import Funnel, Stage
from diagnoser.intake import ReportIn
from diagnoser.models import RoleModels
from diagnoser.pipeline import diagnose
from diagnoser.settings import Settings
from diagnoser.template import render
from diagnoser.workspace import Workspace

TRACE = (
    'Traceback (most recent call last):\n  File "/srv/src/app.py", line 13, in checkout\n'
    '    return cart.total()\n  File "/srv/src/app.py", line 9, in total\n'
    "    return sum(item.price for item in self.items)\n"
    "TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'\n"
)

LIMITS = RunLimits(
    requests=30, tool_calls=20, input_tokens=100_000, output_tokens=30_000, total_tokens=120_000
)


def test_the_report_reserve_is_the_report_and_its_retries() -> None:
    assert REPORT_REQUESTS == 1 + OUTPUT_RETRIES


def test_limits_come_from_the_settings() -> None:
    settings = Settings(request_limit=9, max_tool_calls=4, max_input_tokens=5,
                        max_output_tokens=6, max_total_tokens=7)  # fmt: skip
    limits = RunLimits.of(settings)
    hard = limits.usage_limits(RunUsage(input_tokens=2, output_tokens=1))
    assert (hard.request_limit, hard.tool_calls_limit) == (9, 4)
    assert (hard.input_tokens_limit, hard.output_tokens_limit, hard.total_tokens_limit) == (3, 5, 4)


@pytest.mark.parametrize(
    ("usage", "last_input", "why"),
    [
        (RunUsage(requests=26), 1_000, None),
        (RunUsage(requests=27), 1_000, "request budget: 27 of 30 used"),
        (RunUsage(requests=5, tool_calls=20), 1_000, "tool-call budget: 20 of 20 used"),
        (RunUsage(requests=5, input_tokens=60_000), 10_000, None),
        (RunUsage(requests=5, input_tokens=60_001), 10_000, "input-token budget: 60,001 of"),
        (RunUsage(requests=5, output_tokens=22_001), 100, "output-token budget: 22,001 of"),
    ],
)
def test_the_report_is_due_when_one_more_step_and_the_report_would_not_fit(
    usage: RunUsage, last_input: int, why: str | None
) -> None:
    due = LIMITS.report_due(usage, last_input)
    assert due == why if why is None else (due or "").startswith(why)


def test_a_budget_ends_the_stage_before_the_request_and_meters_it_in_the_next() -> None:
    funnel = Funnel()
    budget = Budget(RunLimits(requests=5, tool_calls=9, input_tokens=10**6,
                              output_tokens=10**6, total_tokens=10**6))  # fmt: skip
    budget.before_request(funnel, RunUsage(requests=1))
    assert funnel.stage is Stage.EXPLORE
    budget.before_request(funnel, RunUsage(requests=2))
    assert funnel.stage is Stage.REPORT
    assert [stage for stage, _ in budget.meter.marks] == ["explore", "report"]


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ("Exceeded the input_tokens_limit of 1000 (input_tokens=2345)",
         "the run used 2,345 input tokens, over DIAGNOSER_MAX_INPUT_TOKENS=100,000"),
        ("Exceeded the total_tokens_limit of 1000 (total_tokens=2345)",
         "the run used 2,345 tokens, over DIAGNOSER_MAX_TOTAL_TOKENS=120,000"),
        ("The next tool call(s) would exceed the tool_calls_limit of 20 (tool_calls=23).",
         "the model asked for 23 tool calls, over DIAGNOSER_MAX_TOOL_CALLS=20"),
        ("The next request would exceed the request_limit of 30",
         "the run made 30 model requests, the most DIAGNOSER_REQUEST_LIMIT=30 allows"),
    ],
)  # fmt: skip
def test_an_exceeded_limit_is_said_with_the_setting_to_raise(message: str, reason: str) -> None:
    assert LIMITS.exceeded(UsageLimitExceeded(message), RunUsage(requests=30)) == reason


def test_what_earlier_steps_spent_counts_towards_the_run() -> None:
    error = UsageLimitExceeded("Exceeded the output_tokens_limit of 10 (output_tokens=20)")
    reason = LIMITS.exceeded(error, spent=RunUsage(output_tokens=29_990))
    assert reason == "the run used 30,010 output tokens, over DIAGNOSER_MAX_OUTPUT_TOKENS=30,000"


REPORT = render(Draft(
    title="TypeError in Cart.total",
    root_cause=RootCause(summary="sums prices that may be None", confidence=0.7),
    files=[Location(path="src/app.py", start_line=8, end_line=9)],
))  # fmt: skip


def grepping(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """A model that greps while it may, then writes its report."""
    if any(t.name == "grep" for t in info.function_tools):
        return ModelResponse(parts=[ToolCallPart("grep", {"pattern": "total"})])
    return ModelResponse(parts=[TextPart(REPORT)])


def test_a_spent_tool_call_budget_sends_the_funnel_to_its_report(
    repo: Path, tmp_path: Path
) -> None:
    settings = Settings(max_tool_calls=3, repos={"r": repo})
    workspace = Workspace(repo, settings, home=tmp_path / "home")
    outcome = diagnose(ReportIn(text=TRACE), workspace,
                       models=RoleModels.using(FunctionModel(grepping)))  # fmt: skip
    assert outcome.state is State.COMPLETE and outcome.finding is not None
    tools = [e.detail for e in outcome.events if e.detail.startswith("tool grep")]
    assert len(tools) == 3
    moved = [e for e in outcome.events if e.state is State.REPORTING]
    assert moved and moved[0].detail == "tool-call budget: 3 of 3 used"
    assert outcome.finding.provenance.usage.keys() == {"explore", "report"}
    assert outcome.finding.provenance.usage["report"].requests == 1


def test_a_run_over_its_request_limit_fails_naming_the_setting(repo: Path, tmp_path: Path) -> None:
    """Two requests in all: the report at once, one retry of a report off the template,
    and no third."""
    settings = Settings(request_limit=2, repos={"r": repo})
    workspace = Workspace(repo, settings, home=tmp_path / "home")
    rambling = FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart("no idea")]))
    outcome = diagnose(ReportIn(text=TRACE), workspace, models=RoleModels.using(rambling))
    assert outcome.state is State.FAILED
    assert outcome.reason == (
        "the run made 2 model requests, the most DIAGNOSER_REQUEST_LIMIT=2 allows"
    )
    assert outcome.events[-1].detail.startswith(
        f"the model run failed: {outcome.reason} (2 requests"
    )
