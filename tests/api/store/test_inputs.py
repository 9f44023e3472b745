"""Stored inputs on SQLite and PostgreSQL: a delivery id is taken once, a rejected input
is kept with why (`api.store.inputs`)."""

from __future__ import annotations

from api.store import Store


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
