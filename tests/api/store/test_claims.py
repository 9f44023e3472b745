"""Fingerprint claims on SQLite and PostgreSQL: identical reports fold into one job,
also under a concurrent burst, and a claim never outlives its job (`api.store.claims`)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest

from api.database import connect, migrate
from api.schemas import JobState
from api.store import Store
from tests.api.store.records import WINDOW, finding, report, reports, submit


def test_an_identical_report_attaches_to_the_running_job(store: Store) -> None:
    first = submit(store, "f1")
    second = submit(store, "f1")
    other = submit(store, "f2")
    assert not first.attached and second.attached and not other.attached
    assert second.job.id == first.job.id and second.job.occurrences == 2
    assert other.job.id != first.job.id
    assert store.job_counts() == {"queued": 2}


def test_same_fingerprint_in_another_repo_is_another_job(store: Store) -> None:
    first = submit(store, "f")
    second = submit(store, "f", "other")
    assert second.job.id != first.job.id and not second.attached


def test_after_the_job_ends_reports_attach_until_the_window_passes(database_url: str) -> None:
    now = [datetime(2026, 1, 1, tzinfo=UTC)]
    engine = connect(database_url)
    migrate(engine)
    store = Store(engine, clock=lambda: now[0])
    first = submit(store, "f")
    store.move(first.job.id, JobState.RUNNING)
    store.finish(first.job.id, JobState.COMPLETE, finding=finding(), window=WINDOW)
    now[0] += timedelta(seconds=WINDOW - 1)
    inside = submit(store, "f")
    assert inside.attached and inside.job.id == first.job.id
    assert inside.job.finding_id is not None
    now[0] += timedelta(seconds=2)
    after = submit(store, "f")
    assert not after.attached and after.job.id != first.job.id
    engine.dispose()


def test_a_concurrent_burst_makes_exactly_one_job(store: Store) -> None:
    def one(_: int) -> str:
        return submit(store, "burst").job.id

    with ThreadPoolExecutor(max_workers=8) as pool:
        ids = set(pool.map(one, range(60)))
    assert len(ids) == 1
    job = store.job(ids.pop())
    assert job is not None and job.occurrences == 60
    assert store.job_counts() == {"queued": 1}


def test_a_claim_is_never_kept_without_its_job(store: Store) -> None:
    """A failure after the claim is taken, in the same transaction (here: queueing the
    new job), keeps none of report, claim and job (on SQLite a savepoint's RELEASE used to
    commit the claim alone, and every identical report after it then failed to attach to
    a job that did not exist)."""

    def lost(_connection: object, _job_id: str) -> None:
        raise RuntimeError("lost after the claim")

    with pytest.raises(RuntimeError, match="lost"):
        store.submit(
            repo="demo", source="diagnose", raw=b"{}", fingerprint="f", window=WINDOW, queue=lost
        )
    assert reports(store) == 0  # the report goes with its job, or not at all
    later = submit(store, "f")
    assert not later.attached and store.job_counts() == {"queued": 1}


def test_a_submitted_report_is_kept_as_it_arrived(store: Store) -> None:
    raw = b'{"text": "boom", "source": "crash_log"}'
    first = store.submit(repo="demo", source="diagnose", raw=raw, fingerprint="f", window=WINDOW)
    second = submit(store, "f")
    kept = store.job_input(first.job.id)
    assert kept.raw == raw and kept.source == "diagnose" and kept.repo == "demo"
    assert second.attached and reports(store) == 2


def test_in_job_claim_ends_the_later_job_as_a_duplicate(store: Store) -> None:
    first = store.new_job(repo="demo", report_id=report(store))
    second = store.new_job(repo="demo", report_id=report(store))
    assert first and second
    assert store.claim(first.id, "fp") is None
    assert store.claim(first.id, "fp") is None  # a re-run of the same step
    holder = store.claim(second.id, "fp")
    assert holder is not None and holder.id == first.id and holder.occurrences == 2
    ended = store.job(second.id)
    assert ended and ended.state is JobState.DUPLICATE and ended.duplicate_of == first.id
