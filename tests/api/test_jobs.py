"""The DBOS job workflow (`api.jobs`) on a running service: a poll of several reviews
makes a job each, bad input fails its job and marks its report rejected, identical crash
reports are investigated once, a job queued twice runs once, jobs stored but never
queued run when the queue launches, and a stop waits for DBOS to record a job's end."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace
from typing import Any

import pytest
from dbos import DBOS
from dbos._sys_db import SystemDatabase
from fastapi.testclient import TestClient
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from api import ServiceSettings, create_app, queue
from api.app import build_service
from api.inputs import DIAGNOSE
from api.jobs import QUEUE, enqueue
from api.queue import Jobs, client_for
from api.service import Service
from api.store import Store
from diagnoser import ReportIn
from diagnoser.intake import Source
from tests.api.conftest import SAMPLES, SECRETS, wait_for_job

TRACEBACK = (SAMPLES / "issue_load_more_500.md").read_text()
CRASH = (SAMPLES / "android_logcat_open_shared.txt").read_text()
REVIEWS = (
    ("Crashes\tThe app crashes every time I open a shared note.", 1, "crash"),
    ("Love it\tGreat app, works perfectly, thank you!", 5, "praise"),
    ("Please add\tPlease add dark mode and tags to organise notes.", 4, "feature_request"),
)
"""Google Play review texts (title, a tab, the body), their stars, their classification."""


def _service(client: TestClient) -> Service:
    service: Service = client.app.state.service  # type: ignore[attr-defined]
    return service


def _play_poll(reviews: list[dict[str, Any]]) -> bytes:
    """A Google Play `reviews.list` page."""
    return json.dumps({"reviews": reviews, "tokenPagination": {}}).encode()


def _play_review(number: int, text: str, stars: int) -> dict[str, Any]:
    comment = {"text": text, "starRating": stars, "appVersionName": "2.4.1",
               "reviewerLanguage": "en", "lastModified": {"seconds": "1714936021"}}  # fmt: skip
    return {"reviewId": f"gp:{number}", "authorName": f"user {number}",
            "comments": [{"userComment": comment}]}  # fmt: skip


def _post_reviews(client: TestClient, body: bytes) -> str:
    response = client.post(f"/webhooks/reviews?token={SECRETS['webhook_token']}", content=body)
    assert response.status_code == 202, response.text
    return str(response.json()["job_id"])


def _rows(client: TestClient, sql: str, **params: object) -> list[tuple[Any, ...]]:
    with _service(client).store.engine.connect() as connection:
        return [tuple(row) for row in connection.execute(text(sql), params)]


def _sibling_jobs(client: TestClient, job_id: str) -> list[tuple[str, int]]:
    """(job id, part) of every job made from `job_id`'s stored input, by part."""
    rows = _rows(
        client,
        "SELECT id, part FROM jobs WHERE report_id = "
        "(SELECT report_id FROM jobs WHERE id = :job) ORDER BY part",
        job=job_id,
    )
    return [(str(i), int(p)) for i, p in rows]


def _report_of(client: TestClient, job_id: str) -> tuple[str, str | None]:
    """(source, rejected) of the stored input a job works from."""
    report_id = _service(client).store.job_input(job_id).report_id
    [(source, rejected)] = _rows(
        client, "SELECT source, rejected FROM reports WHERE id = :id", id=report_id
    )
    return str(source), rejected


def _finding(client: TestClient, job: dict[str, Any]) -> dict[str, Any]:
    assert job["finding_id"], job
    found: dict[str, Any] = client.get(f"/findings/{job['finding_id']}").json()["finding"]
    return found


def test_a_poll_of_several_reviews_makes_one_job_per_review(client: TestClient) -> None:
    reviews = [_play_review(n, text, stars) for n, (text, stars, _) in enumerate(REVIEWS)]
    first = _post_reviews(client, _play_poll(reviews))
    wait_for_job(client, first)
    jobs = _sibling_jobs(client, first)
    assert [part for _, part in jobs] == [0, 1, 2]
    assert jobs[0][0] == first and len({job_id for job_id, _ in jobs}) == 3
    kinds = [_finding(client, wait_for_job(client, job_id))["classification"]
             for job_id, _ in jobs]  # fmt: skip
    assert kinds == [kind for *_, kind in REVIEWS]  # each job answers its own review
    assert _report_of(client, first) == ("google_play", None)


def test_a_payload_that_fails_intake_fails_its_job_and_rejects_the_report(
    client: TestClient,
) -> None:
    no_comment = {"reviewId": "gp:1", "authorName": "someone", "comments": []}
    job_id = _post_reviews(client, _play_poll([no_comment]))
    job = wait_for_job(client, job_id)
    assert job["state"] == "failed" and job["finding_id"] is None
    assert job["reason"].startswith("the input was refused: ") and "comments" in job["reason"]
    assert _report_of(client, job_id) == ("google_play", job["reason"])


