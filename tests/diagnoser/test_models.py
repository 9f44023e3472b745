"""`diagnoser.models`: every provider prefix resolves with its key (no network), a
missing key or unknown provider is one line naming what to set, our base URL and key
reach the built provider, fallback chains end in `offline`, and a run whose first model
fails is answered by the next — and its provenance says so."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.google import GoogleModel
from pydantic_ai.models.groq import GroqModel
from pydantic_ai.models.mistral import MistralModel
from pydantic_ai.models.ollama import OllamaModel
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
from pydantic_ai.models.test import TestModel

from diagnoser.errors import ConfigError
from diagnoser.events import State
from diagnoser.finding import Status
from diagnoser.intake import ReportIn
from diagnoser.models import (
    ANTHROPIC_CACHE,
    OFFLINE,
    Endpoint,
    ModelChoice,
    RoleModels,
    check_endpoints,
    resolve_model,
    resolve_models,
    unreachable,
)
from diagnoser.pipeline import diagnose, intake
from diagnoser.settings import Settings
from diagnoser.workspace import Workspace

PROVIDER_VARIABLES = (
    "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL",
    "OLLAMA_BASE_URL", "OLLAMA_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY", "GROQ_API_KEY",
    "GROQ_BASE_URL", "MISTRAL_API_KEY",
)  # fmt: skip
TRACE = (
    'Traceback (most recent call last):\n  File "/srv/src/app.py", line 13, in checkout\n'
    '    return cart.total()\n  File "/srv/src/app.py", line 9, in total\n'
    "    return sum(item.price for item in self.items)\n"
    "TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'\n"
)


@pytest.fixture(autouse=True)
def no_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine's own keys and URLs never leak into a test."""
    for variable in PROVIDER_VARIABLES:
        monkeypatch.delenv(variable, raising=False)


