"""Jobs in the store on SQLite and PostgreSQL: a job ends once, its events are numbered
(`api.store.jobs`)."""

from __future__ import annotations

from datetime import UTC, datetime

from api.schemas import JobState
from api.store import Store
from tests.api.store.records import WINDOW, finding, report


def test_a_job_ends_once(store: Store) -> None:
    job = store.new_job(repo="demo", report_id=report(store))
    assert job is not None
    assert store.move(job.id, JobState.RUNNING)
    done = store.finish(job.id, JobState.COMPLETE, finding=finding(), window=WINDOW)
    again = store.finish(job.id, JobState.FAILED, reason="late", finding=finding(), window=WINDOW)
    assert again.state is JobState.COMPLETE and again.finding_id == done.finding_id
    assert store.findings().items[0].id == done.finding_id and len(store.findings().items) == 1
    assert not store.move(job.id, JobState.RUNNING)  # terminal: no way back
    assert store.unfinished() == []


def test_events_are_numbered_per_job(store: Store) -> None:
    job = store.new_job(repo="demo", report_id=report(store))
    assert job is not None
    at = datetime.now(UTC)
    seqs = [store.add_event(job.id, at=at, state=s, detail="") for s in ("a", "b", "c")]
    assert seqs == [0, 1, 2]
    assert [e.state for e in store.events(job.id, after=0)] == ["b", "c"]
    assert store.events(job.id)[0].at.tzinfo is not None


def test_each_attempt_names_its_executor_and_the_job_shows_them_in_order(store: Store) -> None:
    job = store.new_job(repo="demo", report_id=report(store))
    assert job is not None
    assert store.start_attempt(job.id, "host-a") == 1
    assert store.start_attempt(job.id, "host-b") == 2
    shown = store.job(job.id)
    assert shown is not None
    assert [(a.number, a.executor) for a in shown.attempts] == [(1, "host-a"), (2, "host-b")]
    assert shown.attempts[0].started_at <= shown.attempts[1].started_at


def test_held_jobs_are_the_unfinished_ones_an_executor_started_last(store: Store) -> None:
    first, second, third = (store.new_job(repo="demo", report_id=report(store)) for _ in range(3))
    assert first and second and third
    store.start_attempt(first.id, "host-a")  # a's, running
    store.start_attempt(second.id, "host-a")
    store.start_attempt(second.id, "host-b")  # taken over: b's now
    store.start_attempt(third.id, "host-a")
    store.finish(third.id, JobState.COMPLETE, finding=finding(), window=WINDOW)  # ended
    assert store.held("host-a") == 1
    assert store.held("host-b") == 1
    assert store.held("host-c") == 0
