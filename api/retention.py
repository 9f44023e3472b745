"""Retention: what the service keeps, and for how long.

Every stored input (a report, a webhook delivery, a refusal) goes, with everything made
from it — its jobs, their attempts, events, findings, occurrences, delivery ids and fingerprint
claims — once it is older than `DIAGNOSER_RETENTION_DAYS`, and, oldest first, while all
of it together is over `DIAGNOSER_MAX_STORED_BYTES`. An input an unfinished (queued or
running) job works from is never removed, whatever its age: its job would fail.

    plan(inventory, now=…, policy=…)   pure: which inputs go, oldest first
    enforce(store, policy, now=…)      reads the inventory, deletes what `plan` says

The process that runs the jobs enforces it every `SWEEP_CRON` (a DBOS scheduled
workflow, `api.jobs`). Sizes are what the database is asked to hold (`length()` of the
body, headers, events and findings: bytes of a body, characters of text), not its file
size: SQLite reuses freed pages but does not shrink its file (`VACUUM` does).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import cast

from sqlalchemy import Connection, Table, case, delete, func, or_, select

from api.schemas import TERMINAL
from api.settings import ServiceSettings
from api.statements import CLAIMS, DELIVERIES, JOBS, OCCURRENCES, REPORTS
from api.store import Store
from api.tables import AttemptRow, EventRow, FindingRow, RunLogRow

ATTEMPTS = cast(Table, AttemptRow.__table__)
EVENTS = cast(Table, EventRow.__table__)
FINDINGS = cast(Table, FindingRow.__table__)
RUN_LOGS = cast(Table, RunLogRow.__table__)
SWEEP_CRON = "0 */10 * * * *"
"""Every ten minutes (DBOS cron, seconds first): a sweep of a large database reads one
row per input, so not much more often; an hour's growth between sweeps at the webhook
rate limits is small against the default cap."""
BATCH = 500
"""Inputs removed per transaction: short transactions keep writers waiting briefly
(SQLite has one writer), and an `IN` list stays far below any parameter limit."""
DAY = timedelta(days=1)


@dataclass(frozen=True, slots=True)
class Policy:
    max_age: timedelta | None
    """Inputs older than this go; None keeps them whatever their age."""
    max_bytes: int | None
    """Inputs go, oldest first, while everything stored is over this; None: no cap."""

    @classmethod
    def of(cls, settings: ServiceSettings) -> Policy:
        days, cap = settings.retention_days, settings.max_stored_bytes
        return cls(max_age=days * DAY if days else None, max_bytes=cap or None)


@dataclass(frozen=True, slots=True)
class Stored:
    """One stored input, as retention sees it."""

    report_id: str
    received_at: datetime
    size: int
    """Its body and headers, and its jobs' events and findings."""
    pinned: bool
    """An unfinished job works from it: never removed."""


@dataclass(frozen=True, slots=True)
class Swept:
    """What one `enforce` did."""

    removed: int
    """Inputs removed (with their jobs, events and findings)."""
    kept_bytes: int
    """The size of what is left."""


def plan(inventory: Sequence[Stored], *, now: datetime, policy: Policy) -> list[str]:
    """The inputs to remove, oldest first: every unpinned one older than the age limit,
    then more unpinned ones, oldest first, until the rest fits the size cap (pinned
    ones count towards it but stay, so the rest may stay over it)."""
    ordered = sorted(inventory, key=lambda s: (s.received_at, s.report_id))
    total = sum(s.size for s in ordered)
    oldest = now - policy.max_age if policy.max_age is not None else None
    removed: list[str] = []
    for item in ordered:
        if item.pinned:
            continue
        too_old = oldest is not None and item.received_at < oldest
        too_big = policy.max_bytes is not None and total > policy.max_bytes
        if not (too_old or too_big):
            break  # the rest are newer, and the total only falls
        removed.append(item.report_id)
        total -= item.size
    return removed


def enforce(store: Store, policy: Policy, *, now: datetime) -> Swept:
    """Remove what `plan` says from `store`'s database, `BATCH` inputs a transaction."""
    if policy.max_age is None and policy.max_bytes is None:
        return Swept(removed=0, kept_bytes=0)
    with store.engine.connect() as connection:
        stored = inventory(connection)
    doomed = plan(stored, now=now, policy=policy)
    removed = 0
    for start in range(0, len(doomed), BATCH):
        with store.writing() as connection:
            removed += remove(connection, doomed[start : start + BATCH])
    gone = set(doomed)
    return Swept(removed, sum(s.size for s in stored if s.report_id not in gone))


def inventory(connection: Connection) -> list[Stored]:
    """Every stored input with its size and whether an unfinished job works from it."""
    events = (
        select(EVENTS.c.job_id, func.sum(func.length(EVENTS.c.detail)).label("n"))
        .group_by(EVENTS.c.job_id).subquery()
    )  # fmt: skip
    unfinished = JOBS.c.state.not_in([state.value for state in TERMINAL])
    jobs = (
        select(
            JOBS.c.report_id,
            func.sum(
                func.coalesce(events.c.n, 0) + func.coalesce(func.length(FINDINGS.c.body), 0)
            ).label("n"),
            func.sum(case((unfinished, 1), else_=0)).label("open"),
        )
        .outerjoin(events, events.c.job_id == JOBS.c.id)
        .outerjoin(FINDINGS, FINDINGS.c.job_id == JOBS.c.id)
        .group_by(JOBS.c.report_id).subquery()
    )  # fmt: skip
    size = (
        func.length(REPORTS.c.raw) + func.length(REPORTS.c.headers)
        + func.coalesce(func.length(REPORTS.c.rejected), 0) + func.coalesce(jobs.c.n, 0)
    )  # fmt: skip
    rows = connection.execute(
        select(REPORTS.c.id, REPORTS.c.received_at, size, func.coalesce(jobs.c.open, 0))
        .outerjoin(jobs, jobs.c.report_id == REPORTS.c.id)
    )  # fmt: skip
    return [Stored(r[0], r[1], int(r[2] or 0), bool(r[3])) for r in rows]


def remove(connection: Connection, report_ids: Iterable[str]) -> int:
    """Delete inputs and everything made from them, children first; an input an
    unfinished job works from by now is skipped. How many inputs went."""
    wanted = list(report_ids)
    unfinished = JOBS.c.state.not_in([state.value for state in TERMINAL])
    busy = set(
        connection.execute(
            select(JOBS.c.report_id).where(JOBS.c.report_id.in_(wanted), unfinished)
        ).scalars()
    )
    ids = [report_id for report_id in wanted if report_id not in busy]
    if not ids:
        return 0
    job_ids = list(connection.execute(select(JOBS.c.id).where(JOBS.c.report_id.in_(ids))).scalars())
    for table in (ATTEMPTS, EVENTS, RUN_LOGS, FINDINGS, DELIVERIES, CLAIMS):
        connection.execute(delete(table).where(table.c.job_id.in_(job_ids)))
    connection.execute(
        delete(OCCURRENCES).where(
            or_(OCCURRENCES.c.job_id.in_(job_ids), OCCURRENCES.c.report_id.in_(ids))
        )
    )
    connection.execute(delete(JOBS).where(JOBS.c.id.in_(job_ids)))
    return connection.execute(delete(REPORTS).where(REPORTS.c.id.in_(ids))).rowcount
