"""`diagnoser.models.resolve`: every provider prefix resolves with its key (no network),
a missing key or unknown provider is one line naming what to set, every provider sends
through our retrying client, Anthropic models ask for the prompt cache, and a provider's
SDK is imported only when one of its models is resolved."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from pydantic_ai.models import Model
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.google import GoogleModel
from pydantic_ai.models.groq import GroqModel
from pydantic_ai.models.mistral import MistralModel
from pydantic_ai.models.ollama import OllamaModel
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel

from diagnoser.errors import ConfigError
from diagnoser.models import ANTHROPIC_CACHE, Endpoint, resolve_model, resolve_models
from diagnoser.settings import Settings

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


@pytest.mark.parametrize("spec", ["nosuch:model", "gpt-4o", "  "])
def test_an_unknown_provider_or_empty_spec_names_the_setting(spec: str) -> None:
    with pytest.raises(ConfigError) as error:
        resolve_models(Settings(model=spec))
    message = str(error.value)
    assert message.startswith("DIAGNOSER_MODEL") and "\n" not in message
    assert "Unknown model" in message or "is empty" in message


def test_a_provider_that_takes_no_base_url_says_so() -> None:
    endpoint = Endpoint(base_url="http://127.0.0.1:9", prefix="DIAGNOSER_MODEL")
    with pytest.raises(ConfigError) as error:
        resolve_model("bedrock:anthropic.claude", setting="DIAGNOSER_MODEL", endpoint=endpoint)
    assert "DIAGNOSER_MODEL" in str(error.value) and "\n" not in str(error.value)


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


PROVIDER_SDKS = ("openai", "anthropic", "google.genai", "groq", "mistralai", "cohere", "boto3")
"""The provider SDKs PydanticAI may import (those not installed are never imported)."""
SDKS_IMPORTED = (
    "import sys\n"
    "def sdks(): print(','.join(m for m in {sdks!r} if m in sys.modules))\n"
    "import diagnoser.models\n"
    "sdks()\n"
    "diagnoser.models.resolve_model('openai:gpt-4o', setting='DIAGNOSER_MODEL')\n"
    "sdks()\n"
)
"""Prints the SDKs imported after `import diagnoser.models`, then after resolving an
OpenAI model."""


def test_a_providers_sdk_is_imported_only_when_its_model_is_resolved() -> None:
    code = SDKS_IMPORTED.format(sdks=PROVIDER_SDKS)
    env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    at_import, resolved = done.stdout.splitlines()
    assert (at_import, resolved) == ("", "openai")
