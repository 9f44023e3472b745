"""`GET /findings` and `GET /findings/{id}` in JSON, Markdown and SARIF."""

from __future__ import annotations

import base64

import pytest
from fastapi.testclient import TestClient

from api import ServiceSettings, create_app
from tests.api.conftest import DEMO, SAMPLES

ISSUE = (SAMPLES / "issue_load_more_500.md").read_text()
PRAISE = (SAMPLES / "review_praise.txt").read_text()


def _finding_id(client: TestClient, text: str, **report: object) -> str:
    body = {"report": {"text": text, **report}}
    done = client.post("/diagnose?wait=60", json=body).json()
    return str(done["finding_id"])


def test_a_finding_in_three_formats(client: TestClient) -> None:
    finding_id = _finding_id(client, ISSUE, source="github")
    as_json = client.get(f"/findings/{finding_id}").json()
    assert as_json["id"] == finding_id and as_json["finding"]["files"]
    markdown = client.get(f"/findings/{finding_id}", headers={"Accept": "text/markdown"})
    assert markdown.headers["content-type"].startswith("text/markdown")
    assert markdown.text.startswith("# ") and "## Root cause" in markdown.text
    sarif = client.get(f"/findings/{finding_id}?format=sarif")
    assert sarif.json()["version"] == "2.1.0"
    assert client.get("/findings/nope").status_code == 404


def test_findings_filter_and_page(client: TestClient) -> None:
    bug = _finding_id(client, ISSUE, source="github")
    praise = _finding_id(client, PRAISE, source="review", rating=5)
    page = client.get("/findings?limit=1").json()
    assert [f["id"] for f in page["items"]] == [praise] and page["next_cursor"]
    rest = client.get(f"/findings?limit=1&cursor={page['next_cursor']}").json()
    assert [f["id"] for f in rest["items"]] == [bug] and rest["next_cursor"] is None
    only = client.get("/findings?classification=praise").json()["items"]
    assert [f["id"] for f in only] == [praise]
    assert client.get("/findings?cursor=zzz").status_code == 400


def test_the_status_filter_takes_the_legacy_names_too(client: TestClient) -> None:
    bug = _finding_id(client, ISSUE, source="github")
    praise = _finding_id(client, PRAISE, source="review", rating=5)
    for new, old, found in (("grounded", "verified", bug), ("ungrounded", "unverified", praise)):
        for name in (new, old):
            items = client.get(f"/findings?status={name}").json()["items"]
            assert [(f["id"], f["status"]) for f in items] == [(found, new)], name


def test_since_takes_a_date_time_with_its_offset(client: TestClient) -> None:
    finding_id = _finding_id(client, ISSUE, source="github")
    items = client.get("/findings", params={"since": "2000-01-01T00:00:00Z"}).json()["items"]
    assert [f["id"] for f in items] == [finding_id]
    later = client.get("/findings", params={"since": "2999-01-01T00:00:00+02:00"}).json()
    assert later["items"] == []
    for loose in ("0.5", "1700000000", "2024-05-01", "2024-05-01T00:00:00", "soon"):
        response = client.get("/findings", params={"since": loose})
        assert response.status_code == 422, loose
        assert "since" in response.json()["detail"] and "offset" in response.json()["detail"]


def test_a_nul_in_a_filter_or_an_id_matches_nothing(client: TestClient) -> None:
    """PostgreSQL cannot compare text holding a NUL: these were 500s there."""
    _finding_id(client, ISSUE, source="github")
    for name in ("repo", "classification", "status"):
        response = client.get("/findings", params={name: "bug\x00"})
        assert response.status_code == 200 and response.json()["items"] == [], name
    assert client.get("/findings/a%00b").status_code == 404
    nul_cursor = base64.urlsafe_b64encode(b"2024-05-01T00:00:00+00:00|a\x00").decode()
    assert client.get("/findings", params={"cursor": nul_cursor}).status_code == 400


def test_a_title_holding_a_nul_is_stored(client: TestClient) -> None:
    """PostgreSQL text cannot hold a NUL: storing this Finding failed the job there."""
    report = {"text": "boom\x00 x", "title": "t\x00"}  # "Not located: t\x00"
    done = client.post("/diagnose?wait=60", json={"report": report}).json()
    assert done["state"] == "complete", done["reason"]
    listed = client.get("/findings").json()["items"]
    assert [f["id"] for f in listed] == [done["finding_id"]]
    assert "\x00" not in listed[0]["title"]


def test_a_finding_comes_back_with_its_suspects(client: TestClient) -> None:
    finding_id = _finding_id(client, ISSUE, source="github")
    finding = client.get(f"/findings/{finding_id}").json()["finding"]
    suspects = finding["suspects"]
    assert suspects, "an investigated report lists its suspects"
    paths = [s["path"] for s in suspects]
    runs = [p for n, p in enumerate(paths) if n == 0 or paths[n - 1] != p]
    assert len(runs) == len(set(runs)) == len(set(paths)) <= 10 and len(paths) <= 12
    assert suspects[0]["path"] == finding["files"][0]["path"]
    assert {"path", "symbol", "line", "score", "source", "reason"} <= suspects[0].keys()
    markdown = client.get(f"/findings/{finding_id}?format=markdown").text
    assert "## Suspects" in markdown
    [result] = client.get(f"/findings/{finding_id}?format=sarif").json()["runs"][0]["results"]
    ranks = [r["properties"]["suspect"]["rank"] for r in result["relatedLocations"]
             if "suspect" in r.get("properties", {})]  # fmt: skip
    assert ranks == list(range(1, len(suspects) + 1))
    praise = _finding_id(client, PRAISE, source="review", rating=5)
    assert client.get(f"/findings/{praise}").json()["finding"]["suspects"] == []


def test_a_repository_that_opted_in_is_verified_and_its_run_logs_are_served(
    service_settings: ServiceSettings, lean_python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DIAGNOSER_VERIFY", "1")  # the CLI's switch: the service ignores it
    snippet = (SAMPLES / "issue_last_page_snippet.md").read_text()
    opted = service_settings.model_copy(update={
        "repos": {"demo": DEMO, "other": DEMO}, "verify_repos": {"demo": lean_python},
    })  # fmt: skip
    with TestClient(create_app(opted)) as client:
        found = {}
        for repo in ("demo", "other"):
            body = {"report": {"text": snippet, "source": "github"}, "repo": repo}
            job = client.post("/diagnose?wait=60", json=body).json()
            assert job["state"] == "complete", job
            found[repo] = job
        verified, untouched = (found[r]["finding"] for r in ("demo", "other"))
        assert verified["reproduction"]["status"] == "reproduced"
        assert untouched["reproduction"]["status"] == "not_attempted"
        assert [c["origin"] for c in untouched["changes"]] == ["model"]
        ref, finding_id = verified["reproduction"]["log"], found["demo"]["finding_id"]
        log = client.get(f"/findings/{finding_id}/logs/{ref}")
        assert log.status_code == 200 and "PageOutOfRangeError: page 3 of 2" in log.text
        assert log.headers["content-type"].startswith("text/plain")
        made = [c for c in verified["changes"] if c["origin"] == "template"]
        assert (
            made
            and client.get(f"/findings/{finding_id}/logs/{made[0]['tested']['log']}").status_code
            == 200
        )
        other_id = found["other"]["finding_id"]
        assert client.get(f"/findings/{other_id}/logs/{ref}").status_code == 404  # not its log
        assert client.get(f"/findings/{finding_id}/logs/..%2F..%2Fetc").status_code in (404, 422)
        assert client.get(f"/findings/{finding_id}/logs/0123456789ABCDEF").status_code == 422
