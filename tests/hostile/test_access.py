"""What a caller without a key learns or can do (issue 23 §3, and §2's webhook limit).

With `DIAGNOSER_API_KEYS` set: `/metrics` wants a key, `/readyz` answers without details,
errors never list the configured repos, the docs are public or not by a setting. Failed
authentication is throttled per address (429 + Retry-After, a correct key too); webhooks
are rate-limited per address and route before their body is read; a full queue pushes
back (503 + Retry-After, nothing stored) and live event streams are capped. Every
client address is set by hand (`TestClient(app, client=(address, port))`); the queue is
"parked" (jobs stay queued, nothing runs them) where a test needs a full one. Storage
is counted on SQLite and PostgreSQL.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from api import ServiceSettings, create_app
from api import backpressure as backpressure_module
from api.app import build_service
from api.auth import FailureThrottle
from api.backpressure import DEPTH_CACHE_SECONDS, MAX_STREAMS_PER_JOB, Backpressure
from api.inputs import DIAGNOSE
from api.queue import Jobs
from api.service import Service
from api.tables import ReportRow
from tests.api.conftest import DEMO, SAMPLES, SECRETS
from tests.api.server import free_port

KEY = "k-0123456789abcdef"
ATTACKER = ("10.0.0.7", 50000)
BYSTANDER = ("10.0.0.8", 50000)
CRASH = (SAMPLES / "android_logcat_open_shared.txt").read_text()
TOKEN = SECRETS["webhook_token"]
SQLITE_ONLY = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
"""For a test that stores nothing: one database is enough (the suite stays short)."""
HANG_GUARD_SECONDS = 30.0
"""Bound on waiting for a server or a stream to change state; not a timing."""


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _app(settings: ServiceSettings, **changes: object) -> FastAPI:
    return create_app(settings.model_copy(update=changes))


@contextmanager
def _clients(app: FastAPI, *addresses: tuple[str, int]) -> Iterator[list[TestClient]]:
    """One client per address on the same app; the first runs the lifespan."""
    with TestClient(app, client=addresses[0]) as first:
        yield [first, *(TestClient(app, client=address) for address in addresses[1:])]


def _service(client: TestClient) -> Service:
    service: Service = client.app.state.service  # type: ignore[attr-defined]
    return service


def _reports(client: TestClient) -> int:
    with _service(client).store.engine.connect() as connection:
        return int(connection.scalar(select(func.count()).select_from(ReportRow)) or 0)


def _github(client: TestClient, delivery: str, *, secret: str = SECRETS["github_secret"]) -> int:
    issue = {"number": 1, "title": f"Crash {delivery}", "body": CRASH}
    body = json.dumps({"action": "opened", "issue": issue, "repository": {"full_name": "a/b"}})
    digest = hmac.new(secret.encode(), body.encode(), hashlib.sha256).hexdigest()
    headers = {
        "X-GitHub-Event": "issues", "X-GitHub-Delivery": delivery,
        "Content-Type": "application/json", "X-Hub-Signature-256": f"sha256={digest}",
    }  # fmt: skip
    return client.post("/webhooks/github", content=body, headers=headers).status_code


def _rollbar(client: TestClient, n: int, *, route: str = "rollbar") -> httpx.Response:
    body = json.dumps({"event_name": "new_item", "n": n}).encode()
    return client.post(f"/webhooks/{route}/{TOKEN}", content=body)


def _retry_after(response: httpx.Response) -> int:
    seconds = int(response.headers["retry-after"])
    assert seconds >= 1
    return seconds


# ---- §3.1 what a caller without a key learns -------------------------------------------


@SQLITE_ONLY
def test_with_keys_metrics_wants_a_key_unless_made_public(
    service_settings: ServiceSettings,
) -> None:
    with TestClient(_app(service_settings, api_keys=(KEY,))) as client:
        refused = client.get("/metrics")
        assert refused.status_code == 401 and "diagnoser_queue_depth" not in refused.text
        scraped = client.get("/metrics", headers={"Authorization": f"Bearer {KEY}"})
        assert scraped.status_code == 200 and "diagnoser_queue_depth" in scraped.text
    with TestClient(_app(service_settings, api_keys=(KEY,), metrics_public=True)) as client:
        assert client.get("/metrics").status_code == 200


@SQLITE_ONLY
def test_run_logs_want_a_key_and_made_up_references_read_nothing(
    service_settings: ServiceSettings,
) -> None:
    """`GET /findings/{id}/logs/{ref}` (issue 26): a reference is 16 hex digits, looked up
    in the store for that finding only — never a path, never a 500."""
    made_up = ("0123456789abcdef", "..%2F..%2Fetc%2Fpasswd", "%00" * 8, "f" * 10_000,
               "0123456789ABCDEF", "0123456789abcdef0")  # fmt: skip
    with TestClient(_app(service_settings, api_keys=(KEY,))) as client:
        for ref in made_up:  # an encoded `/` matches no route at all: 404 before any key
            assert client.get(f"/findings/nope/logs/{ref}").status_code in (401, 404), ref
        assert client.get("/findings/nope/logs/0123456789abcdef").status_code == 401
        key = {"X-API-Key": KEY}
        answers = {ref: client.get(f"/findings/nope/logs/{ref}", headers=key) for ref in made_up}
        assert answers["0123456789abcdef"].status_code == 404
        for ref, answer in answers.items():
            assert answer.status_code in (404, 422), ref
            assert len(answer.content) < 2_000 and "root:" not in answer.text


@SQLITE_ONLY
def test_with_keys_readyz_says_only_whether_ready_and_healthz_stays_open(
    service_settings: ServiceSettings,
) -> None:
    with TestClient(_app(service_settings, api_keys=(KEY,))) as client:
        assert client.get("/healthz").status_code == 200
        brief = client.get("/readyz")
        assert brief.status_code in (200, 503)
        assert brief.json() == {"ready": brief.status_code == 200}
        assert "demo" not in brief.text
        detailed = client.get("/readyz", headers={"X-API-Key": KEY})
        assert "demo" in detailed.json()["repos"]
        assert client.get("/readyz", headers={"X-API-Key": "wrong"}).status_code == 401


@SQLITE_ONLY
def test_without_keys_health_and_metrics_are_as_before(service_settings: ServiceSettings) -> None:
    with TestClient(create_app(service_settings)) as client:
        assert "demo" in client.get("/readyz").json()["repos"]
        assert client.get("/metrics").status_code == 200


@SQLITE_ONLY
def test_webhook_errors_never_list_the_repos_to_a_caller_without_a_key(
    service_settings: ServiceSettings,
) -> None:
    two = {"demo": DEMO, "secret-project": DEMO}
    with TestClient(_app(service_settings, api_keys=(KEY,), repos=two)) as client:
        unknown = client.post(f"/webhooks/rollbar/{TOKEN}?repo=nope", content=b"{}")
        unnamed = client.post(f"/webhooks/rollbar/{TOKEN}", content=b"{}")
        assert (unknown.status_code, unnamed.status_code) == (404, 422)
        for answer in (unknown, unnamed):
            assert "secret-project" not in answer.text and "demo" not in answer.text
            assert "GET /repos" in answer.json()["detail"]
        keyed = client.post("/diagnose?repo=nope", json={"report": {"text": CRASH}},
                            headers={"X-API-Key": KEY})  # fmt: skip
        assert keyed.status_code == 404 and "secret-project" in keyed.text  # a key: fine
    with TestClient(_app(service_settings, repos=two)) as client:  # no keys: as before
        assert "secret-project" in client.post(f"/webhooks/rollbar/{TOKEN}", content=b"{}").text


@SQLITE_ONLY
def test_guessing_repo_names_on_a_webhook_is_throttled_like_a_bad_signature(
    service_settings: ServiceSettings,
) -> None:
    app = _app(service_settings, api_keys=(KEY,), auth_failures_per_minute=20)
    with _clients(app, ATTACKER) as (attacker,):
        codes = [attacker.post(f"/webhooks/rollbar/{TOKEN}?repo=guess-{i}", content=b"{}")
                 .status_code for i in range(25)]  # fmt: skip
        assert codes == [404] * 20 + [429] * 5


DOCS = ("/docs", "/redoc", "/openapi.json", "/docs/static/swagger-ui.css")


@SQLITE_ONLY
def test_docs_are_public_by_default_and_hold_no_configured_value(
    service_settings: ServiceSettings,
) -> None:
    with TestClient(_app(service_settings, api_keys=(KEY,))) as client:
        for path in DOCS:
            assert client.get(path).status_code == 200, path
        schema = client.get("/openapi.json").text
        for value in (KEY, "demo_app", *SECRETS.values()):
            assert value not in schema


@SQLITE_ONLY
def test_docs_want_a_key_when_not_public(service_settings: ServiceSettings) -> None:
    with TestClient(_app(service_settings, api_keys=(KEY,), docs_public=False)) as client:
        for path in DOCS:
            refused = client.get(path)
            assert refused.status_code == 401, path
            assert "openapi" not in refused.text and "swagger" not in refused.text.lower()
            assert client.get(path, headers={"X-API-Key": KEY}).status_code == 200, path
        assert client.get("/healthz").status_code == 200
    with TestClient(_app(service_settings, docs_public=False)) as client:  # no keys: open
        assert client.get("/openapi.json").status_code == 200


# ---- §3.2 failed authentication is throttled --------------------------------------------


@SQLITE_ONLY
def test_thirty_wrong_keys_from_one_address_end_in_429_even_for_the_right_key(
    service_settings: ServiceSettings,
) -> None:
    app = _app(service_settings, api_keys=(KEY,), auth_failures_per_minute=20)
    with _clients(app, ATTACKER, BYSTANDER) as (attacker, bystander):
        answers = [
            attacker.get("/findings", headers={"X-API-Key": f"guess-{i}"}) for i in range(30)
        ]
        assert [a.status_code for a in answers] == [401] * 20 + [429] * 10
        assert all(1 <= _retry_after(a) <= 60 for a in answers[20:])
        assert "failed authentications" in answers[-1].json()["detail"]
        right = attacker.get("/findings", headers={"X-API-Key": KEY})
        assert right.status_code == 429  # the right key waits out the window too
        assert attacker.get("/healthz").status_code == 200
        assert bystander.get("/findings", headers={"X-API-Key": KEY}).status_code == 200
        assert bystander.get("/findings", headers={"X-API-Key": "wrong"}).status_code == 401


def test_thirty_bad_signatures_from_one_address_end_in_429_and_are_not_stored(
    service_settings: ServiceSettings,
) -> None:
    app = _app(service_settings, auth_failures_per_minute=20)
    with _clients(app, ATTACKER, BYSTANDER) as (attacker, bystander):
        before = _reports(attacker)
        codes = [_github(attacker, f"bad-{i}", secret="guess") for i in range(30)]
        assert codes == [401] * 20 + [429] * 10
        assert _reports(attacker) == before + 20  # refused before the body was read
        assert _github(attacker, "good-1") == 429  # a valid signature waits too
        assert _github(bystander, "bad-b", secret="guess") == 401
        assert _github(bystander, "good-b") == 202
        tokens = [attacker.post(f"/webhooks/reviews?token=guess-{i}", content=b"{}")
                  for i in range(2)]  # fmt: skip
        assert {t.status_code for t in tokens} == {429}


def test_the_throttle_lets_go_a_minute_after_the_first_failure_it_counted() -> None:
    clock = Clock()
    throttle = FailureThrottle(3, clock=clock)
    for _ in range(3):
        assert throttle.wait("a") == 0.0
        throttle.record("a")
        clock.now += 10
    assert throttle.wait("a") == pytest.approx(30.0)  # the first failure, 30 s ago
    assert throttle.wait("b") == 0.0
    clock.now += 30
    assert throttle.wait("a") == 0.0
    throttle.record("a")  # a new window: one failure in it
    assert throttle.wait("a") == 0.0


# ---- §2 webhooks rate-limited per address and route -------------------------------------


def test_webhooks_over_the_limit_are_429_and_not_stored(
    service_settings: ServiceSettings,
) -> None:
    app = _app(service_settings, webhook_rate_limit_per_minute=3)
    with _clients(app, ATTACKER, BYSTANDER) as (attacker, bystander):
        first = [_rollbar(attacker, i) for i in range(3)]
        assert [r.status_code for r in first] == [202] * 3
        stored = _reports(attacker)
        over = [_rollbar(attacker, i) for i in range(3, 8)]
        assert [r.status_code for r in over] == [429] * 5
        assert all(1 <= _retry_after(r) <= 20 for r in over)  # one delivery every 20 s
        assert "rollbar webhook limit of 3" in over[0].json()["detail"]
        assert _reports(attacker) == stored
        assert _rollbar(attacker, 9, route="bugsnag").status_code == 202  # another route
        assert _rollbar(bystander, 10).status_code == 202  # another address


# ---- §3.4 backpressure ------------------------------------------------------------------


class Parked(Jobs):
    """The queue with nobody dequeuing: jobs stay `queued` (the counting is real)."""

    def launch(self) -> None:
        self.launched = True

    def enqueue(self, job_id: str) -> None:
        pass

    def shutdown(self) -> None:
        self.launched = False


def _parked(settings: ServiceSettings) -> FastAPI:
    service = build_service(settings, probe_endpoints=False)
    service.jobs = Parked(
        service.jobs.runtime, database_url=service.jobs.database_url,
        data_dir=service.jobs.data_dir,
    )  # fmt: skip
    return create_app(service=service)


def _queue(service: Service, fingerprint: str) -> str:
    submitted = service.store.submit(
        repo="demo", source=DIAGNOSE, raw=fingerprint.encode(), fingerprint=fingerprint,
        window=600, queue=None,
    )  # fmt: skip
    return submitted.job.id


def test_a_full_queue_refuses_diagnose_and_retrying_senders_and_stores_nothing(
    service_settings: ServiceSettings,
) -> None:
    app = _parked(service_settings.model_copy(update={"max_queued_jobs": 3}))
    with TestClient(app) as client:
        service = _service(client)
        clock = Clock()
        service.backpressure.clock = clock
        report = {"report": {"text": CRASH, "source": "crash_log"}}
        assert client.post("/diagnose", json=report).status_code == 202
        for n in range(2):
            _queue(service, f"fp-{n}")
        clock.now += DEPTH_CACHE_SECONDS  # the cached depth (1) is read again
        stored = _reports(client)
        full = client.post("/diagnose", json=report)
        assert full.status_code == 503 and _retry_after(full) == 30
        assert "the queue is full (3 jobs waiting, limit 3)" in full.json()["detail"]
        assert client.post("/diagnose", content=CRASH, headers={"Content-Type": "text/plain"}
                           ).status_code == 503  # fmt: skip
        rollbar = _rollbar(client, 1)
        assert rollbar.status_code == 503 and _retry_after(rollbar) == 30  # Rollbar retries
        assert _reports(client) == stored  # nothing stored for any of them
        stranger = client.post("/webhooks/rollbar/not-the-token", content=b'{"n": 2}')
        assert stranger.status_code == 401  # learns nothing of the queue without the token
        assert "queue" not in stranger.text
        stored += 1  # the refusal itself is kept (in part: tests/hostile/test_storage.py)
        assert _github(client, "never-retried") == 202  # GitHub never retries: kept
        assert _reports(client) == stored + 1


def test_the_queue_depth_is_read_once_a_second_not_per_request() -> None:
    calls: list[int] = []
    clock = Clock()

    def counts() -> dict[str, int]:
        calls.append(1)
        return {"queued": 1, "running": 5}

    gate = Backpressure(counts, max_queued=2, clock=clock)

    async def admit(times: int) -> None:
        for _ in range(times):
            await gate.admit()

    asyncio.run(admit(100))
    assert len(calls) == 1
    clock.now += DEPTH_CACHE_SECONDS
    asyncio.run(admit(100))
    assert len(calls) == 2


@contextmanager
def _serving(app: FastAPI) -> Iterator[str]:
    """The app on a loopback port in a thread (TestClient buffers a whole stream)."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, name="access-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + HANG_GUARD_SECONDS
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(HANG_GUARD_SECONDS)


