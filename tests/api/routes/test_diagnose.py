"""`POST /diagnose` end to end on the offline model, on SQLite and PostgreSQL; and on a
real model alone (a fake provider), on SQLite."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from api import ServiceSettings, create_app
from diagnoser.formatter import INSTRUCTIONS as FORMATTER_INSTRUCTIONS
from tests.api.conftest import DEMO, SAMPLES, wait_for_job
from tests.fakes.provider import FakeProvider, Reply, Request, Text, call

CRASH = (SAMPLES / "android_logcat_open_shared.txt").read_text()
ISSUE = (SAMPLES / "issue_load_more_500.md").read_text()
PRAISE = (SAMPLES / "review_praise.txt").read_text()


def test_a_crash_is_queued_then_diagnosed(client: TestClient) -> None:
    response = client.post("/diagnose", json={"report": {"text": CRASH, "source": "crash_log"}})
    assert response.status_code == 202
    accepted = response.json()
    assert response.headers["location"] == accepted["status_url"] == f"/jobs/{accepted['job_id']}"
    job = wait_for_job(client, accepted["job_id"])
    assert job["state"] == "complete" and job["finding_id"]
    finding = client.get(f"/findings/{job['finding_id']}").json()["finding"]
    assert finding["classification"] == "crash"
    assert any(f["path"].endswith("NoteRepository.kt") for f in finding["files"])


def test_wait_returns_the_job_with_its_finding(client: TestClient) -> None:
    response = client.post(
        "/diagnose?repo=demo&wait=60", content=ISSUE, headers={"Content-Type": "text/plain"}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["state"] == "complete"
    assert body["finding"]["files"], body["finding"]


def test_identical_reports_attach_to_one_job(client: TestClient) -> None:
    report = {"report": {"text": CRASH, "source": "crash_log"}}
    first = client.post("/diagnose", json=report).json()
    second = client.post("/diagnose", json=report).json()
    assert second["job_id"] == first["job_id"] and second["attached"]
    assert second["occurrences"] == 2
    wait_for_job(client, first["job_id"])
    third = client.post("/diagnose?wait=5", json=report).json()  # ended: still attaches
    assert third["id"] == first["job_id"] and third["occurrences"] == 3
    assert third["finding"] is not None


def test_praise_is_not_investigated(client: TestClient) -> None:
    body = {"report": {"text": PRAISE, "source": "review", "rating": 5}}
    done = client.post("/diagnose?wait=60", json=body).json()
    assert done["state"] == "not_actionable"
    assert done["finding"]["classification"] == "praise"


def test_bad_requests_say_what_to_fix(client: TestClient) -> None:
    missing = client.post("/diagnose", json={"report": {"source": "crash_log"}})
    assert missing.status_code == 422 and "report.text" in missing.json()["detail"]
    extra = client.post("/diagnose", json={"report": {"text": "x"}, "bogus": 1})
    assert extra.status_code == 422 and "bogus" in extra.json()["detail"]
    not_json = client.post("/diagnose", content=b"{", headers={"Content-Type": "application/json"})
    assert not_json.status_code == 422
    kind = client.post("/diagnose", content=b"x", headers={"Content-Type": "image/png"})
    assert kind.status_code == 415 and "text/plain" in kind.json()["detail"]
    empty = client.post("/diagnose", content=b"  ", headers={"Content-Type": "text/plain"})
    assert empty.status_code == 422
    binary = client.post("/diagnose", content=b"\xff\xfe", headers={"Content-Type": "text/plain"})
    assert binary.status_code == 400 and "UTF-8" in binary.json()["detail"]
    unknown = client.post(
        "/diagnose?repo=nope", content=b"boom", headers={"Content-Type": "text/plain"}
    )
    assert unknown.status_code == 404 and "demo" in unknown.json()["detail"]
    rating = client.post("/diagnose", json={"report": {"text": "x", "rating": 9}})
    assert rating.status_code == 422 and "rating" in rating.json()["detail"]


def test_an_oversized_body_is_413(client: TestClient) -> None:
    huge = b"a" * 2_000_001
    response = client.post("/diagnose", content=huge, headers={"Content-Type": "text/plain"})
    assert response.status_code == 413 and "2,000,000" in response.json()["detail"]


def test_a_repo_not_configured_is_404_before_any_conflict(client: TestClient) -> None:
    body = {"repo": "demo", "report": {"text": CRASH, "source": "crash_log"}}
    response = client.post("/diagnose?repo=nope", json=body)
    assert response.status_code == 404 and "nope" in response.json()["detail"]
    response = client.post("/diagnose?repo=demo", json={**body, "repo": "nope"})
    assert response.status_code == 404 and "nope" in response.json()["detail"]


NON_FINITE = [b"NaN", b"-Infinity", b"Infinity", b"1e999"]
"""What Python's and pydantic's JSON parsers read as a float, and JSON has no number for."""


@pytest.mark.parametrize("number", NON_FINITE)
def test_a_non_finite_number_in_metadata_is_422_naming_the_field(
    client: TestClient, number: bytes
) -> None:
    body = b'{"report": {"text": "boom", "metadata": {"sdk": {"sample": [1, %s]}}}}' % number
    response = client.post("/diagnose", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 422
    assert response.json()["detail"] == (
        "report.metadata: NaN and Infinity are not JSON numbers (at sdk.sample.1)"
    )


def test_the_openapi_says_when_repo_is_required(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    field = spec["components"]["schemas"]["DiagnoseIn"]["properties"]["repo"]
    operation = spec["paths"]["/diagnose"]["post"]
    query = next(p for p in operation["parameters"] if p["name"] == "repo")
    for description in (field["description"], query["description"]):
        assert "single repository" in description and "422" in description
    assert "several" in operation["responses"]["422"]["description"]


OFF_TEMPLATE = "It is page_count in backend/notes/store.py line 82: it floors total/per_page."
EXTRACTED = {
    "title": "page_count floors the page count",
    "root_cause": {"summary": "page_count rounds down", "confidence": 0.7},
    "files": [{"path": "backend/notes/store.py", "start_line": 82, "end_line": 82,
               "evidence": "        return max(1, total // per_page)"}],
}  # fmt: skip
"""What the formatter's request extracts from OFF_TEMPLATE (its output tool's arguments)."""


def one_model(request: Request) -> Reply:
    """One model: it explores and reports off the template, then formats its report."""
    if FORMATTER_INSTRUCTIONS in request.instructions:
        [output_tool] = request.tools
        return call(output_tool, **EXTRACTED)
    return Text(OFF_TEMPLATE)


def test_a_real_model_alone_is_enough_for_a_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The service resolves models as the CLI does: with no formatter set, the
    explorer's own model structures the report it wrote off the template."""
    monkeypatch.setenv("DIAGNOSER_HOME", str(tmp_path / "home"))
    with FakeProvider(one_model) as fake:
        settings = ServiceSettings(
            database_url=f"sqlite:///{tmp_path / 'diagnoser.sqlite'}", repos={"demo": DEMO},
            model="openai:gpt-x", model_base_url=fake.url + "/v1", model_api_key=SecretStr("k"),
        )  # fmt: skip
        with TestClient(create_app(settings)) as client:
            response = client.post(
                "/diagnose?wait=60", content=ISSUE, headers={"Content-Type": "text/plain"}
            )
        assert not fake.failures, fake.failures[0]
    assert response.status_code == 200, response.text
    done = response.json()
    assert done["state"] == "complete", done
    provenance = done["finding"]["provenance"]
    assert provenance["answered"] == {"investigate": ["gpt-x"], "structure": ["gpt-x"]}
    assert done["finding"]["status"] == "grounded"
