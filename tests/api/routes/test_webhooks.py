"""Webhooks over HTTP: signatures checked over the raw body, deliveries deduplicated
(also under a concurrent burst), ignored events answered 200, bodies kept."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from concurrent.futures import ThreadPoolExecutor

from fastapi.testclient import TestClient

from tests.api.conftest import SAMPLES, SECRETS, wait_for_job

TRACEBACK = (SAMPLES / "issue_load_more_500.md").read_text()


def _github_body(action: str = "opened") -> bytes:
    return json.dumps({
        "action": action,
        "issue": {"number": 7, "title": "Load more fails with a 500", "body": TRACEBACK,
                  "html_url": "https://github.com/acme/jotter/issues/7", "labels": [],
                  "user": {"login": "ana"}},
        "repository": {"full_name": "acme/jotter"},
    }).encode()  # fmt: skip


def _github_headers(body: bytes, *, secret: str = SECRETS["github_secret"],
                    delivery: str = "d-1", event: str = "issues") -> dict[str, str]:  # fmt: skip
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return {"X-Hub-Signature-256": f"sha256={digest}", "X-GitHub-Delivery": delivery,
            "X-GitHub-Event": event, "Content-Type": "application/json"}  # fmt: skip


def _standard_headers(
    body: bytes, *, msg_id: str = "msg_1", at: int | None = None
) -> dict[str, str]:
    stamp = str(at if at is not None else int(time.time()))
    key = base64.b64decode(SECRETS["standard_webhook_secret"].removeprefix("whsec_"))
    signed = f"{msg_id}.{stamp}.".encode() + body
    signature = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return {"webhook-id": msg_id, "webhook-timestamp": stamp,
            "webhook-signature": f"v1,{signature}", "Content-Type": "application/json"}  # fmt: skip


def test_a_signed_github_issue_is_queued_and_diagnosed(client: TestClient) -> None:
    body = _github_body()
    response = client.post("/webhooks/github", content=body, headers=_github_headers(body))
    assert response.status_code == 202, response.text
    job = wait_for_job(client, response.json()["job_id"])
    assert job["state"] == "complete", job


def test_a_wrong_secret_or_tampered_body_is_401_and_kept(client: TestClient) -> None:
    body = _github_body()
    wrong = client.post(
        "/webhooks/github", content=body, headers=_github_headers(body, secret="nope")
    )
    assert wrong.status_code == 401 and "X-Hub-Signature-256" in wrong.json()["detail"]
    tampered = client.post(
        "/webhooks/github", content=body + b" ", headers=_github_headers(body, delivery="d-2")
    )
    assert tampered.status_code == 401
    service = client.app.state.service  # type: ignore[attr-defined]
    with service.store.engine.connect() as connection:
        rows = connection.exec_driver_sql("SELECT rejected FROM reports").fetchall()
    assert len(rows) == 2 and all(r[0].startswith("signature:") for r in rows)


def test_a_replayed_delivery_gets_its_first_job(client: TestClient) -> None:
    body = _github_body()
    first = client.post("/webhooks/github", content=body, headers=_github_headers(body)).json()
    again = client.post("/webhooks/github", content=body, headers=_github_headers(body))
    assert again.status_code == 200
    assert again.json()["replayed"] and again.json()["job_id"] == first["job_id"]


def test_a_burst_of_one_delivery_makes_one_job(client: TestClient) -> None:
    body = _github_body()
    headers = _github_headers(body, delivery="burst")

    def post(_: int) -> tuple[int, str]:
        response = client.post("/webhooks/github", content=body, headers=headers)
        return response.status_code, response.json()["job_id"]

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(post, range(24)))
    assert sorted(code for code, _ in results).count(202) == 1
    assert len({job for _, job in results}) == 1


def test_events_we_do_not_act_on_are_ignored(client: TestClient) -> None:
    closed = _github_body("closed")
    response = client.post("/webhooks/github", content=closed, headers=_github_headers(closed))
    assert response.status_code == 200 and response.json()["ignored"]
    ping = b'{"zen": "hi"}'
    pong = client.post(
        "/webhooks/github", content=ping, headers=_github_headers(ping, event="ping")
    )
    assert pong.status_code == 200 and pong.json()["ignored"]


def test_standard_webhooks_check_the_timestamp(client: TestClient) -> None:
    body = json.dumps(
        {"type": "bug.reported", "data": {"title": "Crash", "text": TRACEBACK}}
    ).encode()
    fresh = client.post("/webhooks/standard", content=body, headers=_standard_headers(body))
    assert fresh.status_code == 202, fresh.text
    stale = _standard_headers(body, msg_id="msg_2", at=int(time.time()) - 3600)
    old = client.post("/webhooks/standard", content=body, headers=stale)
    assert old.status_code == 401 and "timestamp" in old.json()["detail"]


def test_url_tokens_guard_the_unsigned_webhooks(client: TestClient) -> None:
    review = json.dumps({"text": "Notes\nApp Store, Acme\n★☆☆☆☆ US\n*Crashes*\n"
                                 "It crashes every time I open a shared note\n"
                                 "_by_ *bob* _for v2.4_"}).encode()  # fmt: skip
    bad = client.post("/webhooks/reviews?token=wrong", content=review)
    assert bad.status_code == 401
    good = client.post(f"/webhooks/reviews?token={SECRETS['webhook_token']}", content=review)
    assert good.status_code == 202
    assert client.post("/webhooks/bugsnag/wrong", content=b"{}").status_code == 401


def test_a_malformed_payload_fails_its_job_with_the_reason(client: TestClient) -> None:
    token = SECRETS["webhook_token"]
    response = client.post(f"/webhooks/rollbar/{token}", content=b'{"event_name": "new_item"}')
    assert response.status_code == 202
    job = wait_for_job(client, response.json()["job_id"])
    assert job["state"] == "failed" and "rollbar" in job["reason"]
