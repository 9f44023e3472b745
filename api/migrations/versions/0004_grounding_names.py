"""grounding statuses renamed: verified → grounded (issue 26)

A Finding's `status` says its citations checked out against the files, not that anything
ran: `verified`, `partially_verified` and `unverified` become `grounded`,
`partially_grounded` and `ungrounded`, in `findings.status` and in the top-level
`status` of the stored Finding (`findings.body`, compact JSON as
`Finding.model_dump_json` writes it). Rows are rewritten a batch at a time, so a large
table is never read into memory whole. The downgrade maps the names back.

The names are spelled out here, not imported: a migration must keep doing what it did
when it was written, whatever `diagnoser.finding` says later.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

RENAMED = {
    "verified": "grounded",
    "partially_verified": "partially_grounded",
    "unverified": "ungrounded",
}
BATCH = 500
"""Findings read and rewritten at a time (a body is a few KiB to a few hundred)."""

_findings = sa.table(
    "findings",
    sa.column("id", sa.String),
    sa.column("status", sa.String),
    sa.column("body", sa.Text),
)


def upgrade() -> None:
    _rename(RENAMED)


def downgrade() -> None:
    _rename({new: old for old, new in RENAMED.items()})


def _rename(names: Mapping[str, str]) -> None:
    connection = op.get_bind()
    ids = list(
        connection.scalars(sa.select(_findings.c.id).where(_findings.c.status.in_(list(names))))
    )
    update = (
        _findings.update()
        .where(_findings.c.id == sa.bindparam("row_id"))
        .values(status=sa.bindparam("new_status"), body=sa.bindparam("new_body"))
    )
    for start in range(0, len(ids), BATCH):
        rows = connection.execute(
            sa.select(_findings.c.id, _findings.c.status, _findings.c.body).where(
                _findings.c.id.in_(ids[start : start + BATCH])
            )
        )
        changed = [
            {"row_id": id_, "new_status": names[status], "new_body": _body(body, names)}
            for id_, status, body in rows
        ]
        if changed:
            connection.execute(update, changed)


def _body(body: str, names: Mapping[str, str]) -> str:
    """`body` with its top-level `status` renamed, dumped as compactly as pydantic does
    (no spaces, UTF-8 kept); a body that is not a JSON object is left as it is."""
    try:
        finding = json.loads(body)
    except ValueError:
        return body
    status = finding.get("status") if isinstance(finding, dict) else None
    if not isinstance(status, str) or status not in names:
        return body
    finding["status"] = names[status]
    return json.dumps(finding, ensure_ascii=False, separators=(",", ":"))
