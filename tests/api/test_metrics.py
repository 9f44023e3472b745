"""Prometheus metrics: `Metrics` as a value, then `/metrics` of a running service after a
finished job — jobs by state, requests by route template, tool calls and tokens."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from api.docs import DOCS_PATH, OAUTH2_REDIRECT_PATH, REDOC_PATH, STATIC_PATH
from api.metrics import CONTENT_TYPE, UNMATCHED, Metrics
from api.schemas import JobState
from diagnoser import Finding
from diagnoser.finding import Provenance
from diagnoser.intake import Kind
from tests.api.conftest import SAMPLES, wait_for_job

CRASH = (SAMPLES / "android_logcat_open_shared.txt").read_text()
ROUTE = "/jobs/{job_id}"


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a Prometheus text page by (name, sorted labels)."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(text: str, name: str, **labels: str) -> float | None:
    return samples(text).get((name, tuple(sorted(labels.items()))))


def requests(page: str, *, status: str) -> float | None:
    return value(page, "diagnoser_http_requests_total", method="GET", route=ROUTE, status=status)


def _finding() -> Finding:
    provenance = Provenance(
        tool_calls={"explore": 3, "deep_dive": 2}, input_tokens=100, output_tokens=20,
        durations={"investigate": 1.5, "ground": 0.5},
    )  # fmt: skip
    return Finding(classification=Kind.CRASH, title="t", provenance=provenance)


# ---- Metrics --------------------------------------------------------------------------


def test_jobs_are_counted_by_state_from_the_database_at_each_scrape() -> None:
    counts = {"complete": 2, "queued": 3}
    page = Metrics(lambda: counts).render().decode()
    assert value(page, "diagnoser_jobs", state="complete") == 2
    assert value(page, "diagnoser_jobs", state="failed") == 0  # every state is listed
    assert all(value(page, "diagnoser_jobs", state=s.value) is not None for s in JobState)
    assert value(page, "diagnoser_queue_depth") == 3
    counts["complete"] = 5
    assert value(Metrics(lambda: counts).render().decode(), "diagnoser_jobs", state="complete") == 5


def test_requests_are_counted_by_method_route_and_status() -> None:
    metrics = Metrics(dict)
    metrics.observe_request("GET", ROUTE, 200, 0.01)
    metrics.observe_request("GET", ROUTE, 200, 0.02)
    metrics.observe_request("GET", ROUTE, 404, 0.01)
    page = metrics.render().decode()
    assert requests(page, status="200") == 2
    assert requests(page, status="404") == 1
    assert value(page, "diagnoser_http_request_seconds_count", route=ROUTE) == 3


def test_a_finding_adds_its_tool_calls_tokens_and_duration() -> None:
    metrics = Metrics(dict)
    metrics.observe_finding(_finding())
    metrics.observe_finding(_finding())
    page = metrics.render().decode()
    assert value(page, "diagnoser_tool_calls_total", stage="explore") == 6
    assert value(page, "diagnoser_tool_calls_total", stage="deep_dive") == 4
    assert value(page, "diagnoser_model_tokens_total", kind="input") == 200
    assert value(page, "diagnoser_model_tokens_total", kind="output") == 40
    assert value(page, "diagnoser_job_seconds_count") == 2
    assert value(page, "diagnoser_job_seconds_sum") == pytest.approx(4.0)


def test_each_metrics_has_its_own_registry() -> None:
    first, second = Metrics(dict), Metrics(dict)
    first.observe_request("GET", "/healthz", 200, 0.001)
    assert value(second.render().decode(), "diagnoser_http_requests_total",
                 method="GET", route="/healthz", status="200") is None  # fmt: skip


# ---- /metrics of a running service ---------------------------------------------------


def _scrape(client: TestClient) -> str:
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"] == CONTENT_TYPE
    return response.text


def test_metrics_after_a_finished_job(client: TestClient) -> None:
    before = _scrape(client)
    assert value(before, "diagnoser_jobs", state="complete") == 0
    accepted = client.post("/diagnose", json={"report": {"text": CRASH, "source": "crash_log"}})
    job = wait_for_job(client, accepted.json()["job_id"])
    assert job["state"] == "complete"
    page = _scrape(client)
    assert value(page, "diagnoser_jobs", state="complete") == 1
    assert value(page, "diagnoser_queue_depth") == 0
    found: dict[str, Any] = client.get(f"/findings/{job['finding_id']}").json()["finding"]
    provenance = found["provenance"]
    for stage, count in provenance["tool_calls"].items():
        assert value(page, "diagnoser_tool_calls_total", stage=stage) == count
    assert sum(provenance["tool_calls"].values()) > 0
    assert value(page, "diagnoser_model_tokens_total", kind="input") == (
        provenance["input_tokens"] or 0
    )
    assert value(page, "diagnoser_job_seconds_count") == 1


def test_requests_are_labelled_by_route_template_not_path(client: TestClient) -> None:
    client.get("/jobs/one")
    client.get("/jobs/two")
    client.post("/diagnose", json={"report": {"text": CRASH, "source": "crash_log"}})
    client.get("/no/such/path")
    page = _scrape(client)
    assert requests(page, status="404") == 2
    assert value(page, "diagnoser_http_requests_total",
                 method="POST", route="/diagnose", status="202") == 1  # fmt: skip
    routes = {dict(labels).get("route") for (_, labels) in samples(page)}
    assert "/jobs/one" not in routes and "/no/such/path" not in routes
    assert value(page, "diagnoser_http_requests_total",
                 method="GET", route="unmatched", status="404") == 1  # fmt: skip


DOCS_PAGES = {
    "/openapi.json": "/openapi.json",
    DOCS_PATH: DOCS_PATH,
    REDOC_PATH: REDOC_PATH,
    OAUTH2_REDIRECT_PATH: OAUTH2_REDIRECT_PATH,
    f"{STATIC_PATH}/swagger-ui.css": f"{STATIC_PATH}/{{path}}",
    f"{STATIC_PATH}/redoc.standalone.js": f"{STATIC_PATH}/{{path}}",
}
"""The schema and the docs' pages and assets, by path asked: the route label of each."""


def test_the_schema_and_the_docs_are_counted_under_their_own_routes(client: TestClient) -> None:
    for path in DOCS_PAGES:
        assert client.get(path).status_code == 200, path
    assert client.post("/openapi.json").status_code == 405
    page = _scrape(client)
    assert value(page, "diagnoser_http_requests_total",
                 method="POST", route="/openapi.json", status="405") == 1  # fmt: skip
    for route, asked in Counter(DOCS_PAGES.values()).items():
        assert value(page, "diagnoser_http_requests_total",
                     method="GET", route=route, status="200") == asked, route  # fmt: skip
    assert value(page, "diagnoser_http_requests_total",
                 method="GET", route=UNMATCHED, status="200") is None  # fmt: skip


def test_a_request_that_failed_unexpectedly_is_counted_as_500(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = client.app.state.service  # type: ignore[attr-defined]

    def broken(**_: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(service.store, "findings", broken)
    quiet = TestClient(client.app, raise_server_exceptions=False)
    assert quiet.get("/findings").status_code == 500
    page = _scrape(client)
    assert value(page, "diagnoser_http_requests_total",
                 method="GET", route="/findings", status="500") == 1  # fmt: skip
