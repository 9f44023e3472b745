"""`Store` on SQLite and PostgreSQL: identical reports fold into one job (also under a
concurrent burst), jobs end once, findings page newest first."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from api.database import connect, migrate
from api.schemas import JobState
from api.store import Store, Submitted
from diagnoser import Finding
from diagnoser.intake import Kind

WINDOW = 60.0


def _report(store: Store) -> str:
    return store.add_report(repo="demo", source="diagnose", raw=b"{}")


def _submit(store: Store, fingerprint: str, repo: str = "demo") -> Submitted:
    return store.submit(
        repo=repo, source="diagnose", raw=b"{}", fingerprint=fingerprint, window=WINDOW
    )


def _finding(title: str = "t") -> Finding:
    return Finding(classification=Kind.CRASH, title=title)


def test_an_identical_report_attaches_to_the_running_job(store: Store) -> None:
    first = _submit(store, "f1")
    second = _submit(store, "f1")
    other = _submit(store, "f2")
    assert not first.attached and second.attached and not other.attached
    assert second.job.id == first.job.id and second.job.occurrences == 2
    assert other.job.id != first.job.id
    assert store.job_counts() == {"queued": 2}


def test_same_fingerprint_in_another_repo_is_another_job(store: Store) -> None:
    first = _submit(store, "f")
    second = _submit(store, "f", "other")
    assert second.job.id != first.job.id and not second.attached


def test_after_the_job_ends_reports_attach_until_the_window_passes(database_url: str) -> None:
    now = [datetime(2026, 1, 1, tzinfo=UTC)]
    engine = connect(database_url)
    migrate(engine)
    store = Store(engine, clock=lambda: now[0])
    first = _submit(store, "f")
    store.move(first.job.id, JobState.RUNNING)
    store.finish(first.job.id, JobState.COMPLETE, finding=_finding(), window=WINDOW)
    now[0] += timedelta(seconds=WINDOW - 1)
    inside = _submit(store, "f")
    assert inside.attached and inside.job.id == first.job.id
    assert inside.job.finding_id is not None
    now[0] += timedelta(seconds=2)
    after = _submit(store, "f")
    assert not after.attached and after.job.id != first.job.id
    engine.dispose()


def test_a_concurrent_burst_makes_exactly_one_job(store: Store) -> None:
    def submit(_: int) -> str:
        return _submit(store, "burst").job.id

    with ThreadPoolExecutor(max_workers=8) as pool:
        ids = set(pool.map(submit, range(60)))
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
    assert _reports(store) == 0  # the report goes with its job, or not at all
    later = _submit(store, "f")
    assert not later.attached and store.job_counts() == {"queued": 1}


def test_a_submitted_report_is_kept_as_it_arrived(store: Store) -> None:
    raw = b'{"text": "boom", "source": "crash_log"}'
    first = store.submit(repo="demo", source="diagnose", raw=raw, fingerprint="f", window=WINDOW)
    second = _submit(store, "f")
    kept = store.job_input(first.job.id)
    assert kept.raw == raw and kept.source == "diagnose" and kept.repo == "demo"
    assert second.attached and _reports(store) == 2


def _reports(store: Store) -> int:
    with store.engine.connect() as connection:
        return int(connection.execute(text("SELECT count(*) FROM reports")).scalar_one())


def test_in_job_claim_ends_the_later_job_as_a_duplicate(store: Store) -> None:
    first = store.new_job(repo="demo", report_id=_report(store))
    second = store.new_job(repo="demo", report_id=_report(store))
    assert first and second
    assert store.claim(first.id, "fp") is None
    assert store.claim(first.id, "fp") is None  # a re-run of the same step
    holder = store.claim(second.id, "fp")
    assert holder is not None and holder.id == first.id and holder.occurrences == 2
    ended = store.job(second.id)
    assert ended and ended.state is JobState.DUPLICATE and ended.duplicate_of == first.id


def test_a_job_ends_once(store: Store) -> None:
    job = store.new_job(repo="demo", report_id=_report(store))
    assert job is not None
    assert store.move(job.id, JobState.RUNNING)
    done = store.finish(job.id, JobState.COMPLETE, finding=_finding(), window=WINDOW)
    again = store.finish(job.id, JobState.FAILED, reason="late", finding=_finding(), window=WINDOW)
    assert again.state is JobState.COMPLETE and again.finding_id == done.finding_id
    assert store.findings().items[0].id == done.finding_id and len(store.findings().items) == 1
    assert not store.move(job.id, JobState.RUNNING)  # terminal: no way back
    assert store.unfinished() == []


def test_events_are_numbered_per_job(store: Store) -> None:
    job = store.new_job(repo="demo", report_id=_report(store))
    assert job is not None
    at = datetime.now(UTC)
    seqs = [store.add_event(job.id, at=at, state=s, detail="") for s in ("a", "b", "c")]
    assert seqs == [0, 1, 2]
    assert [e.state for e in store.events(job.id, after=0)] == ["b", "c"]
    assert store.events(job.id)[0].at.tzinfo is not None


def test_findings_page_newest_first_with_filters(database_url: str) -> None:
    now = [datetime(2026, 1, 1, tzinfo=UTC)]
    engine = connect(database_url)
    migrate(engine)
    store = Store(engine, clock=lambda: now[0])
    for index in range(5):
        now[0] += timedelta(minutes=1)
        job = store.new_job(repo="demo" if index % 2 == 0 else "web", report_id=_report(store))
        assert job is not None
        store.finish(job.id, JobState.COMPLETE, finding=_finding(f"n{index}"))
    page = store.findings(limit=2)
    assert [f.title for f in page.items] == ["n4", "n3"] and page.next_cursor
    rest = store.findings(limit=2, cursor=page.next_cursor)
    last = store.findings(limit=2, cursor=rest.next_cursor)
    assert [f.title for f in rest.items] == ["n2", "n1"]
    assert [f.title for f in last.items] == ["n0"] and last.next_cursor is None
    assert [f.title for f in store.findings(repo="web").items] == ["n3", "n1"]
    since = datetime(2026, 1, 1, 0, 4, tzinfo=UTC)
    assert [f.title for f in store.findings(since=since).items] == ["n4", "n3"]
    with pytest.raises(ValueError, match="cursor"):
        store.findings(cursor="not-a-cursor")
    engine.dispose()


def test_a_delivery_id_is_taken_once(store: Store) -> None:
    def deliver(provider: str, delivery_id: str) -> tuple[str, bool]:
        job, first = store.deliver(
            provider=provider, delivery_id=delivery_id, repo="demo", source=provider,
            raw=b"{}", headers={}, content_type="application/json",
        )  # fmt: skip
        return job.id, first

    job_id, first = deliver("github", "d1")
    assert first
    assert deliver("github", "d1") == (job_id, False)
    other, first_elsewhere = deliver("sentry", "d1")
    assert first_elsewhere and other != job_id
    assert store.job_counts() == {"queued": 2}


def test_a_rejected_input_is_kept_with_why(store: Store) -> None:
    report_id = store.add_report(repo="demo", source="github", raw=b"x", rejected="bad sig")
    job = store.new_job(repo="demo", report_id=report_id)
    assert job is not None
    kept = store.job_input(job.id)
    assert kept.raw == b"x" and kept.source == "github"