@pytest.fixture
def listening() -> Iterator[str]:
    """A loopback port that accepts TCP connections."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        yield f"http://127.0.0.1:{server.getsockname()[1]}/v1"


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


PROVIDERS = [
    ("openai:gpt-4o", "OPENAI_API_KEY", OpenAIResponsesModel),
    ("openai-chat:gpt-4o-mini", "OPENAI_API_KEY", OpenAIChatModel),
    ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY", AnthropicModel),
    ("google:gemini-2.5-flash", "GOOGLE_API_KEY", GoogleModel),
    ("google:gemini-2.5-flash", "GEMINI_API_KEY", GoogleModel),
    ("groq:llama-3.3-70b-versatile", "GROQ_API_KEY", GroqModel),
    ("mistral:mistral-large-latest", "MISTRAL_API_KEY", MistralModel),
    ("ollama:qwen3", "OLLAMA_BASE_URL", OllamaModel),
]


@pytest.mark.parametrize(("spec", "variable", "cls"), PROVIDERS)
def test_every_provider_prefix_resolves_with_its_usual_variable(
    spec: str, variable: str, cls: type[Model], monkeypatch: pytest.MonkeyPatch
) -> None:
    value = "http://127.0.0.1:11434/v1" if variable.endswith("BASE_URL") else "sk-test"
    monkeypatch.setenv(variable, value)
    model = resolve_model(spec, setting="DIAGNOSER_MODEL")
    assert isinstance(model, cls) and model.model_name == spec.split(":", 1)[1]


MISSING = [
    ("anthropic:claude-sonnet-4-5", "needs ANTHROPIC_API_KEY (or DIAGNOSER_MODEL_API_KEY)"),
    ("openai:gpt-4o", "needs OPENAI_API_KEY (or DIAGNOSER_MODEL_API_KEY)"),
    ("google:gemini-2.5-flash", "needs GOOGLE_API_KEY (or DIAGNOSER_MODEL_API_KEY)"),
    ("groq:llama-3.3-70b-versatile", "needs GROQ_API_KEY (or DIAGNOSER_MODEL_API_KEY)"),
    ("mistral:mistral-large-latest", "needs MISTRAL_API_KEY (or DIAGNOSER_MODEL_API_KEY)"),
    ("ollama:qwen3", "needs OLLAMA_BASE_URL (or DIAGNOSER_MODEL_BASE_URL)"),
]


@pytest.mark.parametrize(("spec", "says"), MISSING)
def test_a_missing_key_is_one_line_naming_both_variables(spec: str, says: str) -> None:
    with pytest.raises(ConfigError) as error:
        resolve_models(Settings(model=spec))
    assert str(error.value) == f"DIAGNOSER_MODEL {spec!r} {says}"


def test_the_formatter_names_its_own_settings_and_a_flag_is_blamed_as_a_flag() -> None:
    with pytest.raises(ConfigError, match=r"^--formatter-model 'anthropic:claude-haiku-4-5' "
                       r"needs ANTHROPIC_API_KEY \(or DIAGNOSER_FORMATTER_API_KEY\)$"):  # fmt: skip
        resolve_models(Settings(), formatter_model="anthropic:claude-haiku-4-5")
    with pytest.raises(ConfigError, match=r"^DIAGNOSER_FORMATTER_MODEL cannot be 'offline'"):
        resolve_models(Settings(formatter_model=OFFLINE))


@pytest.mark.parametrize("spec", ["nosuch:model", "gpt-4o", "  "])
def test_an_unknown_provider_or_empty_spec_names_the_setting(spec: str) -> None:
    with pytest.raises(ConfigError) as error:
        resolve_models(Settings(model=spec))
    message = str(error.value)
    assert message.startswith("DIAGNOSER_MODEL") and "\n" not in message
    assert "Unknown model" in message or "is empty" in message


def test_our_base_url_and_key_reach_the_built_provider() -> None:
    settings = Settings(
        model="openai-chat:gateway-model", model_base_url="http://127.0.0.1:9/v1",
        model_api_key=SecretStr("sk-ours"), formatter_model="anthropic:claude-haiku-4-5",
        formatter_base_url="http://127.0.0.1:8/anthropic",
        formatter_api_key=SecretStr("sk-formatter"),
    )  # fmt: skip
    models = resolve_models(settings)
    [explorer] = models.explorer.models
    assert isinstance(explorer, OpenAIChatModel)
    assert explorer.base_url == "http://127.0.0.1:9/v1/"
    assert explorer.client.api_key == "sk-ours"
    assert isinstance(models.formatter, AnthropicModel)
    assert models.formatter.base_url.startswith("http://127.0.0.1:8/anthropic")
    assert getattr(models.formatter.client, "api_key", None) == "sk-formatter"
    assert [p.variable for p in models.probes] == [
        "DIAGNOSER_MODEL_BASE_URL", "DIAGNOSER_FORMATTER_BASE_URL",
    ]  # fmt: skip


def test_the_providers_own_variables_keep_working(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:7/v1")
    models = resolve_models(Settings(model="openai:gpt-4o"))
    [model] = models.explorer.models
    assert model.base_url == "http://127.0.0.1:7/v1/"
    assert [(p.url, p.variable) for p in models.probes] == [
        ("http://127.0.0.1:7/v1/", "OPENAI_BASE_URL")
    ]
    monkeypatch.delenv("OPENAI_BASE_URL")
    assert resolve_models(Settings(model="openai:gpt-4o")).probes == ()  # the default: no probe


def test_each_role_carries_its_model_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    settings = Settings(
        model="openai:gpt-4o", model_temperature=0.7, model_max_tokens=1000,
        model_request_timeout_seconds=9, formatter_model="openai-chat:gpt-4o-mini",
    )  # fmt: skip
    models = resolve_models(settings)
    assert models.explorer.models[0].settings == {
        "temperature": 0.7, "max_tokens": 1000, "timeout": 9, "request_timeout": 9.0,
        "cache": True, "max_retries": 0,  # one retry policy: ours (`diagnoser.retries`)
    }  # fmt: skip
    assert models.formatter is not None
    assert models.formatter.settings == {
        **settings.formatter_settings(), "max_retries": 0,
        "request_timeout": settings.formatter_request_timeout_seconds,
    }  # fmt: skip
    assert settings.formatter_settings()["temperature"] == 0.0


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


def test_offline_only_ends_a_chain_and_alone_is_one_model(workspace: Workspace) -> None:
    with pytest.raises(ConfigError) as error:
        resolve_models(Settings(fallback_models=("test",)))
    assert str(error.value) == (
        "DIAGNOSER_FALLBACK_MODELS: 'test' comes after 'offline' (DIAGNOSER_MODEL), which "
        "never fails, so it is never tried; put 'offline' last"
    )
    with pytest.raises(ConfigError, match=r"^--fallback-models: 'test' comes after 'offline'"):
        resolve_models(Settings(), model="test", fallback_models="offline, test")
    alone = resolve_models(Settings())
    assert alone.explorer == ModelChoice() and alone.formatter is None
    assert alone.explorer.names == (OFFLINE,)
    with pytest.raises(ValueError, match="built per run"):
        alone.explorer.model()
    assert ModelChoice.of(TestModel()).model().model_name == "test"


def test_a_malformed_base_url_stops_at_the_settings() -> None:
    with pytest.raises(ValueError, match="not an http"):
        Settings(model_base_url="localhost:8080")
    with pytest.raises(ValueError, match="not an http"):
        Settings(formatter_base_url="http://:80")


def test_an_unreachable_explicit_base_url_is_one_line_at_start(listening: str) -> None:
    dead = f"http://127.0.0.1:{closed_port()}/v1"
    settings = Settings(model="openai-chat:gw", model_base_url=dead, model_api_key=SecretStr("k"))
    with pytest.raises(ConfigError) as error:
        check_endpoints(resolve_models(settings), timeout=1)
    assert str(error.value).startswith(f"DIAGNOSER_MODEL 'openai-chat:gw': {dead}/ is unreachable")
    assert str(error.value).endswith("check DIAGNOSER_MODEL_BASE_URL")
    live = Settings(model="openai-chat:gw", model_base_url=listening, model_api_key=SecretStr("k"))
    check_endpoints(resolve_models(live), timeout=1)  # accepts: no error
    assert unreachable(listening) is None


def test_a_provider_that_takes_no_base_url_says_so() -> None:
    endpoint = Endpoint(base_url="http://127.0.0.1:9", prefix="DIAGNOSER_MODEL")
    with pytest.raises(ConfigError) as error:
        resolve_model("bedrock:anthropic.claude", setting="DIAGNOSER_MODEL", endpoint=endpoint)
    assert "DIAGNOSER_MODEL" in str(error.value) and "\n" not in str(error.value)


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
    assert outcome.finding.status is Status.VERIFIED
    exploring = next(e for e in outcome.events if e.state is State.EXPLORING)
    assert exploring.detail == "model primary-model → offline"


def test_without_a_fallback_the_failure_ends_the_run(workspace: Workspace) -> None:
    primary = FunctionModel(failing, model_name="primary-model")
    outcome = diagnose(ReportIn(text=TRACE), workspace, models=RoleModels.using(primary))
    assert outcome.state is State.FAILED and "500" in outcome.reason


def test_the_run_takes_its_limits_from_the_workspace_settings(repo: Path, tmp_path: Path) -> None:
    tight = Workspace(repo, Settings(request_limit=1), home=tmp_path / "home")
    outcome = diagnose(ReportIn(text=TRACE), tight)
    # One request in all: the funnel goes straight to its report, and that one writes it.
    assert outcome.state is State.COMPLETE and outcome.finding is not None
    assert outcome.finding.provenance.requests == 1
    assert any(e.detail == "request budget: 0 of 1 used" for e in outcome.events)


def test_anthropic_models_ask_for_the_prompt_cache_and_a_stable_system_prompt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    settings = Settings(model="anthropic:claude-sonnet-4-5", fallback_models="openai:gpt-4o")
    claude, gpt = resolve_models(settings).explorer.models
    assert {key: claude.settings[key] for key in ANTHROPIC_CACHE} == ANTHROPIC_CACHE  # type: ignore[literal-required, index]
    assert not ANTHROPIC_CACHE.keys() & set(gpt.settings or {})  # Anthropic's own, only there
    off = resolve_models(Settings(model=settings.model, prompt_cache=False)).explorer.models[0]
    assert not ANTHROPIC_CACHE.keys() & set(off.settings or {})
    assert (off.settings or {}).get("max_retries") == 0


def test_every_provider_built_here_sends_through_our_retrying_client(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    for spec in ("openai:gpt-4o", "anthropic:claude-sonnet-4-5"):
        model = resolve_model(spec, setting="DIAGNOSER_MODEL")
        client = model.client._client  # type: ignore[attr-defined]  # the SDK's httpx2 client
        assert "TenacityTransport" in type(client._transport).__name__, spec
