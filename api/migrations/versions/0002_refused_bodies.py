"""refused bodies kept in part; reports by age

A refused delivery keeps only the start of its body: `body_bytes` and `body_sha256`
describe the whole one. Retention reads reports oldest first (`ix_reports_received`);
a refusal sums the refused rows' prefixes (`ix_reports_refused`, partial).

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("reports", schema=None) as batch_op:
        batch_op.add_column(sa.Column("body_bytes", sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column("body_sha256", sa.String(length=64), nullable=True))
        batch_op.create_index("ix_reports_received", ["received_at"], unique=False)
        batch_op.create_index(
            "ix_reports_refused", ["body_sha256"], unique=False,
            sqlite_where=sa.text("body_sha256 IS NOT NULL"),
            postgresql_where=sa.text("body_sha256 IS NOT NULL"),
        )  # fmt: skip


def downgrade() -> None:
    with op.batch_alter_table("reports", schema=None) as batch_op:
        batch_op.drop_index("ix_reports_refused")
        batch_op.drop_index("ix_reports_received")
        batch_op.drop_column("body_sha256")
        batch_op.drop_column("body_bytes")
