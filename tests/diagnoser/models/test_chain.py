"""`diagnoser.models.chain`: a fallback chain ends in `offline`, built per run; a run
whose first model fails is answered by the next — and its provenance says so; without
a fallback the failure ends the run."""

from __future__ import annotations

import pytest
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.function import AgentInfo, FunctionModel

from diagnoser.events import State
from diagnoser.finding import Status
from diagnoser.intake import ReportIn
from diagnoser.models import OFFLINE, ModelChoice, RoleModels, resolve_models
from diagnoser.pipeline import diagnose, intake
from diagnoser.settings import Settings
from diagnoser.workspace import Workspace
from tests.diagnoser.models.conftest import TRACE


def test_a_fallback_chain_ends_in_offline_built_per_run(
    monkeypatch: pytest.MonkeyPatch, workspace: Workspace
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")
    settings = Settings(fallback_models="anthropic:claude-sonnet-4-5, offline")  # type: ignore[arg-type]
    models = resolve_models(settings, model="openai:gpt-4o")
    assert models.explorer.names == ("gpt-4o", "claude-sonnet-4-5", OFFLINE)
    assert models.explorer.name == "gpt-4o → claude-sonnet-4-5 → offline"
    built = models.explorer.build(intake(ReportIn(text=TRACE), workspace), workspace)
    assert isinstance(built, FallbackModel)
    assert [m.model_name for m in built.models] == ["gpt-4o", "claude-sonnet-4-5", OFFLINE]
    assert isinstance(built.models[-1], FunctionModel)


def failing(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    raise ModelHTTPError(500, "primary-model", {"error": "internal"})


def test_the_fallback_answers_when_the_first_model_fails_and_provenance_says_who(
    workspace: Workspace,
) -> None:
    primary = FunctionModel(failing, model_name="primary-model")
    models = RoleModels(ModelChoice.of(primary, offline=True))
    outcome = diagnose(ReportIn(text=TRACE), workspace, models=models)
    assert outcome.state is State.COMPLETE and outcome.finding is not None
    provenance = outcome.finding.provenance
    assert provenance.answered == {"investigate": [OFFLINE]}
    assert provenance.models == [OFFLINE]
    assert outcome.finding.status is Status.GROUNDED
    exploring = next(e for e in outcome.events if e.state is State.EXPLORING)
    assert exploring.detail == "model primary-model → offline"


def test_without_a_fallback_the_failure_ends_the_run(workspace: Workspace) -> None:
    primary = FunctionModel(failing, model_name="primary-model")
    outcome = diagnose(ReportIn(text=TRACE), workspace, models=RoleModels.using(primary))
    assert outcome.state is State.FAILED and "500" in outcome.reason
