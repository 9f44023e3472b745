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
