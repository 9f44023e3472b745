"""`diagnoser.models.endpoint`: an explicit base URL — ours or the provider's own
variable — is probed at start-up, a dead one is one line naming the variable, and a
malformed one stops at the settings."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from diagnoser.errors import ConfigError
from diagnoser.models import check_endpoints, resolve_models, unreachable
from diagnoser.settings import Settings
from tests.diagnoser.models.conftest import closed_port


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
