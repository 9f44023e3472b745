"""`GET /findings` and `GET /findings/{id}` in JSON, Markdown and SARIF."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.api.conftest import SAMPLES

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
