"""Storage a caller without a key can fill, on SQLite and PostgreSQL: refused bodies kept
only in part and within a budget, every header-derived value cut to fit its column, and
a 500 that promises nothing it did not ensure."""
# ruff: noqa: F811 (the API tests' fixtures, imported by name, are parameters here)

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api import ServiceSettings, create_app
from api.bounds import CUT, HEADER_VALUE_CHARS, REFUSED_PREFIX_BYTES
from api.errors import INTERNAL_ERROR
from api.service import STORED_HEADERS
from api.tables import CONTENT_TYPE_LENGTH, DELIVERY_ID_LENGTH
from diagnoser.constants import MAX_PAYLOAD_BYTES
from tests.api.conftest import (  # noqa: F401 (fixtures: one database of each kind)
    SAMPLES,
    SECRETS,
    client,
    database_url,
    service_settings,
    wait_for_job,
)

REFUSALS = 20
LONG = 5_000
"""Characters of each over-long header: far over every column (128, 256)."""
TRACEBACK = (SAMPLES / "issue_load_more_500.md").read_text()


def _github_body() -> bytes:
    return json.dumps({
        "action": "opened",
        "issue": {"number": 7, "title": "Load more fails with a 500", "body": TRACEBACK,
                  "html_url": "https://github.com/acme/jotter/issues/7", "labels": [],
                  "user": {"login": "ana"}},
        "repository": {"full_name": "acme/jotter"},
    }).encode()  # fmt: skip


def _github_signature(body: bytes, secret: str = SECRETS["github_secret"]) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def _standard_headers(body: bytes, msg_id: str) -> dict[str, str]:
    stamp = str(int(time.time()))
    key = base64.b64decode(SECRETS["standard_webhook_secret"].removeprefix("whsec_"))
    digest = hmac.new(key, f"{msg_id}.{stamp}.".encode() + body, hashlib.sha256).digest()
    signature = "v1," + base64.b64encode(digest).decode()
    return {"webhook-id": msg_id, "webhook-timestamp": stamp, "webhook-signature": signature}


def _long_headers() -> dict[str, str]:
    """Every header we store, and Content-Type, far over its column."""
    values = {name: name[0] * LONG for name in STORED_HEADERS if name != "webhook-id"}
    return values | {"content-type": "application/json; x=" + "c" * LONG}


def _reports(client: TestClient) -> list[dict[str, Any]]:
    service = client.app.state.service  # type: ignore[attr-defined]
    with service.store.engine.connect() as connection:
        rows = connection.exec_driver_sql(
            "SELECT raw, content_type, headers, rejected, body_bytes, body_sha256 FROM reports"
        ).mappings()
        return [dict(row) for row in rows]


@pytest.fixture
def unraised(service_settings: ServiceSettings) -> Iterator[TestClient]:
    """The app, answering an unexpected error with its 500 (not raising it in the test)."""
    with TestClient(create_app(service_settings), raise_server_exceptions=False) as client:
        yield client


def test_refused_bodies_keep_only_their_start(client: TestClient) -> None:
    body = b'{"action": "opened", "pad": "' + b"x" * (MAX_PAYLOAD_BYTES - 40) + b'"}'
    assert len(body) <= MAX_PAYLOAD_BYTES
    headers = {"X-Hub-Signature-256": _github_signature(body, "wrong"), "X-GitHub-Event": "issues"}
    for n in range(REFUSALS):
        answer = client.post("/webhooks/github", content=body, headers=headers)
        assert answer.status_code == 401, (n, answer.text)
    rows = _reports(client)
    assert len(rows) == REFUSALS
    assert sum(len(row["raw"]) for row in rows) <= REFUSALS * REFUSED_PREFIX_BYTES
    digest = hashlib.sha256(body).hexdigest()
    for row in rows:
        assert bytes(row["raw"]) == body[:REFUSED_PREFIX_BYTES]
        assert (row["body_bytes"], row["body_sha256"]) == (len(body), digest)
        assert row["rejected"].startswith("signature:")
        assert json.loads(row["headers"]) == {"x-github-event": "issues"}


