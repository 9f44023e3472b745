"""Fingerprint claims: identical reports folded into one job, atomically, on any database
and any number of processes.

A `claims` row per (repo, fingerprint) names the job that investigates it; a second
report finds the row and attaches to that job as an occurrence, until `until` (the job's
end + the dedupe window) has passed, when a new job takes the claim over by
compare-and-swap.

    submitted = store.submit(repo="demo", source=…, raw=…, fingerprint=fp, window=600)
    submitted.job, submitted.attached
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, Engine, update
from sqlalchemy.exc import IntegrityError

from api.bounds import bound
from api.schemas import JobOut, JobState
from api.statements import (
    ACCEPT_NEW,
    ATTACH,
    FIND_CLAIM,
    INSERT_OCCURRENCE,
    JOBS,
    PUT_CLAIM,
    TAKE_CLAIM,
)
from api.store.inputs import insert_report
from api.store.jobs import Queue, insert_job, job_out, queued_job
from api.store.transactions import Transactions, new_id, utcnow
from api.tables import CONTENT_TYPE_LENGTH

CLAIM_ATTEMPTS = 5
"""Compare-and-swap rounds before a claim gives up (each lost round means another
writer changed the row; five in a row does not happen outside a test)."""


@dataclass(frozen=True, slots=True)
class Submitted:
    """Which job answers a report; `attached` when it was an identical report's."""

    job: JobOut
    attached: bool


class ClaimRecords(Transactions):
    def __init__(self, engine: Engine, *, clock: Callable[[], datetime] = utcnow) -> None:
        super().__init__(engine, clock=clock)
        self._put_claim = PUT_CLAIM[engine.dialect.name]
        self._accept_new = ACCEPT_NEW.get(engine.dialect.name)

    def submit(
        self, *, repo: str, source: str, raw: bytes, content_type: str = "",
        fingerprint: str | None, window: float, queue: Queue | None = None,
    ) -> Submitted:  # fmt: skip
        """Keep a report and, in the same transaction, make a new queued job for it, or
        attach it to the job already answering an identical one (same repo and
        fingerprint, running or ended less than `window` s ago). `queue`, if given,
        queues a new job in that transaction too."""
        report_id = new_id()
        for _ in range(CLAIM_ATTEMPTS):
            job_id = new_id()
            try:
                with self._writing() as connection:
                    job = self._file(
                        connection, report_id, job_id, repo=repo, source=source, raw=raw,
                        content_type=content_type, fingerprint=fingerprint,
                    )  # fmt: skip
                    if isinstance(job, str):
                        return Submitted(self._attach(connection, job, report_id), True)
                    if queue is not None:
                        queue(connection, job.id)
                    return Submitted(job, attached=False)
            except IntegrityError:  # another writer claimed it first: look again
                continue
        raise RuntimeError("could not claim the fingerprint: too much contention")

    def _file(
        self, connection: Connection, report_id: str, job_id: str, *, repo: str, source: str,
        raw: bytes, content_type: str, fingerprint: str | None,
    ) -> JobOut | str:  # fmt: skip
        """Keep a report and make its job `job_id`, claiming its fingerprint; or, when
        the fingerprint is held, the id of the job holding it (see `_claim`)."""
        if fingerprint is not None and self._accept_new is not None:
            job = queued_job(job_id, repo, now=self._clock())
            row = connection.execute(self._accept_new, {
                "r_id": report_id, "r_repo": repo, "r_source": source, "r_raw": raw,
                "r_content_type": bound(content_type, CONTENT_TYPE_LENGTH), "r_headers": "{}",
                "r_rejected": None, "r_body_bytes": None, "r_body_sha256": None,
                "r_received_at": self._clock(), "j_id": job.id, "j_fingerprint": fingerprint,
                "j_report_id": report_id, "j_part": 0, "j_state": job.state.value,
                "j_reason": job.reason, "j_created_at": job.created_at,
                "j_occurrences": job.occurrences,
            }).first()  # fmt: skip
            if row is not None:
                return job
            holder = self._held(connection, repo, fingerprint, job_id)
        else:
            insert_report(
                connection, report_id, now=self._clock(), repo=repo, source=source, raw=raw,
                content_type=content_type,
            )  # fmt: skip
            holder = None
            if fingerprint is not None:
                holder = self._claim(connection, repo, fingerprint, job_id)
        if holder is not None:
            return holder
        return insert_job(
            connection, repo, report_id, now=self._clock(), fingerprint=fingerprint, job_id=job_id
        )

    def claim(self, job_id: str, fingerprint: str) -> JobOut | None:
        """In a job: take the fingerprint for `job_id`, or end it as a duplicate of the
        job holding it (an occurrence there) and return that job."""
        for _ in range(CLAIM_ATTEMPTS):
            try:
                with self._writing() as connection:
                    job = connection.execute(
                        update(JOBS).where(JOBS.c.id == job_id).values(fingerprint=fingerprint)
                        .returning(JOBS.c.repo, JOBS.c.report_id)
                    ).one()  # fmt: skip
                    holder = self._claim(connection, job.repo, fingerprint, job_id)
                    if holder is None:
                        return None
                    connection.execute(
                        update(JOBS).where(JOBS.c.id == job_id).values(
                            state=JobState.DUPLICATE.value, duplicate_of=holder,
                            finished_at=self._clock(),
                            reason=f"an identical report is answered by job {holder}",
                        )
                    )  # fmt: skip
                    return self._attach(connection, holder, job.report_id)
            except IntegrityError:
                continue
        raise RuntimeError("could not claim the fingerprint: too much contention")

    def _claim(
        self, connection: Connection, repo: str, fingerprint: str, job_id: str
    ) -> str | None:
        """None when `job_id` now holds the claim, else the job that does. IntegrityError
        when another writer took it meanwhile (the caller's transaction is then lost)."""
        claim = {"repo": repo, "fingerprint": fingerprint, "job_id": job_id}
        if connection.execute(self._put_claim, claim).first() is not None:
            return None
        return self._held(connection, repo, fingerprint, job_id)

    def _held(self, connection: Connection, repo: str, fingerprint: str, job_id: str) -> str | None:
        """`_claim` of a fingerprint that has a claim row already."""
        key = {"b_repo": repo, "b_fp": fingerprint}
        row = connection.execute(FIND_CLAIM, key).first()
        if row is None:  # never deleted, so this does not happen: look again all the same
            raise IntegrityError("claim vanished under us", None, Exception())
        if row.job_id == job_id:
            return None
        if row.until is None or row.until > self._clock():
            return str(row.job_id)
        taken = connection.execute(TAKE_CLAIM, key | {"b_holder": row.job_id, "b_job": job_id})
        if taken.rowcount != 1:
            raise IntegrityError("claim changed under us", None, Exception())
        return None

    def _attach(self, connection: Connection, holder: str, report_id: str) -> JobOut:
        job = connection.execute(ATTACH, {"b_holder": holder}).first()
        if job is None:  # retention removed the holder meanwhile: the caller looks again
            raise IntegrityError("the claim's job was removed", None, Exception())
        connection.execute(
            INSERT_OCCURRENCE, {"job_id": holder, "report_id": report_id, "at": self._clock()}
        )
        return job_out(job)
