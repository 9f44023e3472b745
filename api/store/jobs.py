"""Jobs in the store: a new job, what it works from, its life along `TRANSITIONS`, its
events, and its end — once — with its Finding.

    job = store.new_job(repo="demo", report_id=report_id)
    store.start_attempt(job.id, executor)  # who runs it, each time one does
    store.move(job.id, JobState.RUNNING); store.add_event(job.id, at=…, state=…, detail=…)
    store.finish(job.id, JobState.COMPLETE, finding=finding, window=600)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, Row, func, select, update
from sqlalchemy.exc import IntegrityError

from api.schemas import TERMINAL, TRANSITIONS, AttemptOut, EventOut, JobOut, JobState
from api.statements import ADD_EVENT, INSERT_JOB
from api.store.transactions import NUL, Transactions, new_id, without_nul
from api.tables import (
    AttemptRow,
    ClaimRow,
    EventRow,
    FindingRow,
    JobRow,
    ReportRow,
    RunLogRow,
)
from diagnoser import Finding

Queue = Callable[[Connection, str], None]
"""Hands a new job (by id) to the job queue in the transaction that stores it, on its
connection: the job and its place in the queue commit together (`Jobs.enqueue_in`)."""


@dataclass(frozen=True, slots=True)
class JobInput:
    """What a job works from: the report exactly as it arrived."""

    job_id: str
    repo: str
    source: str
    content_type: str
    headers: dict[str, str]
    raw: bytes
    part: int
    report_id: str


class JobRecords(Transactions):
    def new_job(
        self, *, repo: str, report_id: str, part: int = 0, job_id: str | None = None
    ) -> JobOut | None:
        """A queued job; None when `job_id` is taken (a step re-run after a crash)."""
        try:
            with self._writing() as connection:
                return insert_job(
                    connection, repo, report_id, now=self._clock(), part=part, job_id=job_id
                )
        except IntegrityError:
            return None

    def job(self, job_id: str) -> JobOut | None:
        if NUL in job_id:
            return None
        with self._session() as session:
            row = session.get(JobRow, job_id)
            if row is None:
                return None
            attempts = session.scalars(
                select(AttemptRow).where(AttemptRow.job_id == job_id).order_by(AttemptRow.number)
            )
            return job_out(row).model_copy(update={"attempts": [
                AttemptOut(number=a.number, executor=a.executor, started_at=a.started_at)
                for a in attempts
            ]})  # fmt: skip

    def job_input(self, job_id: str) -> JobInput:
        with self._session() as session:
            job = session.get_one(JobRow, job_id)
            report = session.get_one(ReportRow, job.report_id)
            return JobInput(
                job_id=job.id, repo=job.repo, source=report.source,
                content_type=report.content_type, headers=json.loads(report.headers),
                raw=report.raw, part=job.part, report_id=report.id,
            )  # fmt: skip

    def unfinished(self) -> list[str]:
        """Jobs accepted and not ended (to hand to the queue again after a restart)."""
        with self._session() as session:
            done = [state.value for state in TERMINAL]
            rows = session.scalars(
                select(JobRow.id).where(JobRow.state.not_in(done)).order_by(JobRow.created_at)
            )
            return list(rows)

    def held(self, executor: str) -> int:
        """Unfinished jobs whose latest attempt is `executor`'s."""
        done = [state.value for state in TERMINAL]
        unfinished = select(JobRow.id).where(JobRow.state.not_in(done))
        latest: dict[str, tuple[int, str]] = {}
        with self._session() as session:
            rows = session.execute(
                select(AttemptRow.job_id, AttemptRow.number, AttemptRow.executor).where(
                    AttemptRow.job_id.in_(unfinished)
                )
            )
            for job_id, number, by in rows:
                if number > latest.get(job_id, (0, ""))[0]:
                    latest[job_id] = (number, by)
        return sum(1 for _, by in latest.values() if by == executor)

    def job_counts(self) -> dict[str, int]:
        with self._session() as session:
            rows = session.execute(select(JobRow.state, func.count()).group_by(JobRow.state))
            return {state: count for state, count in rows}

    # ---- a job's life -----------------------------------------------------------------

    def move(self, job_id: str, state: JobState, reason: str = "") -> bool:
        """Move a job along `TRANSITIONS`; False (nothing changed) when it cannot."""
        with self._write_session() as session:
            job = session.get_one(JobRow, job_id)
            if state not in TRANSITIONS.get(JobState(job.state), frozenset()):
                return False
            now = self._clock()
            job.state, job.reason = state, without_nul(reason) or job.reason
            if state is JobState.RUNNING:
                job.started_at = now
            return True

    def start_attempt(self, job_id: str, executor: str) -> int:
        """Record that `executor` starts running the job (again); the attempt's number
        (1, 2, …)."""
        with self._write_session() as session:
            last = session.scalar(
                select(func.max(AttemptRow.number)).where(AttemptRow.job_id == job_id)
            )
            number = 1 if last is None else last + 1
            session.add(
                AttemptRow(
                    job_id=job_id, number=number, executor=executor, started_at=self._clock()
                )
            )
            return number

    def add_event(self, job_id: str, *, at: datetime, state: str, detail: str) -> int:
        """Append an event; its sequence number in the job (0, 1, …, across restarts)."""
        with self._writing() as connection:
            values = {"job_id": job_id, "at": at, "state": state, "detail": without_nul(detail)}
            return int(connection.execute(ADD_EVENT, values).scalar_one())

    def events(self, job_id: str, *, after: int = -1) -> list[EventOut]:
        if NUL in job_id:
            return []
        with self._session() as session:
            rows = session.scalars(
                select(EventRow)
                .where(EventRow.job_id == job_id, EventRow.seq > after)
                .order_by(EventRow.seq)
            )
            return [EventOut(seq=r.seq, at=r.at, state=r.state, detail=r.detail) for r in rows]

    def keep_run_logs(self, job_id: str, logs: Mapping[str, str]) -> None:
        """Store job `job_id`'s sandboxed runs' logs (reference → text), where any API
        process serves them; a reference stored already is kept as it is (a re-run step)."""
        if not logs:
            return
        with self._write_session() as session:
            for ref, text in logs.items():
                if session.get(RunLogRow, (job_id, ref)) is None:
                    session.add(RunLogRow(job_id=job_id, ref=ref, text=without_nul(text)))

    def finish(
        self, job_id: str, state: JobState, *, reason: str = "", finding: Finding | None = None,
        window: float = 0.0,
    ) -> JobOut:  # fmt: skip
        """End a job (once: a second call changes nothing), store its Finding, and keep
        its fingerprint claimed for `window` more seconds."""
        with self._write_session() as session:
            job = session.get_one(JobRow, job_id)
            if JobState(job.state) in TERMINAL:
                return job_out(job)
            now = self._clock()
            job.state, job.reason, job.finished_at = state, without_nul(reason), now
            if finding is not None:
                job.finding_id = new_id()
                session.add(FindingRow(
                    id=job.finding_id, job_id=job.id, repo=job.repo,
                    classification=finding.classification.value, status=finding.status.value,
                    title=without_nul(finding.title), created_at=now,
                    body=finding.model_dump_json(),
                ))  # fmt: skip
            session.execute(
                update(ClaimRow)
                .where(ClaimRow.job_id == job_id)
                .values(until=now + timedelta(seconds=window))
            )
            return job_out(job)


def queued_job(job_id: str, repo: str, *, now: datetime) -> JobOut:
    """A new job, queued."""
    return JobOut(
        id=job_id, repo=repo, state=JobState.QUEUED, reason="", created_at=now, occurrences=1
    )


def insert_job(
    connection: Connection, repo: str, report_id: str, *, now: datetime, part: int = 0,
    fingerprint: str | None = None, job_id: str | None = None,
) -> JobOut:  # fmt: skip
    """Store a new queued job for a stored report, in the caller's transaction."""
    job = queued_job(job_id or new_id(), repo, now=now)
    connection.execute(INSERT_JOB, {
        "id": job.id, "repo": repo, "report_id": report_id, "part": part,
        "fingerprint": fingerprint, "state": job.state.value, "reason": job.reason,
        "created_at": job.created_at, "occurrences": job.occurrences,
    })  # fmt: skip
    return job


def job_out(row: JobRow | Row[Any]) -> JobOut:
    return JobOut(
        id=row.id, repo=row.repo, state=JobState(row.state), reason=row.reason,
        created_at=row.created_at, started_at=row.started_at, finished_at=row.finished_at,
        finding_id=row.finding_id, duplicate_of=row.duplicate_of, occurrences=row.occurrences,
    )  # fmt: skip
