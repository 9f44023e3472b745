"""`ServiceSettings` from the environment and the settings file, `load_service_settings`'s
one-line errors, and CORS (off unless origins are configured)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api import ServiceSettings, create_app, load_service_settings
from api.settings import SETTINGS_FILE_VAR
from diagnoser import ConfigError
from tests.api.conftest import DEMO, SECRETS

ORIGIN = "https://triage.example.com"


@pytest.fixture(autouse=True)
def clean_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No DIAGNOSER_* setting of the machine leaks into a test."""
    for name in list(os.environ):
        if name.startswith("DIAGNOSER_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("DIAGNOSER_HOME", str(tmp_path / "home"))


def _settings_file(tmp_path: Path, text: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "diagnoser.toml"
    path.write_text(text)
    monkeypatch.setenv(SETTINGS_FILE_VAR, str(path))
    return path


def test_defaults_run_locally_with_nothing_set() -> None:
    settings = load_service_settings()
    assert settings.api_keys == () and settings.cors_origins == ()
    assert settings.key_hashes() == frozenset()
    assert settings.sentry_secret is None and settings.webhook_token is None


def test_lists_are_comma_separated_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIAGNOSER_API_KEYS", " k1, k2 ,,k3 ")
    monkeypatch.setenv("DIAGNOSER_CORS_ORIGINS", f"{ORIGIN},http://localhost:3000")
    settings = load_service_settings()
    assert settings.api_keys == ("k1", "k2", "k3")
    assert settings.cors_origins == (ORIGIN, "http://localhost:3000")


def test_scalars_and_repos_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIAGNOSER_REPOS", f"app={DEMO}")
    monkeypatch.setenv("DIAGNOSER_RATE_LIMIT_PER_MINUTE", "7")
    monkeypatch.setenv("DIAGNOSER_GITHUB_SECRET", SECRETS["github_secret"])
    settings = load_service_settings()
    assert settings.repos == {"app": DEMO.resolve()}
    assert settings.rate_limit_per_minute == 7
    assert settings.github_secret == SECRETS["github_secret"]


def test_the_settings_file_is_read_and_the_environment_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _settings_file(
        tmp_path,
        'api_keys = ["file-key"]\ncors_origins = ["https://a.example"]\n'
        f"rate_limit_per_minute = 5\njob_concurrency = 3\n[repos]\nfromfile = '{DEMO}'\n",
        monkeypatch,
    )
    monkeypatch.setenv("DIAGNOSER_RATE_LIMIT_PER_MINUTE", "9")
    monkeypatch.setenv("DIAGNOSER_API_KEYS", "env-key")
    settings = load_service_settings()
    assert settings.job_concurrency == 3 and settings.repos == {"fromfile": DEMO.resolve()}
    assert settings.cors_origins == ("https://a.example",)
    assert settings.rate_limit_per_minute == 9 and settings.api_keys == ("env-key",)


def test_a_missing_or_unreadable_settings_file_names_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SETTINGS_FILE_VAR, str(tmp_path / "absent.toml"))
    with pytest.raises(ConfigError, match=rf"^{SETTINGS_FILE_VAR}: no such file"):
        load_service_settings()
    _settings_file(tmp_path, "api_keys = [unterminated\n", monkeypatch)
    with pytest.raises(ConfigError, match=rf"^{SETTINGS_FILE_VAR}: "):
        load_service_settings()


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("DIAGNOSER_STANDARD_WEBHOOK_SECRET", "whsec_not*base64", "base64"),
        ("DIAGNOSER_STANDARD_WEBHOOK_SECRET", "whsec_", "empty"),
        ("DIAGNOSER_API_KEYS", "sha256:abc", "64 hex digits"),
        ("DIAGNOSER_RATE_LIMIT_PER_MINUTE", "0", "greater than 0"),
        ("DIAGNOSER_JOB_CONCURRENCY", "many", "integer"),
        ("DIAGNOSER_DEDUPE_WINDOW_SECONDS", "-1", "greater than or equal to 0"),
        ("DIAGNOSER_REPOS", "demo", "name=path"),
    ],
)
def test_a_bad_setting_is_one_line_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, says: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError) as caught:
        load_service_settings()
    message = str(caught.value)
    assert message.startswith(f"{variable}: ") and says in message
    assert "\n" not in message


def test_a_good_standard_webhook_secret_is_kept() -> None:
    secret = SECRETS["standard_webhook_secret"]
    assert ServiceSettings(standard_webhook_secret=secret).standard_webhook_secret == secret


# ---- CORS -----------------------------------------------------------------------------


def _app_client(tmp_path: Path, cors_origins: tuple[str, ...] = ()) -> TestClient:
    """The real app without its lifespan (no queue): enough for what middleware does."""
    database = f"sqlite:///{tmp_path / 'service' / 'diagnoser.sqlite'}"
    configured = ServiceSettings(
        database_url=database, repos={"demo": DEMO}, cors_origins=cors_origins
    )
    return TestClient(create_app(configured))


def _preflight(client: TestClient, origin: str, headers: str = "authorization") -> dict[str, str]:
    response = client.options(
        "/findings",
        headers={"Origin": origin, "Access-Control-Request-Method": "GET",
                 "Access-Control-Request-Headers": headers},
    )  # fmt: skip
    return {k.lower(): v for k, v in response.headers.items()}


def test_cors_is_off_by_default(tmp_path: Path) -> None:
    client = _app_client(tmp_path)
    assert "access-control-allow-origin" not in _preflight(client, ORIGIN)
    simple = client.get("/healthz", headers={"Origin": ORIGIN})
    assert "access-control-allow-origin" not in simple.headers


def test_cors_allows_the_configured_origins_only(tmp_path: Path) -> None:
    client = _app_client(tmp_path, cors_origins=(ORIGIN,))
    allowed = _preflight(client, ORIGIN)
    assert allowed["access-control-allow-origin"] == ORIGIN
    assert "GET" in allowed["access-control-allow-methods"]
    assert "access-control-allow-origin" not in _preflight(client, "https://evil.example")
    simple = client.get("/healthz", headers={"Origin": ORIGIN})
    assert simple.headers["access-control-allow-origin"] == ORIGIN


@pytest.mark.parametrize("header", ["authorization", "x-api-key", "content-type"])
def test_cors_lets_a_browser_send_either_key_header(tmp_path: Path, header: str) -> None:
    client = _app_client(tmp_path, cors_origins=(ORIGIN,))
    response = client.options(
        "/findings",
        headers={"Origin": ORIGIN, "Access-Control-Request-Method": "GET",
                 "Access-Control-Request-Headers": header},
    )  # fmt: skip
    assert response.status_code == 200, response.text
    assert header in response.headers["access-control-allow-headers"].lower()
