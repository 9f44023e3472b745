"""`/healthz`, `/readyz` (503 until the repos are indexed, the queue runs and the
database answers) and `/metrics`."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine

from api import ServiceSettings, create_app
from api.metrics import CONTENT_TYPE
from api.service import Service

WARM_DEADLINE_SECONDS = 120.0


@pytest.fixture
def cold(
    service_settings: ServiceSettings, monkeypatch: pytest.MonkeyPatch
) -> Iterator[TestClient]:
    """A running app whose repos are not indexed until the test warms them."""
    monkeypatch.setattr(Service, "warm", lambda _service: None)
    with TestClient(create_app(service_settings)) as client:
        yield client


def _service(client: TestClient) -> Service:
    service: Service = client.app.state.service  # type: ignore[attr-defined]
    return service


def test_healthz_says_ok(cold: TestClient) -> None:
    response = cold.get("/healthz")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})


def test_readyz_is_503_until_the_repo_is_warm(cold: TestClient) -> None:
    waiting = cold.get("/readyz")
    assert waiting.status_code == 503
    assert waiting.json() == {"ready": False, "database": True, "repos": {"demo": False},
                              "jobs": True}  # fmt: skip
    _service(cold).workspaces.warm("demo")
    ready = cold.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {"ready": True, "database": True, "repos": {"demo": True},
                            "jobs": True}  # fmt: skip


def test_readyz_is_503_without_a_database(
    cold: TestClient, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    service = _service(cold)
    service.workspaces.warm("demo")
    gone = tmp_path_factory.mktemp("gone") / "no" / "such" / "dir" / "db.sqlite"
    with monkeypatch.context() as patch:  # undone before the app shuts down
        patch.setattr(service.store, "engine", create_engine(f"sqlite:///{gone}"))
        response = cold.get("/readyz")
    assert response.status_code == 503
    assert response.json()["database"] is False and response.json()["repos"] == {"demo": True}


def test_readyz_is_503_before_the_queue_runs(service_settings: ServiceSettings) -> None:
    client = TestClient(create_app(service_settings))  # no lifespan: the queue never starts
    service = _service(client)
    service.workspaces.warm("demo")
    try:
        response = client.get("/readyz")
    finally:
        service.store.engine.dispose()
    assert response.status_code == 503 and response.json()["jobs"] is False


def test_the_service_warms_its_repos_by_itself(client: TestClient) -> None:
    deadline = time.monotonic() + WARM_DEADLINE_SECONDS  # a hang guard, not a timing
    while client.get("/readyz").status_code != 200:
        assert time.monotonic() < deadline, client.get("/readyz").json()
        time.sleep(0.05)
    assert client.get("/readyz").json()["repos"] == {"demo": True}


def test_metrics_is_prometheus_text(cold: TestClient) -> None:
    cold.get("/healthz")
    response = cold.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"] == CONTENT_TYPE
    assert "# TYPE diagnoser_jobs gauge" in response.text
    assert 'diagnoser_http_requests_total{method="GET",route="/healthz",status="200"} 1.0' in (
        response.text
    )
