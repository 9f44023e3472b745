"""Settings from the environment: deny-lists, run defaults, the repositories served."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from diagnoser.constants import DEMO_REPO, RUN_TIMEOUT_SECONDS
from diagnoser.errors import ConfigError
from diagnoser.settings import Settings, load_settings
from repomap import DEFAULT_DENY, DenyList
from tests.conftest import MakeRepo


@pytest.mark.parametrize(
    ("value", "patterns"),
    [
        ("*.py", ("*.py",)),
        ("*.sql, local_settings.py", ("*.sql", "local_settings.py")),
        ('["*.sql", "a,b.txt"]', ("*.sql", "a,b.txt")),
        ("", ()),
    ],
)
def test_deny_extra_takes_a_comma_separated_or_json_list(
    monkeypatch: pytest.MonkeyPatch, value: str, patterns: tuple[str, ...]
) -> None:
    monkeypatch.setenv("DIAGNOSER_DENY_EXTRA", value)
    assert Settings().deny_extra == patterns


def test_deny_replaces_the_default_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIAGNOSER_DENY", ".env, *.pem")
    settings = Settings()
    assert settings.deny == (".env", "*.pem")
    assert not settings.deny_list().denies("credentials.py")
    assert settings.deny_list().denies("server.pem")


@pytest.mark.parametrize("field", ["deny", "deny_extra"])
def test_a_bad_pattern_fails_at_start_up_naming_it(
    monkeypatch: pytest.MonkeyPatch, field: str
) -> None:
    monkeypatch.setenv(f"DIAGNOSER_{field.upper()}", "*.sql, !")
    with pytest.raises(ValidationError) as error:
        Settings()
    problem = error.value.errors()[0]
    assert problem["loc"] == (field,)
    assert "invalid deny pattern '!'" in problem["msg"]


def test_patterns_given_as_values_are_validated_too() -> None:
    with pytest.raises(ValidationError, match=r"invalid deny pattern '\\\\'"):
        Settings(deny_extra=("\\",))


def test_deny_list_is_the_default_then_the_extras() -> None:
    rule = Settings(deny_extra=("*.sql", "!.env")).deny_list()
    assert rule == DenyList((*DEFAULT_DENY, "*.sql", "!.env"))
    assert rule.denies("dump.sql") and not rule.denies(".env")
    assert Settings().deny_list() == DenyList.default()


def test_run_settings_default_to_the_offline_model_and_the_demo_repository() -> None:
    settings = Settings()
    assert settings.model == "offline" and settings.formatter_model is None
    assert settings.timeout_seconds == RUN_TIMEOUT_SECONDS
    assert settings.repos == {"demo": DEMO_REPO} and DEMO_REPO.is_dir()


def test_run_settings_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, make_repo: MakeRepo
) -> None:
    web, api = make_repo({"a.py": ""}), make_repo({"b.py": ""})
    monkeypatch.setenv("DIAGNOSER_MODEL", "openai:gpt-4o")
    monkeypatch.setenv("DIAGNOSER_FORMATTER_MODEL", "openai:gpt-4o-mini")
    monkeypatch.setenv("DIAGNOSER_TIMEOUT_SECONDS", "42.5")
    monkeypatch.setenv("DIAGNOSER_REPOS", f"web={web}, api.v2 = {api}")
    settings = Settings()
    assert (settings.model, settings.formatter_model) == ("openai:gpt-4o", "openai:gpt-4o-mini")
    assert settings.timeout_seconds == 42.5
    assert settings.repos == {"web": web.resolve(), "api.v2": api.resolve()}


def test_model_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIAGNOSER_FALLBACK_MODELS", " anthropic:claude-sonnet-4-5 ,, offline ")
    monkeypatch.setenv("DIAGNOSER_MODEL_BASE_URL", "http://127.0.0.1:4000/v1")
    monkeypatch.setenv("DIAGNOSER_MODEL_API_KEY", "sk-gateway")
    monkeypatch.setenv("DIAGNOSER_FORMATTER_TEMPERATURE", "0.3")
    monkeypatch.setenv("DIAGNOSER_MODEL_REQUEST_TIMEOUT_SECONDS", "15")
    monkeypatch.setenv("DIAGNOSER_REQUEST_LIMIT", "12")
    monkeypatch.setenv("DIAGNOSER_EXPLORE_CALLS", "3")
    monkeypatch.setenv("DIAGNOSER_DEEP_DIVE_CALLS", "2")
    settings = load_settings()
    assert settings.fallback_models == ("anthropic:claude-sonnet-4-5", "offline")
    assert settings.model_base_url == "http://127.0.0.1:4000/v1"
    assert settings.model_api_key is not None
    assert settings.model_api_key.get_secret_value() == "sk-gateway"
    assert "sk-gateway" not in repr(settings)  # a key never shows in a log line
    assert settings.explorer_settings()["timeout"] == 15
    assert settings.formatter_settings()["temperature"] == 0.3
    assert (settings.request_limit, settings.explore_calls, settings.deep_dive_calls) == (12, 3, 2)


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("DIAGNOSER_MODEL_BASE_URL", "localhost:4000"),
        ("DIAGNOSER_FORMATTER_BASE_URL", "ftp://gateway/v1"),
        ("DIAGNOSER_MODEL_TEMPERATURE", "3"),
        ("DIAGNOSER_REQUEST_LIMIT", "0"),
        ("DIAGNOSER_EXPLORE_CALLS", "-1"),
    ],
)
def test_a_bad_model_setting_names_its_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError, match=rf"^{variable}: "):
        load_settings()


def test_repos_take_a_json_object_for_a_path_with_a_comma(
    monkeypatch: pytest.MonkeyPatch, make_repo: MakeRepo, tmp_path: Path
) -> None:
    odd = tmp_path / "a,b=c"
    odd.mkdir()
    monkeypatch.setenv("DIAGNOSER_REPOS", json.dumps({"odd": str(odd)}))
    assert Settings().repos == {"odd": odd.resolve()}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("web=/no/such/folder", "repository 'web': not an existing directory: /no/such/folder"),
        ("Web={repo}", "bad repository name 'Web'"),
        ("-web={repo}", "bad repository name '-web'"),
        (f"{'x' * 65}={{repo}}", "bad repository name"),
        ("web", "'web' is not name=path"),
        ("web=", "'web=' is not name=path"),
        ("web={repo},web={repo}", "repository 'web' is given twice"),
        ("", "no repository given"),
        ("{{not json", "not a JSON object"),
        ("web={file}", "not an existing directory"),
    ],
)
def test_a_bad_repository_is_named_at_start_up(
    monkeypatch: pytest.MonkeyPatch, make_repo: MakeRepo, value: str, message: str
) -> None:
    repo = make_repo({"f.txt": "x"})
    monkeypatch.setenv("DIAGNOSER_REPOS", value.format(repo=repo, file=repo / "f.txt"))
    with pytest.raises(ConfigError) as error:
        load_settings()
    assert str(error.value).startswith("DIAGNOSER_REPOS: ") and message in str(error.value)


@pytest.mark.parametrize("value", ["0", "-1", "soon"])
def test_the_timeout_must_be_a_positive_number(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("DIAGNOSER_TIMEOUT_SECONDS", value)
    with pytest.raises(ConfigError, match=r"^DIAGNOSER_TIMEOUT_SECONDS: "):
        load_settings()


def test_every_setting_is_documented_in_the_readme() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    for name in Settings.model_fields:
        assert f"`DIAGNOSER_{name.upper()}`" in readme, name


def test_repos_naming_git_repositories_are_mirrored_not_read_as_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "web"
    folder.mkdir()
    monkeypatch.setenv(
        "DIAGNOSER_REPOS", f"web={folder},shop=https://git.example.com/shop.git#release"
    )
    settings = Settings()
    assert settings.repos == {"web": folder.resolve()}
    assert settings.git_repos == {"shop": "https://git.example.com/shop.git#release"}
    monkeypatch.setenv("DIAGNOSER_REPOS", "shop=git@github.com:o/shop.git")
    only_git = Settings()
    assert only_git.repos == {} and only_git.git_repos == {"shop": "git@github.com:o/shop.git"}
    monkeypatch.setenv("DIAGNOSER_GIT_REPOS", f"web=file://{folder}")
    monkeypatch.setenv("DIAGNOSER_REPOS", f"web={folder}")
    with pytest.raises(ValidationError, match="repository 'web' is given twice"):
        Settings()


def test_only_repositories_that_opted_in_are_ever_executed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIAGNOSER_VERIFY", "1")
    monkeypatch.setenv("DIAGNOSER_VERIFY_PYTHON", "python3")
    monkeypatch.setenv("DIAGNOSER_VERIFY_REPOS", "web=/srv/web/.venv/bin/python, api=python3.12")
    monkeypatch.setenv("DIAGNOSER_REPOS", f"web={DEMO_REPO},api={DEMO_REPO},demo={DEMO_REPO}")
    settings = Settings()
    assert settings.verify and settings.verify_repos["api"] == "python3.12"
    web, other = settings.for_repo("web"), settings.for_repo("demo")
    assert web.verify and web.verify_python == "/srv/web/.venv/bin/python"
    assert not other.verify  # DIAGNOSER_VERIFY is the CLI's: the service needs the opt-in
    assert not Settings().model_copy(update={"verify": False}).for_repo("x").verify


def test_a_malformed_verify_repos_fails_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIAGNOSER_VERIFY_REPOS", "web")
    with pytest.raises(ValidationError, match="not name=path"):
        Settings()
    monkeypatch.setenv("DIAGNOSER_VERIFY_REPOS", "web=python3")  # web is not served
    with pytest.raises(ConfigError, match="DIAGNOSER_VERIFY_REPOS names 'web', not a served"):
        load_settings()
