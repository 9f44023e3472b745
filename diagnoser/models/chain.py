"""A role's model chain: its real models in the order they are tried, and whether it
ends in `offline`, the embedded investigator, which is built per run from the report,
the workspace and the run's ranking. Two or more models are a PydanticAI
`FallbackModel`: the next is tried when a provider fails; within one run a model that
failed is tried last (`RunFallback`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.settings import ModelSettings

from diagnoser.candidate import Candidate
from diagnoser.constants import OFFLINE_MODEL
from diagnoser.intake.report import Report
from diagnoser.offline import offline_model
from diagnoser.workspace import Workspace

__all__ = ["OFFLINE", "ModelChoice", "RunFallback", "is_offline"]

OFFLINE = OFFLINE_MODEL
"""The embedded investigator's spec and model name."""


def is_offline(spec: str) -> bool:
    return spec.strip() == OFFLINE


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """One role's models, in the order they are tried; `offline` last, built per run."""

    models: tuple[Model, ...] = ()
    offline: bool = True
    """The chain ends in the embedded investigator (the default: nothing else)."""

    def __post_init__(self) -> None:
        if not self.models and not self.offline:
            raise ValueError("a ModelChoice needs a model or offline")

    @classmethod
    def of(cls, *models: Model, offline: bool = False) -> ModelChoice:
        """Given models (tests, embedding): no resolution, no fallback beyond them."""
        return cls(tuple(models), offline)

    @property
    def names(self) -> tuple[str, ...]:
        return (*(m.model_name for m in self.models), *([OFFLINE] if self.offline else []))

    @property
    def name(self) -> str:
        """The chain in words: `openai:gpt-4o → offline`."""
        return " → ".join(self.names)

    def build(
        self, report: Report, workspace: Workspace, candidates: Sequence[Candidate] | None = None
    ) -> Model:
        """The run's model. Blocking when the chain ends in `offline` without `candidates`
        (it ranks for itself), so call it from a worker thread."""
        chain = list(self.models)
        if self.offline:
            chain.append(offline_model(report, workspace, candidates))
        return chain[0] if len(chain) == 1 else RunFallback(*chain)

    def model(self) -> Model:
        """The model of a chain without `offline` (which needs a run)."""
        if self.offline:
            raise ValueError("a chain ending in offline is built per run (build)")
        return self.models[0] if len(self.models) == 1 else FallbackModel(*self.models)


class RunFallback(FallbackModel):
    """One run's fallback chain (`ModelChoice.build`): a model that failed a request is
    tried last for the rest of the run, so a dead provider costs its timeout (or a 500
    storm its retries) once, not at every step of the funnel. PydanticAI's own
    `ModelFallback(sticky=True)` capability does this for an agent's default model only;
    our runs pass their model to `run`. Its name stays the chain's, in the order given."""

    def __init__(self, *models: Model) -> None:
        super().__init__(*models)
        self._names = (super().model_name, super().model_id)

    @property
    def model_name(self) -> str:
        return self._names[0]

    @property
    def model_id(self) -> str:
        return self._names[1]

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        response = await super().request(messages, model_settings, model_request_parameters)
        failed = {attempt.model_name for attempt in response.failed_attempts or ()}
        if failed:
            self.models = [m for m in self.models if m.model_name not in failed] + [
                m for m in self.models if m.model_name in failed
            ]
        return response
