"""Stored rows: reports (raw input kept, rejected ones too), jobs, events, findings and
their sandboxed runs' logs, occurrences, webhook deliveries and the fingerprint claims
that make identical reports attach to one job. The schema is created and upgraded by the
Alembic migrations in `api/migrations/`, never by `create_all`; request and response
shapes are in `schemas`.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    Dialect,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

ID_LENGTH = 36
"""A UUID in its canonical text form."""
CONTENT_TYPE_LENGTH = 128
"""`reports.content_type`: a caller's `Content-Type` is cut to this (`api.bounds`)."""
DELIVERY_ID_LENGTH = 256
"""`deliveries.delivery_id`: longer provider ids are hashed (`api.deliveries`)."""
EXECUTOR_ID_LENGTH = 128
"""An executor id (`diagnoser.executor.EXECUTOR_ID_PATTERN`)."""
LOG_REF_LENGTH = 16
"""A run log's reference: 16 hex digits (`diagnoser.verify.logs.REF_PATTERN`)."""
HOST_LENGTH = 255
"""`executors.host`: a host name, cut to this."""


class UTCDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes on every database (SQLite hands back naive ones)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return value.astimezone(UTC) if value is not None else None

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    type_annotation_map = {datetime: UTCDateTime}  # noqa: RUF012 (SQLAlchemy's protocol)


class ReportRow(Base):
    """One input as it arrived: a `/diagnose` body or a webhook delivery."""

    __tablename__ = "reports"
    id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    repo: Mapped[str] = mapped_column(String(64))
    source: Mapped[str] = mapped_column(String(32))
    """`diagnose` (a ReportIn as JSON), `text`, or the webhook route (`sentry`, …)."""
    content_type: Mapped[str] = mapped_column(String(CONTENT_TYPE_LENGTH), default="")
    headers: Mapped[str] = mapped_column(Text, default="{}")
    """The webhook headers intake needs (JSON), secrets and signatures left out."""
    raw: Mapped[bytes] = mapped_column(LargeBinary)
    received_at: Mapped[datetime] = mapped_column()
    rejected: Mapped[str | None] = mapped_column(Text, default=None)
    """Why this input was refused (bad signature, malformed body…); kept all the same."""
    body_bytes: Mapped[int | None] = mapped_column(BigInteger, default=None)
    """Set when `raw` is only the start of the body (a refused delivery): its full size."""
    body_sha256: Mapped[str | None] = mapped_column(String(64), default=None)
    """Set with `body_bytes`: the full body's sha256 (hex)."""
    __table_args__ = (
        Index("ix_reports_received", "received_at"),
        # `Store.refuse` sums the refused prefixes on every refusal: over these rows only,
        # not a scan of every stored input inside the write transaction.
        Index(
            "ix_reports_refused", "body_sha256",
            sqlite_where=text("body_sha256 IS NOT NULL"),
            postgresql_where=text("body_sha256 IS NOT NULL"),
        ),
    )  # fmt: skip


class JobRow(Base):
    __tablename__ = "jobs"
    id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    repo: Mapped[str] = mapped_column(String(64))
    report_id: Mapped[str] = mapped_column(ForeignKey("reports.id"))
    part: Mapped[int] = mapped_column(Integer, default=0)
    """Which report of a payload holding several (a poll of reviews)."""
    fingerprint: Mapped[str | None] = mapped_column(String(64), default=None)
    state: Mapped[str] = mapped_column(String(32))
    reason: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column()
    started_at: Mapped[datetime | None] = mapped_column(default=None)
    finished_at: Mapped[datetime | None] = mapped_column(default=None)
    finding_id: Mapped[str | None] = mapped_column(String(ID_LENGTH), default=None)
    duplicate_of: Mapped[str | None] = mapped_column(String(ID_LENGTH), default=None)
    occurrences: Mapped[int] = mapped_column(Integer, default=1)
    __table_args__ = (Index("ix_jobs_state", "state"),)


class EventRow(Base):
    __tablename__ = "events"
    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[datetime] = mapped_column()
    state: Mapped[str] = mapped_column(String(32))
    detail: Mapped[str] = mapped_column(Text, default="")


class AttemptRow(Base):
    """One run of a job by an executor: the first, and one more each time a job whose
    runner died or stopped is taken over (or recovered at its runner's restart)."""

    __tablename__ = "attempts"
    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id"), primary_key=True)
    number: Mapped[int] = mapped_column(Integer, primary_key=True)
    executor: Mapped[str] = mapped_column(String(EXECUTOR_ID_LENGTH))
    started_at: Mapped[datetime] = mapped_column()


class ExecutorRow(Base):
    """A process that runs jobs, as the fleet sees it (`api.fleet`): alive while its
    heartbeat (`seen_at`) is fresh; `stopped_at` once it stopped and handed back its jobs."""

    __tablename__ = "executors"
    id: Mapped[str] = mapped_column(String(EXECUTOR_ID_LENGTH), primary_key=True)
    host: Mapped[str] = mapped_column(String(HOST_LENGTH))
    pid: Mapped[int] = mapped_column(Integer)
    role: Mapped[str] = mapped_column(String(16))
    """`serve` (HTTP and jobs) or `worker` (jobs only)."""
    started_at: Mapped[datetime] = mapped_column()
    seen_at: Mapped[datetime] = mapped_column()
    stopped_at: Mapped[datetime | None] = mapped_column(default=None)
    ready: Mapped[bool] = mapped_column(Boolean, default=False)
    """Every served repository's index is warm."""


class FindingRow(Base):
    __tablename__ = "findings"
    id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id"), unique=True)
    repo: Mapped[str] = mapped_column(String(64))
    classification: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(32))
    title: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column()
    body: Mapped[str] = mapped_column(Text)
    """The Finding as JSON."""
    __table_args__ = (Index("ix_findings_created", "created_at", "id"),)


class RunLogRow(Base):
    """A sandboxed run's log (`diagnoser.verify.Logs`), kept with the job whose Finding
    references it (`reproduction.log`, `changes[].tested.log`): any API process serves it,
    whichever worker ran it."""

    __tablename__ = "run_logs"
    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id"), primary_key=True)
    ref: Mapped[str] = mapped_column(String(LOG_REF_LENGTH), primary_key=True)
    text: Mapped[str] = mapped_column(Text)


class OccurrenceRow(Base):
    """A later identical report, attached to the job that investigates (or did) it."""

    __tablename__ = "occurrences"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id"), index=True)
    report_id: Mapped[str] = mapped_column(ForeignKey("reports.id"))
    at: Mapped[datetime] = mapped_column()


class DeliveryRow(Base):
    """A webhook delivery id seen once: a replay is answered with the first job."""

    __tablename__ = "deliveries"
    provider: Mapped[str] = mapped_column(String(32), primary_key=True)
    delivery_id: Mapped[str] = mapped_column(String(DELIVERY_ID_LENGTH), primary_key=True)
    job_id: Mapped[str] = mapped_column(String(ID_LENGTH))
    received_at: Mapped[datetime] = mapped_column()


class ClaimRow(Base):
    """Who investigates a (repo, fingerprint): the job, while it runs and for the dedupe
    window after (`until`, unset while it runs)."""

    __tablename__ = "claims"
    repo: Mapped[str] = mapped_column(String(64), primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(64), primary_key=True)
    job_id: Mapped[str] = mapped_column(String(ID_LENGTH))
    until: Mapped[datetime | None] = mapped_column(default=None)
    __table_args__ = (UniqueConstraint("job_id"),)
