"""Findings in the store on SQLite and PostgreSQL: pages newest first, filtered, by
cursor (`api.store.findings`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from api.database import connect, migrate
from api.schemas import JobState
from api.store import Store
from tests.api.store.records import finding, report


def test_findings_page_newest_first_with_filters(database_url: str) -> None:
    now = [datetime(2026, 1, 1, tzinfo=UTC)]
    engine = connect(database_url)
    migrate(engine)
    store = Store(engine, clock=lambda: now[0])
    for index in range(5):
        now[0] += timedelta(minutes=1)
        job = store.new_job(repo="demo" if index % 2 == 0 else "web", report_id=report(store))
        assert job is not None
        store.finish(job.id, JobState.COMPLETE, finding=finding(f"n{index}"))
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


def test_a_findings_run_logs_are_kept_once_and_served_only_with_it(database_url: str) -> None:
    engine = connect(database_url)
    migrate(engine)
    store = Store(engine)
    jobs = [store.new_job(repo="demo", report_id=report(store)) for _ in range(2)]
    assert all(jobs)
    logs = {"0123456789abcdef": "$ python repro.py\nKeyError: 'x'\n", "fedcba9876543210": "ok\x00"}
    store.keep_run_logs(jobs[0].id, logs)  # type: ignore[union-attr]
    store.keep_run_logs(jobs[0].id, {"0123456789abcdef": "a re-run's text"})  # type: ignore[union-attr]
    done = [store.finish(job.id, JobState.COMPLETE, finding=finding("t")) for job in jobs]  # type: ignore[union-attr]
    first, second = (d.finding_id or "" for d in done)
    assert store.run_log(first, "0123456789abcdef") == logs["0123456789abcdef"]
    assert store.run_log(first, "fedcba9876543210") == "ok"  # NUL is not stored
    assert store.run_log(second, "0123456789abcdef") is None  # another job's log
    assert store.run_log("nope", "0123456789abcdef") is None
    engine.dispose()
