"""Retention: `plan` (pure) picks the old and, oldest first, the over-cap inputs, never a
pinned one; `enforce` on SQLite and PostgreSQL removes them with their jobs, events,
findings, occurrences, delivery ids and claims, keeping the database consistent; the
runner sweeps on its DBOS schedule."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from fastapi.testclient import TestClient
from sqlalchemy import text

from api import ServiceSettings, create_app
from api.app import build_service
from api.database import connect, migrate
from api.retention import Policy, Stored, enforce, inventory, plan
from api.schemas import JobState
from api.store import Store
from diagnoser import Finding
from diagnoser.intake import Kind

START = datetime(2026, 1, 1, tzinfo=UTC)
DAY = timedelta(days=1)
TABLES = ("reports", "jobs", "events", "findings", "occurrences", "deliveries", "claims")
SWEEP_DEADLINE_SECONDS = 60.0
"""A hang guard for the scheduled sweep (it fires every second in that test)."""


def _stored(name: str, days: int, size: int = 10, *, pinned: bool = False) -> Stored:
    return Stored(name, START + days * DAY, size, pinned)


def test_plan_removes_what_is_older_than_the_age_limit() -> None:
    inventory = [_stored("new", 9), _stored("old", 1), _stored("older", 0)]
    policy = Policy(max_age=5 * DAY, max_bytes=None)
    assert plan(inventory, now=START + 10 * DAY, policy=policy) == ["older", "old"]


def test_plan_removes_oldest_first_until_under_the_cap() -> None:
    inventory = [_stored("c", 3, 40), _stored("a", 1, 40), _stored("b", 2, 40)]
    policy = Policy(max_age=None, max_bytes=50)
    assert plan(inventory, now=START, policy=policy) == ["a", "b"]


def test_plan_never_removes_a_pinned_input() -> None:
    inventory = [_stored("busy", 0, 100, pinned=True), _stored("done", 1, 10)]
    policy = Policy(max_age=DAY, max_bytes=50)
    assert plan(inventory, now=START + 10 * DAY, policy=policy) == ["done"]


def test_no_limits_keep_everything() -> None:
    inventory = [_stored("a", 0, 10**9)]
    assert plan(inventory, now=START + 999 * DAY, policy=Policy(None, None)) == []


def _store(database_url: str, now: list[datetime]) -> Store:
    engine = connect(database_url)
    migrate(engine)
    return Store(engine, clock=lambda: now[0])


def _finished(store: Store, fingerprint: str) -> str:
    """A job that ran: a report, events, a finding, a claim and an occurrence."""
    submitted = store.submit(
        repo="demo", source="diagnose", raw=b"x" * 100, fingerprint=fingerprint, window=60
    )
    job_id = submitted.job.id
    store.move(job_id, JobState.RUNNING)
    store.add_event(job_id, at=START, state="mapping", detail="d" * 50)
    finding = Finding(classification=Kind.CRASH, title="t")
    store.finish(job_id, JobState.COMPLETE, finding=finding, window=60)
    store.submit(repo="demo", source="diagnose", raw=b"y", fingerprint=fingerprint, window=60)
    return job_id


def _counts(store: Store) -> dict[str, int]:
    with store.engine.connect() as connection:
        count = lambda table: connection.execute(text(f"SELECT count(*) FROM {table}"))  # noqa: E731
        return {table: count(table).scalar_one() for table in TABLES}


def test_old_inputs_go_with_everything_made_from_them(database_url: str) -> None:
    now = [START]
    store = _store(database_url, now)
    old_job = _finished(store, "old")
    store.deliver(  # queued and old: its input stays
        provider="github", delivery_id="d-1", repo="demo", source="github", raw=b"{}",
        headers={}, content_type="application/json",
    )  # fmt: skip
    now[0] = START + 20 * DAY
    new_job = _finished(store, "new")
    before = _counts(store)
    swept = enforce(store, Policy(max_age=10 * DAY, max_bytes=None), now=now[0])
    after = _counts(store)
    assert swept.removed == 2  # the old report and its occurrence; the queued one stays
    assert store.job(old_job) is None and store.job(new_job) is not None
    assert after["jobs"] == before["jobs"] - 1 and after["deliveries"] == 1
    assert (after["events"], after["findings"], after["claims"]) == (1, 1, 1)
    assert after["reports"] == before["reports"] - 2 and after["occurrences"] == 1
    store.engine.dispose()


def test_the_size_cap_removes_the_oldest_first(database_url: str) -> None:
    now = [START]
    store = _store(database_url, now)
    ids = []
    for day in range(4):
        now[0] = START + day * DAY
        ids.append(store.add_report(repo="demo", source="github", raw=b"z" * 1000))
    with store.engine.connect() as connection:
        sizes = {s.report_id: s.size for s in inventory(connection)}
    cap = sizes[ids[2]] + sizes[ids[3]]
    swept = enforce(store, Policy(max_age=None, max_bytes=cap), now=now[0])
    with store.engine.connect() as connection:
        left = set(connection.execute(text("SELECT id FROM reports")).scalars())
    assert swept.removed == 2 and left == {ids[2], ids[3]} and swept.kept_bytes == cap
    store.engine.dispose()


def test_the_runner_sweeps_on_its_schedule(service_settings: ServiceSettings) -> None:
    settings = service_settings.model_copy(update={"retention_days": 1.0})
    service = build_service(settings)
    service.jobs.sweep_cron = "* * * * * *"  # every second, for the test
    old = Store(service.store.engine, clock=lambda: START)
    stale = old.add_report(repo="demo", source="github", raw=b"old")
    fresh = service.store.add_report(repo="demo", source="github", raw=b"new")
    with TestClient(create_app(service=service)):
        deadline = time.monotonic() + SWEEP_DEADLINE_SECONDS
        while time.monotonic() < deadline:
            with service.store.engine.connect() as connection:
                left = set(connection.execute(text("SELECT id FROM reports")).scalars())
            if stale not in left:
                break
            time.sleep(0.2)
    assert stale not in left and fresh in left


def test_after_its_job_is_removed_an_identical_report_makes_a_new_job(database_url: str) -> None:
    now = [START]
    store = _store(database_url, now)
    old_job = _finished(store, "same")
    enforce(store, Policy(max_age=None, max_bytes=1), now=now[0])
    again = store.submit(repo="demo", source="diagnose", raw=b"x", fingerprint="same", window=60)
    assert not again.attached and again.job.id != old_job
    store.engine.dispose()
