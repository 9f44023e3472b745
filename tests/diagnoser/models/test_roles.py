"""`diagnoser.models.roles`: every role's models from the settings — a flag wins over
its setting and is blamed as a flag, our base URL and key reach each role's provider,
each role carries its own model settings, `offline` only ends the explorer's chain."""

from __future__ import annotations

import pytest
from pydantic import SecretStr
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.models.test import TestModel

from diagnoser.errors import ConfigError
from diagnoser.models import OFFLINE, ModelChoice, resolve_models
from diagnoser.settings import Settings


def test_the_formatter_names_its_own_settings_and_a_flag_is_blamed_as_a_flag() -> None:
    with pytest.raises(ConfigError, match=r"^--formatter-model 'anthropic:claude-haiku-4-5' "
                       r"needs ANTHROPIC_API_KEY \(or DIAGNOSER_FORMATTER_API_KEY\)$"):  # fmt: skip
        resolve_models(Settings(), formatter_model="anthropic:claude-haiku-4-5")
    with pytest.raises(ConfigError, match=r"^DIAGNOSER_FORMATTER_MODEL cannot be 'offline'"):
        resolve_models(Settings(formatter_model=OFFLINE))


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


def test_offline_only_ends_a_chain_and_alone_is_one_model() -> None:
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
