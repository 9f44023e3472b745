"""What the pipeline's tests share: the sample reports and a trace into the small repo;
scripted explorer and formatter models (`writer`, `formatter_answering`)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from diagnoser.intake import ReportIn, from_payload
from diagnoser.pipeline import Outcome, diagnose
from diagnoser.workspace import Workspace

SAMPLES = Path(__file__).resolve().parents[3] / "sample_reports"
EXPECTED = json.loads((SAMPLES / "expected.json").read_text())
TRACE = (
    'Traceback (most recent call last):\n  File "/srv/src/app.py", line 13, in checkout\n'
    '    return cart.total()\n  File "/srv/src/app.py", line 9, in total\n'
    "    return sum(item.price for item in self.items)\n"
    "TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'\n"
)
CRASH = SAMPLES / "reports" / "issue_load_more_500.md"


def run_sample(entry: dict[str, object], workspace: Workspace) -> Outcome:
    text = (SAMPLES / str(entry["report"])).read_text()
    if entry["kind"] == "text":
        return diagnose(ReportIn(text=text, rating=entry.get("rating")), workspace)  # type: ignore[arg-type]
    [intake, *_] = from_payload(str(entry["kind"]), json.loads(text))
    return diagnose(intake.report, workspace, traces=intake.traces)


def writer(*reports: str) -> tuple[FunctionModel, list[str]]:
    """A model that goes straight to the report stage and writes the given reports in turn;
    it records every retry prompt it is shown."""
    seen: list[str] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        offered = {t.name for t in info.function_tools}
        if "focus" in offered:
            return ModelResponse(parts=[ToolCallPart("focus", {"locations": ["src/app.py:8-9"]})])
        if "conclude" in offered:
            return ModelResponse(parts=[ToolCallPart("conclude", {})])
        seen.append(str(messages[-1]))
        return ModelResponse(parts=[TextPart(reports[min(len(seen) - 1, len(reports) - 1)])])

    return FunctionModel(respond), seen


REPORT = """# TypeError in Cart.total
## Root cause
Cart.total sums prices that can be None.
Confidence: 0.8
## Locations
1. `{path}:8-9` — `Cart.total` — fault
   Reason: sums None prices
   ```
   return sum(item.price for item in self.items)
   ```
"""


def formatter_answering(
    draft: dict[str, object], schemas: list[dict[str, object]] | None = None
) -> FunctionModel:
    """A formatter model that answers with `draft` as its structured output (and notes
    the output schema it was shown in `schemas`)."""

    def extract(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        [output_tool] = info.output_tools
        if schemas is not None:
            schemas.append(output_tool.parameters_json_schema)
        return ModelResponse(parts=[ToolCallPart(output_tool.name, draft)])

    return FunctionModel(extract, model_name="cheap-formatter")


CART_DRAFT: dict[str, object] = {
    "title": "None prices in Cart.total",
    "root_cause": {"summary": "sums None prices", "confidence": 0.6},
    "files": [{"path": "src/app.py", "start_line": 8, "end_line": 9, "symbol": "Cart.total"}],
}
