"""Databases for the API tests: an SQLite file, or a fresh PostgreSQL database on the
local server (127.0.0.1:5432, trust auth) made for one test and dropped after it.

PostgreSQL is not optional: when it cannot be reached the test fails, saying how to
start it (`make test` starts it when it is installed but stopped).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest

POSTGRES_ADMIN_URL = os.environ.get(
    "DIAGNOSER_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"
)
"""Where test databases are created (any database of the server will do)."""
BACKENDS = ("sqlite", "postgresql")


@contextmanager
def fresh_database(backend: str, tmp_path: Path) -> Iterator[str]:
    """A database URL nobody else uses, removed afterwards."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'service' / 'diagnoser.sqlite'}"
        return
    name = f"diagnoser_test_{uuid.uuid4().hex[:12]}"
    try:
        admin = psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        pytest.fail(
            f"PostgreSQL is not reachable at {POSTGRES_ADMIN_URL} ({exc}); start it: "
            "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start"
        )
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        base = POSTGRES_ADMIN_URL.rsplit("/", 1)[0]
        try:
            yield f"{base}/{name}"
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
