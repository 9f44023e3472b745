"""`GET /jobs/{id}` and its events, as JSON and as a live event stream."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient

from tests.api.conftest import SAMPLES, wait_for_job

ISSUE = (SAMPLES / "issue_load_more_500.md").read_text()


def _submit(client: TestClient) -> str:
    response = client.post("/diagnose", content=ISSUE, headers={"Content-Type": "text/plain"})
    return str(response.json()["job_id"])


def test_a_job_shows_its_state_and_timestamps(client: TestClient) -> None:
    job = wait_for_job(client, _submit(client))
    assert job["state"] == "complete" and job["reason"] == ""
    assert job["created_at"] <= job["started_at"] <= job["finished_at"]
    assert job["occurrences"] == 1 and job["finding_id"]


def test_events_are_numbered_and_end_in_a_terminal_state(client: TestClient) -> None:
    job_id = _submit(client)
    wait_for_job(client, job_id)
    events = client.get(f"/jobs/{job_id}/events").json()
    assert [e["seq"] for e in events] == list(range(len(events)))
    states = [e["state"] for e in events]
    assert states[0] == "received" and states[-1] == "complete"
    assert "exploring" in states and all(e["at"].endswith(("Z", "+00:00")) for e in events)


def test_the_event_stream_runs_until_the_job_ends(client: TestClient) -> None:
    job_id = _submit(client)
    frames: list[tuple[str, str]] = []
    headers = {"Accept": "text/event-stream"}
    with client.stream("GET", f"/jobs/{job_id}/events", headers=headers) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        event = ""
        for line in response.iter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                frames.append((event, line[6:]))
    names = [name for name, _ in frames]
    assert names[0] == "received" and names[-1] == "end"
    assert json.loads(frames[-1][1]) == {"state": "complete"}
    seqs = [json.loads(data)["seq"] for name, data in frames[:-1]]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


def test_an_unknown_job_is_404(client: TestClient) -> None:
    assert client.get("/jobs/nope").status_code == 404
    assert client.get("/jobs/nope/events").status_code == 404


def test_a_job_id_holding_a_nul_is_404(client: TestClient) -> None:
    """PostgreSQL cannot compare text holding a NUL: these were 500s there."""
    assert client.get("/jobs/a%00").status_code == 404
    assert client.get("/jobs/a%00/events").status_code == 404