def _open(stack: ExitStack, http: httpx.Client, job_id: str) -> httpx.Response:
    headers = {"Accept": "text/event-stream"}
    return stack.enter_context(http.stream("GET", f"/jobs/{job_id}/events", headers=headers))


def test_event_streams_are_capped_per_job_and_in_all(
    service_settings: ServiceSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(backpressure_module, "MAX_STREAMS", MAX_STREAMS_PER_JOB + 2)
    app = _parked(service_settings)
    service: Service = app.state.service
    with _serving(app) as url, httpx.Client(base_url=url, timeout=HANG_GUARD_SECONDS) as http:
        first, second = _queue(service, "fp-a"), _queue(service, "fp-b")
        with ExitStack() as stack:
            opened = [_open(stack, http, first) for _ in range(MAX_STREAMS_PER_JOB)]
            assert [s.status_code for s in opened] == [200] * MAX_STREAMS_PER_JOB
            per_job = _open(stack, http, first)  # a stream, not read: a hang guard
            assert per_job.status_code == 429 and _retry_after(per_job) == 10
            assert [_open(stack, http, second).status_code for _ in range(2)] == [200, 200]
            in_all = _open(stack, http, second)
            assert in_all.status_code == 503 and _retry_after(in_all) == 10
            assert http.get(f"/jobs/{second}/events").status_code == 200  # JSON: not capped
            assert service.backpressure.streams() == MAX_STREAMS_PER_JOB + 2
        deadline = time.monotonic() + HANG_GUARD_SECONDS  # the clients went away
        while service.backpressure.streams():
            assert time.monotonic() < deadline, "a closed stream kept its slot"
            time.sleep(0.05)
        with http.stream("GET", f"/jobs/{first}/events",
                         headers={"Accept": "text/event-stream"}) as again:  # fmt: skip
            assert again.status_code == 200


@SQLITE_ONLY
def test_paths_an_anonymous_caller_makes_up_add_no_metric_labels(
    service_settings: ServiceSettings,
) -> None:
    """Every request is counted by its route's template, so a caller inventing paths —
    under the docs' static files, under a job, anywhere — cannot grow `/metrics`."""
    with TestClient(create_app(service_settings)) as client:
        invented = [f"/docs/static/x{i}.js" for i in range(40)]
        invented += [f"/jobs/j{i}" for i in range(40)] + [f"/no/such/{i}" for i in range(40)]
        for path in invented:
            assert client.get(path).status_code in (401, 404)
        page = client.get("/metrics").text
    routes = {line.split('route="', 1)[1].split('"', 1)[0]
              for line in page.splitlines()
              if line.startswith("diagnoser_http_requests_total{")}  # fmt: skip
    assert not any(path in routes for path in invented)
    assert len(routes) <= 4, routes  # the static files', a job's, unmatched, /metrics
