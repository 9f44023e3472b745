"""Alembic environment: runs on the connection `api.database.migrate` hands over."""

from __future__ import annotations

from alembic import context

from api.tables import Base

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=connection.dialect.name == "sqlite",  # SQLite cannot ALTER most things
)
with context.begin_transaction():
    context.run_migrations()
