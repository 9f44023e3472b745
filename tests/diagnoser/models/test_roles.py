"""`diagnoser.models.roles`: every role's models from the settings — a flag wins over
its setting and is blamed as a flag, our base URL and key reach each role's provider,
each role carries its own model settings, `offline` only ends the explorer's chain, and
with no formatter set a real explorer's own models format (`offline` needs none)."""

from __future__ import annotations

import pytest
from pydantic import SecretStr
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.fallback import FallbackModel
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


def test_a_real_explorer_with_no_formatter_set_formats_with_its_own_models() -> None:
    settings = Settings(
        model="openai-chat:gateway-model", model_base_url="http://127.0.0.1:9/v1",
        model_api_key=SecretStr("sk-ours"), model_temperature=0.7,
    )  # fmt: skip
    models = resolve_models(settings)
    [explorer] = models.explorer.models
    formatter = models.formatter
    assert isinstance(formatter, OpenAIChatModel) and formatter is not explorer
    assert (formatter.model_name, formatter.base_url) == ("gateway-model", explorer.base_url)
    assert formatter.client.api_key == "sk-ours"  # the explorer's endpoint…
    assert formatter.settings == {  # …with the formatter's settings
        **settings.formatter_settings(), "max_retries": 0,
        "request_timeout": settings.formatter_request_timeout_seconds,
    }  # fmt: skip
    assert models.triage is None  # triage follows a formatter set, not the explorer's
    assert [p.variable for p in models.probes] == ["DIAGNOSER_MODEL_BASE_URL"]  # probed once


def test_the_formatter_of_a_fallback_chain_is_its_real_models_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")
    models = resolve_models(
        Settings(model="openai:gpt-4o"), fallback_models="anthropic:claude-sonnet-4-5, offline"
    )
    assert isinstance(models.formatter, FallbackModel)
    assert [m.model_name for m in models.formatter.models] == ["gpt-4o", "claude-sonnet-4-5"]


def test_offline_needs_no_formatter_and_a_formatter_set_wins(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    assert resolve_models(Settings()).formatter is None
    assert resolve_models(Settings(model=OFFLINE)).formatter is None
    explorer = "openai:gpt-4o"
    by_setting = resolve_models(Settings(model=explorer, formatter_model="openai-chat:gpt-4o-mini"))
    by_flag = resolve_models(Settings(model=explorer), formatter_model="openai-chat:gpt-4o-mini")
    for models in (by_setting, by_flag):
        assert isinstance(models.formatter, OpenAIChatModel)
        assert models.formatter.model_name == "gpt-4o-mini"
        assert models.triage is models.formatter  # a formatter set is the triage model too
