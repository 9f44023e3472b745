"""`api.preflight`: the checks a start makes before the service loads, in the order a user
fixes them (models, then the database), each one line naming its setting; what passed is
what `build_service` runs on."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text

from api import ServiceSettings
from api.app import build_service
from api.preflight import preflight
from diagnoser import ConfigError

DOWN = "postgresql://nobody:hunter2@127.0.0.1:1/x"
"""Nothing listens on port 1: refused at once."""


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIAGNOSER_HOME", str(tmp_path / "home"))


def _settings(tmp_path: Path, **options: object) -> ServiceSettings:
    url = f"sqlite:///{tmp_path / 'db' / 'diagnoser.sqlite'}"
    return ServiceSettings(**{"database_url": url, **options})  # type: ignore[arg-type]


def test_good_settings_give_the_models_and_a_database_that_answers(tmp_path: Path) -> None:
    checked = preflight(_settings(tmp_path))
    try:
        assert checked.models is not None
        assert checked.models.explorer.offline and not checked.models.explorer.models
        assert checked.url.startswith("sqlite:///")
        with checked.engine.connect() as connection:
            assert connection.execute(text("SELECT 1")).scalar_one() == 1
    finally:
        checked.engine.dispose()


def test_a_database_that_does_not_answer_is_one_line_without_its_password(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigError) as refused:
        preflight(_settings(tmp_path, database_url=DOWN))
    said = str(refused.value)
    assert said.startswith("DIAGNOSER_DATABASE_URL: cannot use the database: ")
    assert "port 1" in said and "hunter2" not in said and "\n" not in said


def test_the_models_are_checked_before_the_database(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="nope:model"):
        preflight(_settings(tmp_path, database_url=DOWN, model="nope:model"))


def test_a_process_that_runs_no_jobs_resolves_no_model(tmp_path: Path) -> None:
    checked = preflight(_settings(tmp_path, model="nope:model"), runner=False)
    checked.engine.dispose()
    assert checked.models is None


def test_build_service_runs_on_what_passed(tmp_path: Path) -> None:
    checked = preflight(_settings(tmp_path))
    service = build_service(_settings(tmp_path), runner=False, checked=checked, upgrade=True)
    try:
        assert service.store.engine is checked.engine
    finally:
        service.store.engine.dispose()
