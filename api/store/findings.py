"""Findings in the store: one by id, and pages of them newest first, filtered, each page
naming the next by an opaque cursor.

    page = store.findings(repo="demo", limit=20)
    store.findings(repo="demo", cursor=page.next_cursor)
"""

from __future__ import annotations

import base64
import binascii
from datetime import datetime

from sqlalchemy import and_, or_, select

from api.schemas import FindingPage, FindingSummary
from api.store.transactions import NUL, Transactions
from api.tables import FindingRow, RunLogRow
from diagnoser import Finding
from diagnoser.finding import LEGACY_STATUSES

PAGE_MAX = 100


class FindingRecords(Transactions):
    def finding(self, finding_id: str) -> tuple[FindingSummary, Finding] | None:
        if NUL in finding_id:
            return None
        with self._session() as session:
            row = session.get(FindingRow, finding_id)
            if row is None:
                return None
            return _summary(row), Finding.model_validate_json(row.body)

    def run_log(self, finding_id: str, ref: str) -> str | None:
        """The log `ref` of finding `finding_id`'s sandboxed runs, None if it has none."""
        if NUL in finding_id or NUL in ref:
            return None
        query = (
            select(RunLogRow.text)
            .join(FindingRow, FindingRow.job_id == RunLogRow.job_id)
            .where(FindingRow.id == finding_id, RunLogRow.ref == ref)
        )
        with self._session() as session:
            return session.scalars(query).first()

    def findings(
        self, *, repo: str | None = None, classification: str | None = None,
        status: str | None = None, since: datetime | None = None, cursor: str | None = None,
        limit: int = 20,
    ) -> FindingPage:  # fmt: skip
        """Newest first; `cursor` is the `next_cursor` of the page before (ValueError if
        it is not one). `status` may be a legacy name (`verified` for `grounded` …)."""
        if any(NUL in value for value in (repo, classification, status) if value):
            return FindingPage(items=[])
        if status in LEGACY_STATUSES:
            status = LEGACY_STATUSES[status].value
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


def _summary(row: FindingRow) -> FindingSummary:
    return FindingSummary(
        id=row.id, job_id=row.job_id, repo=row.repo, classification=row.classification,
        status=row.status, title=row.title, created_at=row.created_at,
    )  # fmt: skip
