"""`Store`: every read and write of the service's database, one short transaction each.

Synchronous (SQLAlchemy sessions); routes call it from worker threads, never on the event
loop. Identical reports are folded here, atomically, on any database and any number of
processes: a `claims` row per (repo, fingerprint) names the job that investigates it; a
second report finds the row and attaches to that job as an occurrence, until `until`
(the job's end + the dedupe window) has passed, when a new job takes the claim over by
compare-and-swap.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import (
    Connection,
    Engine,
    Row,
    and_,
    func,
    or_,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from api.bounds import bound, bound_headers, refused_prefix
from api.database import SQLITE, SQLITE_WRITE
from api.schemas import (
    TERMINAL,
    TRANSITIONS,
    EventOut,
    FindingPage,
    FindingSummary,
    JobOut,
    JobState,
)
from api.statements import (
    ACCEPT_NEW,
    ATTACH,
    FIND_CLAIM,
    INSERT_DELIVERY,
    INSERT_JOB,
    INSERT_OCCURRENCE,
    INSERT_REPORT,
    JOBS,
    PUT_CLAIM,
    REFUSED_BYTES,
    REPORTS,
    TAKE_CLAIM,
)
from api.tables import (
    CONTENT_TYPE_LENGTH,
    DELIVERY_ID_LENGTH,
    ClaimRow,
    DeliveryRow,
    EventRow,
    FindingRow,
    JobRow,
    ReportRow,
)
from diagnoser import Finding

CLAIM_ATTEMPTS = 5
"""Compare-and-swap rounds before a claim gives up (each lost round means another
writer changed the row; five in a row does not happen outside a test)."""
PAGE_MAX = 100
NUL = "\x00"
"""PostgreSQL text cannot hold it (psycopg raises DataError; SQLite can): a key with one
matches no row, and text we store from a report loses it (`_text`)."""


Queue = Callable[[Connection, str], None]
"""Hands a new job (by id) to the job queue in the transaction that stores it, on its
connection: the job and its place in the queue commit together (`Jobs.enqueue_in`)."""


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    return str(uuid.uuid4())


@dataclass(frozen=True, slots=True)
class Submitted:
    """Which job answers a report; `attached` when it was an identical report's."""

    job: JobOut
    attached: bool


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