def _github_issue(client: TestClient, delivery: str) -> str:
    body = json.dumps({
        "action": "opened",
        "issue": {"number": 7, "title": "Load more fails with a 500", "body": TRACEBACK,
                  "html_url": "https://github.com/acme/jotter/issues/7", "labels": [],
                  "user": {"login": "ana"}},
        "repository": {"full_name": "acme/jotter"},
    }).encode()  # fmt: skip
    digest = hmac.new(SECRETS["github_secret"].encode(), body, hashlib.sha256).hexdigest()
    headers = {"X-Hub-Signature-256": f"sha256={digest}", "X-GitHub-Delivery": delivery,
               "X-GitHub-Event": "issues", "Content-Type": "application/json"}  # fmt: skip
    response = client.post("/webhooks/github", content=body, headers=headers)
    assert response.status_code == 202, response.text
    return str(response.json()["job_id"])


def test_an_identical_webhook_report_ends_duplicate_of_the_first(client: TestClient) -> None:
    first = wait_for_job(client, _github_issue(client, "delivery-1"))
    assert first["state"] == "complete"
    second = wait_for_job(client, _github_issue(client, "delivery-2"))
    assert second["id"] != first["id"]
    assert second["state"] == "duplicate" and second["duplicate_of"] == first["id"]
    assert second["finding_id"] is None and first["id"] in second["reason"]
    assert client.get(f"/jobs/{first['id']}").json()["occurrences"] == 2
    assert len(client.get("/findings").json()["items"]) == 1


def test_identical_webhook_reports_together_are_investigated_once(client: TestClient) -> None:
    with ThreadPoolExecutor(max_workers=3) as pool:
        job_ids = list(pool.map(lambda n: _github_issue(client, f"burst-{n}"), range(3)))
    jobs = [wait_for_job(client, job_id) for job_id in job_ids]
    [holder] = [job for job in jobs if job["state"] == "complete"]
    duplicates = [job for job in jobs if job["state"] == "duplicate"]
    assert len(duplicates) == 2 and all(d["duplicate_of"] == holder["id"] for d in duplicates)
    assert client.get(f"/jobs/{holder['id']}").json()["occurrences"] == 3
    assert len(client.get("/findings").json()["items"]) == 1


def _stored_job(store: Store, report: str) -> str:
    """A queued `/diagnose` job put in the database, not on the queue."""
    raw = ReportIn(text=report, source=Source.CRASH_LOG).model_dump_json().encode()
    return store.submit(repo="demo", source=DIAGNOSE, raw=raw, fingerprint=None, window=0).job.id


def _received(events: list[dict[str, Any]]) -> int:
    return sum(1 for event in events if event["state"] == "received")


def test_a_job_queued_twice_runs_once(client: TestClient) -> None:
    job_id = _stored_job(_service(client).store, CRASH)
    enqueue(job_id)
    enqueue(job_id)
    assert wait_for_job(client, job_id)["state"] == "complete"
    events = client.get(f"/jobs/{job_id}/events").json()
    assert _received(events) == 1 and "restarted" not in {e["state"] for e in events}
    enqueue(job_id)  # after it ended: the same workflow, not a new run
    assert DBOS.retrieve_workflow(job_id).get_result() == "complete"
    assert DBOS.get_workflow_status(job_id).status == "SUCCESS"  # type: ignore[union-attr]
    assert client.get(f"/jobs/{job_id}/events").json() == events
    assert len(client.get("/findings").json()["items"]) == 1


@pytest.fixture
def stored_before_start(
    store: Store, service_settings: ServiceSettings
) -> Iterator[tuple[TestClient, str]]:
    """A job accepted by a process that died before queueing it, then a service started."""
    job_id = _stored_job(store, CRASH)
    with TestClient(create_app(service_settings)) as client:
        yield client, job_id


def test_jobs_stored_but_never_queued_run_when_the_queue_launches(
    stored_before_start: tuple[TestClient, str],
) -> None:
    client, job_id = stored_before_start
    job = wait_for_job(client, job_id)
    assert job["state"] == "complete" and _finding(client, job)["classification"] == "crash"


