"""The store's request-path statements, built once at import: building one per call
(bound parameters, coercion, cache key) cost more CPU than running it on SQLite. Some
come per dialect (`PUT_CLAIM`, `ACCEPT_NEW`), keyed by `engine.dialect.name`."""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import Table, bindparam, func, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite

from api.database import SQLITE
from api.tables import ClaimRow, DeliveryRow, EventRow, JobRow, OccurrenceRow, ReportRow

REPORTS = cast(Table, ReportRow.__table__)
JOBS = cast(Table, JobRow.__table__)
CLAIMS = cast(Table, ClaimRow.__table__)
OCCURRENCES = cast(Table, OccurrenceRow.__table__)
DELIVERIES = cast(Table, DeliveryRow.__table__)
EVENTS = cast(Table, EventRow.__table__)
INSERT_REPORT = insert(REPORTS)
INSERT_JOB = insert(JOBS)
INSERT_OCCURRENCE = insert(OCCURRENCES)
INSERT_DELIVERY = insert(DELIVERIES)
ADD_EVENT = (
    insert(EVENTS)
    .from_select(
        ["job_id", "seq", "at", "state", "detail"],
        select(
            bindparam("job_id", type_=EVENTS.c.job_id.type),
            func.coalesce(func.max(EVENTS.c.seq), -1) + 1,
            bindparam("at", type_=EVENTS.c.at.type),
            bindparam("state", type_=EVENTS.c.state.type),
            bindparam("detail", type_=EVENTS.c.detail.type),
        ).where(EVENTS.c.job_id == bindparam("job_id")),
    )
    .returning(EVENTS.c.seq)
)
"""A job's next event, numbered after its last (0 for its first), in one statement: a
job emits ~16 as it runs, and a SELECT then an ORM INSERT per event was ~10 % of an
offline job's CPU."""
PUT_CLAIM = {
    name: dialect.insert(CLAIMS)
    .on_conflict_do_nothing(index_elements=[CLAIMS.c.repo, CLAIMS.c.fingerprint])
    .returning(CLAIMS.c.job_id)
    for name, dialect in (("postgresql", postgresql), (SQLITE, sqlite))
}
"""Per dialect: a new claim, inserted only when (repo, fingerprint) has none, and a row
back when it was — the common case (a new fingerprint) in one statement instead of a
SELECT and an INSERT. On PostgreSQL a claim another transaction is inserting makes it
wait for that one's end, then do nothing if it committed. SQLite has had the clause
since 3.35 (2021)."""
_REPORT_COLUMNS = (
    "id", "repo", "source", "content_type", "headers", "raw", "received_at", "rejected",
    "body_bytes", "body_sha256",
)  # fmt: skip
_JOB_VALUES = ("report_id", "part", "state", "reason", "created_at", "occurrences")


def _accept_new() -> Any:
    """PostgreSQL: keep a report, claim its fingerprint and make the claim's job, in one
    statement (data-modifying CTEs, which SQLite lacks); the job's id back, or no row when
    the fingerprint was claimed already (the report is kept all the same)."""
    report = insert(REPORTS).values(
        {c: bindparam(f"r_{c}", type_=REPORTS.c[c].type) for c in _REPORT_COLUMNS}
    ).cte("new_report")  # fmt: skip
    claim = (
        postgresql.insert(CLAIMS).values(
            repo=bindparam("r_repo", type_=CLAIMS.c.repo.type),
            fingerprint=bindparam("j_fingerprint", type_=CLAIMS.c.fingerprint.type),
            job_id=bindparam("j_id", type_=CLAIMS.c.job_id.type),
        )
        .on_conflict_do_nothing(index_elements=[CLAIMS.c.repo, CLAIMS.c.fingerprint])
        .returning(CLAIMS.c.job_id, CLAIMS.c.repo, CLAIMS.c.fingerprint)
        .cte("new_claim")
    )  # fmt: skip
    values = (bindparam(f"j_{c}", type_=JOBS.c[c].type) for c in _JOB_VALUES)
    job = select(claim.c.job_id, claim.c.repo, claim.c.fingerprint, *values)
    return (
        insert(JOBS).from_select(["id", "repo", "fingerprint", *_JOB_VALUES], job)
        .add_cte(report).returning(JOBS.c.id)
    )  # fmt: skip


ACCEPT_NEW = {"postgresql": _accept_new()}
"""Per dialect (PostgreSQL only): what `Store.submit` does for a new fingerprint, in one
statement instead of three."""
_CLAIM_KEY = (CLAIMS.c.repo == bindparam("b_repo"), CLAIMS.c.fingerprint == bindparam("b_fp"))
FIND_CLAIM = select(CLAIMS.c.job_id, CLAIMS.c.until).where(*_CLAIM_KEY)
TAKE_CLAIM = (
    update(CLAIMS).where(*_CLAIM_KEY, CLAIMS.c.job_id == bindparam("b_holder"))
    .values(job_id=bindparam("b_job"), until=None)
)  # fmt: skip
ATTACH = (
    update(JOBS).where(JOBS.c.id == bindparam("b_holder"))
    .values(occurrences=JOBS.c.occurrences + 1).returning(*JOBS.c)
)  # fmt: skip
REFUSED_BYTES = select(func.coalesce(func.sum(func.length(REPORTS.c.raw)), 0)).where(
    REPORTS.c.body_sha256.is_not(None)
)
"""Bytes of refused bodies' prefixes stored (`Store.refuse` counts them against the
budget); only refused rows set `body_sha256`."""
