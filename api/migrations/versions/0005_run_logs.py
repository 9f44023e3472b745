"""run_logs: sandboxed runs' logs, kept with the job whose Finding references them

`diagnoser --verify` runs a report's reproducer and the proposed fixes in a sandbox; each
run's command and output is referenced from the Finding by a 16-hex-digit reference. The
worker that ran them copies those logs here as its diagnosis ends, so any API process
serves them (`GET /findings/{id}/logs/{ref}`); retention removes them with their job.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "run_logs",
        sa.Column("job_id", sa.String(length=36), nullable=False),
        sa.Column("ref", sa.String(length=16), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["job_id"], ["jobs.id"]),
        sa.PrimaryKeyConstraint("job_id", "ref"),
    )


def downgrade() -> None:
    op.drop_table("run_logs")
