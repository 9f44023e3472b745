"""Stored inputs: every report as it arrived — accepted, refused in part with why, or
rejected later — and webhook deliveries, each taken once by its delivery id.

    report_id = store.add_report(repo="demo", source="diagnose", raw=body)
    job, first = store.deliver(provider="github", delivery_id=…, repo=…, …)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import datetime

from sqlalchemy import Connection, update
from sqlalchemy.exc import IntegrityError

from api.bounds import bound, bound_headers, refused_prefix
from api.schemas import JobOut
from api.statements import INSERT_DELIVERY, INSERT_REPORT, REFUSED_BYTES, REPORTS
from api.store.jobs import Queue, insert_job, job_out
from api.store.transactions import Transactions, new_id, without_nul
from api.tables import CONTENT_TYPE_LENGTH, DELIVERY_ID_LENGTH, DeliveryRow, JobRow


class InputRecords(Transactions):
    def add_report(
        self, *, repo: str, source: str, raw: bytes, content_type: str = "",
        headers: Mapping[str, str] | None = None, rejected: str | None = None,
    ) -> str:  # fmt: skip
        """Keep an input as it arrived (a refused one too, with why); its id."""
        report_id = new_id()
        with self._writing() as connection:
            insert_report(
                connection, report_id, now=self._clock(), repo=repo, source=source, raw=raw,
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
            insert_report(
                connection, report_id, now=self._clock(), repo=repo, source=source,
                content_type=content_type, raw=refused_prefix(body, used=int(used), budget=budget),
                headers=headers, rejected=reason, whole=body,
            )  # fmt: skip
        return report_id

    def reject_report(self, report_id: str, reason: str) -> None:
        with self._writing() as connection:
            connection.execute(
                update(REPORTS)
                .where(REPORTS.c.id == report_id)
                .values(rejected=without_nul(reason))
            )

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
                insert_report(
                    connection, report_id, now=self._clock(), repo=repo, source=source,
                    raw=raw, content_type=content_type, headers=headers,
                )  # fmt: skip
                job = insert_job(connection, repo, report_id, now=self._clock())
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
                return job_out(session.get_one(JobRow, first.job_id)), False


def insert_report(
    connection: Connection, report_id: str, *, now: datetime, repo: str, source: str,
    raw: bytes, content_type: str, headers: Mapping[str, str] | None = None,
    rejected: str | None = None, whole: bytes | None = None,
) -> None:  # fmt: skip
    """Keep one input, received `now`, in the caller's transaction; `whole`, when given,
    is the body `raw` is the start of."""
    connection.execute(INSERT_REPORT, {
        "id": report_id, "repo": repo, "source": source, "raw": raw,
        "content_type": bound(content_type, CONTENT_TYPE_LENGTH),
        "headers": json.dumps(bound_headers(headers or {})),
        "received_at": now, "rejected": rejected and without_nul(rejected),
        "body_bytes": None if whole is None else len(whole),
        "body_sha256": None if whole is None else hashlib.sha256(whole).hexdigest(),
    })  # fmt: skip