class Store:
    def __init__(self, engine: Engine, *, clock: Callable[[], datetime] = utcnow) -> None:
        self.engine = engine
        self._session = sessionmaker(engine, expire_on_commit=False)
        # The request path writes with Core statements on one connection (no unit of
        # work, no identity map): a third of the ORM's CPU per accepted report.
        self._writer = engine.execution_options(**SQLITE_WRITE)
        self._write = sessionmaker(self._writer, expire_on_commit=False)
        # SQLite has one writer at a time. Waiting for its lock in SQLite's busy handler
        # sleeps in steps of up to 100 ms, so under load the lock sat free while writers
        # slept (120 ms of wall time per accepted report for 2 ms of CPU); this process's
        # writers queue on a lock of ours instead, and only other processes' wait there.
        self._turn: AbstractContextManager[object] = (
            threading.RLock() if engine.dialect.name == SQLITE else nullcontext()
        )
        self._clock = clock
        self._put_claim = PUT_CLAIM[engine.dialect.name]
        self._accept_new = ACCEPT_NEW.get(engine.dialect.name)

    @contextmanager
    def _writing(self) -> Iterator[Connection]:
        """A write transaction on one connection, committed at the end."""
        with self._turn, self._writer.begin() as connection:
            yield connection

    def writing(self) -> AbstractContextManager[Connection]:
        """A write transaction for a collaborator that writes in bulk (`api.retention`),
        taking its turn with this process's other writers."""
        return self._writing()

    @contextmanager
    def _write_session(self) -> Iterator[Session]:
        with self._turn, self._write.begin() as session:
            yield session

    # ---- reports and jobs -------------------------------------------------------------

    def add_report(
        self, *, repo: str, source: str, raw: bytes, content_type: str = "",
        headers: Mapping[str, str] | None = None, rejected: str | None = None,
    ) -> str:  # fmt: skip
        """Keep an input as it arrived (a refused one too, with why); its id."""
        report_id = new_id()
        with self._writing() as connection:
            self._insert_report(
                connection, report_id, repo=repo, source=source, raw=raw,
                content_type=content_type, headers=headers, rejected=rejected,
            )  # fmt: skip
        return report_id

    def refuse(
        self, *, repo: str, source: str, body: bytes, content_type: str,
        headers: Mapping[str, str], reason: str, budget: int,
    ) -> str:  # fmt: skip
        """Keep a refused delivery in part (`bounds.refused_prefix`): the start of its
        body while the refused prefixes stored stay within `budget` bytes, and always
        its size, hash, headers and `reason`; its id."""
        report_id = new_id()
        with self._writing() as connection:
            used = connection.execute(REFUSED_BYTES).scalar_one()
            self._insert_report(
                connection, report_id, repo=repo, source=source, content_type=content_type,
                raw=refused_prefix(body, used=int(used), budget=budget), headers=headers,
                rejected=reason, whole=body,
            )  # fmt: skip
        return report_id

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
            job = self._job(job_id, repo)
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
            self._insert_report(
                connection, report_id, repo=repo, source=source, raw=raw,
                content_type=content_type,
            )  # fmt: skip
            holder = None
            if fingerprint is not None:
                holder = self._claim(connection, repo, fingerprint, job_id)
        if holder is not None:
            return holder
        return self._new_job(connection, repo, report_id, fingerprint=fingerprint, job_id=job_id)

    def new_job(
        self, *, repo: str, report_id: str, part: int = 0, job_id: str | None = None
    ) -> JobOut | None:
        """A queued job; None when `job_id` is taken (a step re-run after a crash)."""
        try:
            with self._writing() as connection:
                return self._new_job(connection, repo, report_id, part=part, job_id=job_id)
        except IntegrityError:
            return None

    def reject_report(self, report_id: str, reason: str) -> None:
        with self._writing() as connection:
            connection.execute(
                update(REPORTS).where(REPORTS.c.id == report_id).values(rejected=_text(reason))
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

    def _insert_report(
        self, connection: Connection, report_id: str, *, repo: str, source: str, raw: bytes,
        content_type: str, headers: Mapping[str, str] | None = None,
        rejected: str | None = None, whole: bytes | None = None,
    ) -> None:  # fmt: skip
        """Keep one input; `whole`, when given, is the body `raw` is the start of."""
        connection.execute(INSERT_REPORT, {
            "id": report_id, "repo": repo, "source": source, "raw": raw,
            "content_type": bound(content_type, CONTENT_TYPE_LENGTH),
            "headers": json.dumps(bound_headers(headers or {})),
            "received_at": self._clock(), "rejected": rejected and _text(rejected),
            "body_bytes": None if whole is None else len(whole),
            "body_sha256": None if whole is None else hashlib.sha256(whole).hexdigest(),
        })  # fmt: skip

    def _new_job(
        self, connection: Connection, repo: str, report_id: str, *, part: int = 0,
        fingerprint: str | None = None, job_id: str | None = None,
    ) -> JobOut:  # fmt: skip
        job = self._job(job_id or new_id(), repo)
        connection.execute(INSERT_JOB, {
            "id": job.id, "repo": repo, "report_id": report_id, "part": part,
            "fingerprint": fingerprint, "state": job.state.value, "reason": job.reason,
            "created_at": job.created_at, "occurrences": job.occurrences,
        })  # fmt: skip
        return job

    def _job(self, job_id: str, repo: str) -> JobOut:
        """A new job, queued."""
        return JobOut(
            id=job_id, repo=repo, state=JobState.QUEUED, reason="", created_at=self._clock(),
            occurrences=1,
        )  # fmt: skip

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
        return _job_out(job)

    def job(self, job_id: str) -> JobOut | None:
        if NUL in job_id:
            return None
        with self._session() as session:
            row = session.get(JobRow, job_id)
            return _job_out(row) if row else None

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
            job.state, job.reason = state, _text(reason) or job.reason
            if state is JobState.RUNNING:
                job.started_at = now
            return True

    def add_event(self, job_id: str, *, at: datetime, state: str, detail: str) -> int:
        """Append an event; its sequence number in the job (0, 1, …, across restarts)."""
        with self._write_session() as session:
            last = session.scalar(select(func.max(EventRow.seq)).where(EventRow.job_id == job_id))
            seq = 0 if last is None else last + 1
            session.add(EventRow(job_id=job_id, seq=seq, at=at, state=state, detail=_text(detail)))
            return seq

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

    def finish(
        self, job_id: str, state: JobState, *, reason: str = "", finding: Finding | None = None,
        window: float = 0.0,
    ) -> JobOut:  # fmt: skip
        """End a job (once: a second call changes nothing), store its Finding, and keep
        its fingerprint claimed for `window` more seconds."""
        with self._write_session() as session:
            job = session.get_one(JobRow, job_id)
            if JobState(job.state) in TERMINAL:
                return _job_out(job)
            now = self._clock()
            job.state, job.reason, job.finished_at = state, _text(reason), now
            if finding is not None:
                job.finding_id = new_id()
                session.add(FindingRow(
                    id=job.finding_id, job_id=job.id, repo=job.repo,
                    classification=finding.classification.value, status=finding.status.value,
                    title=_text(finding.title), created_at=now, body=finding.model_dump_json(),
                ))  # fmt: skip
            session.execute(
                update(ClaimRow)
                .where(ClaimRow.job_id == job_id)
                .values(until=now + timedelta(seconds=window))
            )
            return _job_out(job)

    # ---- deliveries -------------------------------------------------------------------

    def deliver(
        self, *, provider: str, delivery_id: str, repo: str, source: str, raw: bytes,
        headers: Mapping[str, str], content_type: str, queue: Queue | None = None,
    ) -> tuple[JobOut, bool]:  # fmt: skip
        """Keep a webhook delivery and make its job, in one transaction (`queue`, if
        given, queues it there too): (the job, True); a delivery id seen before: (its
        first job, False)."""
        try:
            with self._writing() as connection:
                report_id = new_id()
                self._insert_report(
                    connection, report_id, repo=repo, source=source, raw=raw,
                    content_type=content_type, headers=headers,
                )  # fmt: skip
                job = self._new_job(connection, repo, report_id)
                connection.execute(INSERT_DELIVERY, {
                    "provider": provider, "job_id": job.id,
                    "delivery_id": bound(delivery_id, DELIVERY_ID_LENGTH),
                    "received_at": self._clock(),
                })  # fmt: skip
                if queue is not None:
                    queue(connection, job.id)
                return job, True
        except IntegrityError:
            with self._session() as session:
                key = (provider, bound(delivery_id, DELIVERY_ID_LENGTH))
                first = session.get_one(DeliveryRow, key)
                return _job_out(session.get_one(JobRow, first.job_id)), False

    # ---- findings ---------------------------------------------------------------------

    def finding(self, finding_id: str) -> tuple[FindingSummary, Finding] | None:
        if NUL in finding_id:
            return None
        with self._session() as session:
            row = session.get(FindingRow, finding_id)
            if row is None:
                return None
            return _summary(row), Finding.model_validate_json(row.body)

    def findings(
        self, *, repo: str | None = None, classification: str | None = None,
        status: str | None = None, since: datetime | None = None, cursor: str | None = None,
        limit: int = 20,
    ) -> FindingPage:  # fmt: skip
        """Newest first; `cursor` is the `next_cursor` of the page before (ValueError if
        it is not one)."""
        if any(NUL in value for value in (repo, classification, status) if value):
            return FindingPage(items=[])
        query = select(FindingRow)
        for column, value in (
            (FindingRow.repo, repo), (FindingRow.classification, classification),
            (FindingRow.status, status),
        ):  # fmt: skip
            if value is not None:
                query = query.where(column == value)
        if since is not None:
            query = query.where(FindingRow.created_at >= since)
        if cursor:
            at, last_id = decode_cursor(cursor)
            query = query.where(or_(
                FindingRow.created_at < at,
                and_(FindingRow.created_at == at, FindingRow.id < last_id),
            ))  # fmt: skip
        size = max(1, min(limit, PAGE_MAX))
        query = query.order_by(FindingRow.created_at.desc(), FindingRow.id.desc()).limit(size + 1)
        with self._session() as session:
            rows = list(session.scalars(query))
        items = [_summary(r) for r in rows[:size]]
        more = len(rows) > size
        return FindingPage(
            items=items, next_cursor=encode_cursor(items[-1]) if more and items else None
        )


def encode_cursor(last: FindingSummary) -> str:
    text = f"{last.created_at.isoformat()}|{last.id}"
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        at, last_id = text.split("|", 1)
        if NUL in last_id:
            raise ValueError(last_id)
        return datetime.fromisoformat(at), last_id
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise ValueError("cursor is not one this API returned; pass next_cursor as is") from None


def _text(value: str) -> str:
    return value.replace(NUL, "")


def _job_out(row: JobRow | Row[Any]) -> JobOut:
    return JobOut(
        id=row.id, repo=row.repo, state=JobState(row.state), reason=row.reason,
        created_at=row.created_at, started_at=row.started_at, finished_at=row.finished_at,
        finding_id=row.finding_id, duplicate_of=row.duplicate_of, occurrences=row.occurrences,
    )  # fmt: skip


def _summary(row: FindingRow) -> FindingSummary:
    return FindingSummary(
        id=row.id, job_id=row.job_id, repo=row.repo, classification=row.classification,
        status=row.status, title=row.title, created_at=row.created_at,
    )  # fmt: skip
