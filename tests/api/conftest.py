"""API fixtures: a database of each kind (`store`), and a running app on one
(`service_settings`, `client`). A test's PostgreSQL database is a copy of one the
service has started on once (`postgres_template`)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import delete

from api import ServiceSettings, create_app
from api.database import connect, migrate
from api.store import Store
from api.tables import ExecutorRow
from tests.api.databases import BACKENDS, fresh_database, postgres_database, release


@pytest.fixture(scope="session")
def postgres_template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The name of a PostgreSQL database the service has started on once (its tables
    and DBOS's, migrated), for each test's database to copy: made once a session (once
    per xdist worker), it spares each test ~0.3-2 s of migrations."""
    home = tmp_path_factory.mktemp("template")
    empty = home / "repo"  # a repository to serve, with nothing to index
    empty.mkdir()
    with postgres_database() as url:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("DIAGNOSER_HOME", str(home / "home"))
            settings = ServiceSettings(database_url=url, repos={"empty": empty})
            with TestClient(create_app(settings)):
                pass
        engine = connect(url)
        with engine.begin() as connection:  # a copy starts with no job runner known
            connection.execute(delete(ExecutorRow))
        engine.dispose()
        release(url)
        yield url.rsplit("/", 1)[1]


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh database: the test runs once on SQLite and once on PostgreSQL (a copy of
    `postgres_template`)."""
    postgres = request.param == "postgresql"
    template = request.getfixturevalue("postgres_template") if postgres else None
    with fresh_database(request.param, tmp_path, template=template) as url:
        yield url


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    engine = connect(database_url)
    migrate(engine)
    try:
        yield Store(engine)
    finally:
        engine.dispose()


DEMO = Path(__file__).resolve().parents[2] / "sample_reports" / "demo_app"
SAMPLES = DEMO.parent / "reports"
SECRETS = {
    "sentry_secret": "sentry-client-secret",
    "github_secret": "It's a Secret to Everybody",
    "standard_webhook_secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    "webhook_token": "url-token-0123456789",
}


@pytest.fixture
def service_settings(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> ServiceSettings:
    """The service on `database_url`, the demo app as `demo`, every webhook configured."""
    monkeypatch.setenv("DIAGNOSER_HOME", str(tmp_path / "home"))
    return ServiceSettings(
        database_url=database_url, repos={"demo": DEMO}, dedupe_window_seconds=600, **SECRETS
    )


@pytest.fixture
def client(service_settings: ServiceSettings) -> Iterator[TestClient]:
    """A running app (lifespan: queue launched, repos warming)."""
    with TestClient(create_app(service_settings)) as test_client:
        yield test_client


JOB_DEADLINE_SECONDS = 120.0


def wait_for_job(
    client: TestClient, job_id: str, *, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    """Poll a job until it ends (a hang guard, not a timing: the bound is generous)."""
    deadline = time.monotonic() + JOB_DEADLINE_SECONDS
    while time.monotonic() < deadline:
        job = client.get(f"/jobs/{job_id}", headers=headers or {}).json()
        if job["state"] not in ("queued", "running"):
            return dict(job)
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not end within {JOB_DEADLINE_SECONDS} s")
