"""A scripted model for agents with a structured output (the formatter, triage)."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel


@dataclass(frozen=True, slots=True)
class Asked:
    """One request the model was sent: its messages and what it was offered."""

    messages: list[ModelMessage]
    info: AgentInfo


def answering(
    *answers: dict[str, object], model_name: str = "cheap"
) -> tuple[FunctionModel, list[Asked]]:
    """A model that answers in turn with `answers` as its output (the last one again and
    again), keeping every request it was sent."""
    asked: list[Asked] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        asked.append(Asked(messages, info))
        [output_tool] = info.output_tools
        chosen = answers[min(len(asked), len(answers)) - 1]
        return ModelResponse(parts=[ToolCallPart(output_tool.name, chosen)])

    return FunctionModel(answer, model_name=model_name), asked
