"""Databases for the API tests: an SQLite file, or a fresh PostgreSQL database on the
local server (127.0.0.1:5432, trust auth) made for one test and dropped after it.

PostgreSQL is not optional: when it cannot be reached the test fails, saying how to
start it (`make test` starts it when it is installed but stopped).

Each name is random, so tests running at once (pytest-xdist workers, or another
checkout's suite on the same server) never share a database. A test's database may be
copied from a template (`CREATE DATABASE … TEMPLATE`): one the service has already
started on, which spares each test migrating an empty one.
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


def _admin() -> psycopg.Connection[tuple[object, ...]]:
    try:
        return psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        pytest.fail(
            f"PostgreSQL is not reachable at {POSTGRES_ADMIN_URL} ({exc}); start it: "
            "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start"
        )


@contextmanager
def postgres_database(*, template: str | None = None) -> Iterator[str]:
    """A new PostgreSQL database (empty, or a copy of `template`), dropped afterwards.
    Its commits do not wait for the disk (`synchronous_commit = off`): a test needs no
    durability past a crash of the server itself."""
    name = f"diagnoser_test_{uuid.uuid4().hex[:12]}"
    copy = f' TEMPLATE "{template}"' if template else ""
    with _admin() as admin:
        admin.execute(f'CREATE DATABASE "{name}"{copy}')
        admin.execute(f'ALTER DATABASE "{name}" SET synchronous_commit = off')
        base = POSTGRES_ADMIN_URL.rsplit("/", 1)[0]
        try:
            yield f"{base}/{name}"
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def release(url: str) -> None:
    """Close every connection to `url`'s database: a template must have none."""
    with _admin() as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
            (url.rsplit("/", 1)[1],),
        )


@contextmanager
def fresh_database(backend: str, tmp_path: Path, *, template: str | None = None) -> Iterator[str]:
    """A database URL nobody else uses, removed afterwards (on PostgreSQL, a copy of
    `template` when one is named)."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'service' / 'diagnoser.sqlite'}"
        return
    with postgres_database(template=template) as url:
        yield url