def test_a_new_database_has_its_queue_before_dbos_launches(
    service_settings: ServiceSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DBOS's queue thread starts a queue's worker when it first looks, at launch, and
    then looks again only a second later: a queue made after launch left a new
    database's first job waiting that second."""
    service = build_service(service_settings)
    config = service.jobs._config()  # where DBOS keeps its tables
    seen: list[list[str]] = []
    launch = DBOS.launch

    def launch_and_look() -> None:
        client = client_for(config)
        try:
            seen.append([queue.name for queue in client.list_queues()])
        except DBAPIError:  # no system tables yet: no queue either
            seen.append([])
        finally:
            client.destroy()
        launch()

    monkeypatch.setattr(DBOS, "launch", launch_and_look)
    with TestClient(create_app(service=service)) as client:
        assert client.get("/healthz").status_code == 200
    if config.get("system_database_engine") is not None:  # SQLite's: ours to close
        config["system_database_engine"].dispose()
    assert seen == [[QUEUE]]


def test_on_postgresql_a_new_job_is_queued_in_the_commit_that_stores_it(
    client: TestClient, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On PostgreSQL (DBOS's tables in the app's database) the request makes no second
    transaction to queue its job: with the separate enqueue broken, a report's job and a
    delivery's job still run. On SQLite the queue is another file, so it is separate."""
    jobs = _service(client).jobs
    assert jobs.transactional == database_url.startswith("postgresql")
    if not jobs.transactional:
        return

    def no_second_transaction(job_id: str) -> None:
        raise AssertionError(f"job {job_id} was queued outside the transaction storing it")

    monkeypatch.setattr(jobs, "enqueue", no_second_transaction)
    response = client.post("/diagnose", json={"report": {"text": CRASH}})
    assert response.status_code == 202, response.text
    job_id = response.json()["job_id"]
    body = _play_poll([_play_review(1, REVIEWS[0][0], REVIEWS[0][1])])
    delivered = _post_reviews(client, body)
    for queued in (job_id, delivered):
        assert wait_for_job(client, queued)["state"] == "complete"


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_transaction_lost_after_queueing_keeps_neither_job_nor_workflow(
    client: TestClient,
) -> None:
    """The job and its place in the queue commit together (PostgreSQL): a failure after
    the enqueue, before the commit, leaves no job and no workflow, nothing half-accepted."""
    service = _service(client)
    queued: list[str] = []

    def queue_then_fail(connection: Any, job_id: str) -> None:
        service.jobs.enqueue_in(connection, job_id)
        queued.append(job_id)
        raise RuntimeError("lost before the commit")

    with pytest.raises(RuntimeError, match="lost before the commit"):
        service.store.submit(
            repo="demo", source=DIAGNOSE, raw=b"{}", fingerprint="lost", window=60,
            queue=queue_then_fail,
        )  # fmt: skip
    [job_id] = queued
    assert service.store.job(job_id) is None
    assert DBOS.get_workflow_status(job_id) is None
    assert _rows(client, "SELECT count(*) FROM claims WHERE fingerprint = 'lost'") == [(0,)]


RECORD_SECONDS = 1.0
"""How long DBOS takes here to record a workflow's end, after its last step."""


def test_a_stop_waits_for_dbos_to_record_the_end_of_a_finished_job(
    service_settings: ServiceSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job the store calls complete is, for a moment, still being recorded by DBOS: a stop
    then waits. (One let go retries for ever to record its end once the database is gone.)"""
    record = SystemDatabase.update_workflow_outcome
    recorded: list[str] = []

    def slowly(self: SystemDatabase, workflow_id: str, *args: Any, **kwargs: Any) -> bool:
        time.sleep(RECORD_SECONDS)
        done = record(self, workflow_id, *args, **kwargs)
        recorded.append(workflow_id)
        return done

    monkeypatch.setattr(SystemDatabase, "update_workflow_outcome", slowly)
    destroy = DBOS.destroy
    waits: list[int] = []

    def destroyed(**kwargs: Any) -> None:
        waits.append(kwargs["workflow_completion_timeout_sec"])
        destroy(**kwargs)

    monkeypatch.setattr(DBOS, "destroy", destroyed)
    with TestClient(create_app(service_settings)) as client:
        accepted = client.post("/diagnose", json={"report": {"text": CRASH, "source": "crash_log"}})
        job_id = accepted.json()["job_id"]
        assert wait_for_job(client, job_id)["state"] == "complete"  # DBOS is recording
    assert job_id in recorded
    assert waits == [0]  # the stop waited itself, in short steps, not DBOS in whole seconds


def test_a_dbos_without_the_internals_a_stop_reads_waits_its_own_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`Jobs._drain` reads DBOS 3.4's internals; another DBOS gets the whole grace."""
    monkeypatch.setattr(queue.dbos_instance, "_dbos_global_instance", SimpleNamespace())
    runner = SimpleNamespace(executor_id="x", _unfinished=lambda: True)  # a job may run
    assert Jobs._drain(runner, 7.0) == 7.0  # type: ignore[arg-type]