def test_past_the_budget_a_refusal_keeps_only_its_metadata(
    service_settings: ServiceSettings,
) -> None:
    settings = service_settings.model_copy(update={"refused_budget_bytes": 3 * 4096})
    body = b"y" * 10_000
    with TestClient(create_app(settings)) as client:
        for _ in range(5):
            assert client.post("/webhooks/bugsnag/wrong", content=body).status_code == 401
        rows = _reports(client)
    kept = sorted(len(row["raw"]) for row in rows)
    assert kept == [0, 0, REFUSED_PREFIX_BYTES, REFUSED_PREFIX_BYTES, REFUSED_PREFIX_BYTES]
    assert all(row["body_bytes"] == len(body) and row["rejected"] for row in rows)


def test_over_long_headers_on_a_signed_delivery_are_cut_and_it_runs(client: TestClient) -> None:
    body = _github_body()
    headers = _long_headers() | {
        "x-hub-signature-256": _github_signature(body), "x-github-event": "issues",
        "x-github-delivery": "d" * LONG,
    }  # fmt: skip
    answer = client.post("/webhooks/github", content=body, headers=headers)
    assert answer.status_code == 202, answer.text
    assert wait_for_job(client, answer.json()["job_id"])["state"] == "complete"
    again = client.post("/webhooks/github", content=body, headers=headers)
    assert again.status_code == 200 and again.json()["replayed"]
    _assert_bounded(client, expected=1)


def test_an_over_long_standard_webhook_id_is_stored_and_runs(client: TestClient) -> None:
    body = json.dumps({"type": "bug.reported", "data": {"title": "Crash", "text": TRACEBACK}})
    signed = _standard_headers(body.encode(), "m" * LONG)
    answer = client.post("/webhooks/standard", content=body, headers=_long_headers() | signed)
    assert answer.status_code == 202, answer.text
    assert wait_for_job(client, answer.json()["job_id"])["state"] == "complete"
    service = client.app.state.service  # type: ignore[attr-defined]
    with service.store.engine.connect() as connection:
        ids = connection.exec_driver_sql("SELECT delivery_id FROM deliveries").scalars().all()
    assert len(ids) == 1 and len(ids[0]) <= DELIVERY_ID_LENGTH
    _assert_bounded(client, expected=1)


def test_over_long_headers_on_a_refused_delivery_are_401_and_kept(client: TestClient) -> None:
    body = _github_body()
    headers = _long_headers() | {
        "x-hub-signature-256": _github_signature(body, "wrong"), "x-github-delivery": "d" * LONG,
    }  # fmt: skip
    answer = client.post("/webhooks/github", content=body, headers=headers)
    assert answer.status_code == 401, answer.text
    [row] = _assert_bounded(client, expected=1)
    assert row["rejected"].startswith("signature:")


def _assert_bounded(client: TestClient, *, expected: int) -> list[dict[str, Any]]:
    rows = _reports(client)
    assert len(rows) == expected
    for row in rows:
        assert len(row["content_type"]) <= CONTENT_TYPE_LENGTH
        assert (
            row["content_type"].startswith("application/json; x=ccc") and CUT in row["content_type"]
        )
        stored = json.loads(row["headers"])
        assert {"request-id", "sentry-hook-resource"} <= stored.keys()
        assert all(len(value) <= HEADER_VALUE_CHARS for value in stored.values())
        assert all(CUT in stored[name] for name in ("request-id", "sentry-hook-resource"))
    return rows


def test_a_500_before_storing_claims_nothing_was_kept(
    unraised: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = unraised.app.state.service  # type: ignore[attr-defined]

    def broken(**_: object) -> None:
        raise RuntimeError("the database went away")

    monkeypatch.setattr(service.store, "deliver", broken)
    body = _github_body()
    headers = {"X-Hub-Signature-256": _github_signature(body), "X-GitHub-Event": "issues"}
    answer = unraised.post("/webhooks/github", content=body, headers=headers)
    assert answer.status_code == 500
    assert answer.json() == {"detail": INTERNAL_ERROR}
    assert "nothing was lost" not in answer.text and "database" not in answer.text
