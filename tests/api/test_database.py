"""`api.database`: pooled connections that a restarted PostgreSQL dropped are replaced —
before use after `ping_idle_seconds` idle, or after the one use that finds them broken."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import Engine, text
from sqlalchemy.exc import OperationalError

from api.database import connect
from tests.api.databases import POSTGRES_ADMIN_URL, fresh_database


def _backend_pid(engine: Engine) -> int:
    with engine.connect() as connection:
        return int(connection.execute(text("SELECT pg_backend_pid()")).scalar_one())


def _drop_connections(url: str) -> None:
    """What a PostgreSQL restart does to the pool: every connection to `url` is closed."""
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
            (name,),
        )


@pytest.fixture
def postgresql_url(tmp_path: Path) -> Iterator[str]:
    """PostgreSQL only: SQLite has no server to restart."""
    with fresh_database("postgresql", tmp_path) as url:
        yield url


def test_an_idle_connection_is_pinged_and_replaced_before_use(postgresql_url: str) -> None:
    engine = connect(postgresql_url, ping_idle_seconds=0.0)
    try:
        before = _backend_pid(engine)
        _drop_connections(postgresql_url)
        after = _backend_pid(engine)  # the dropped connection never reaches the caller
        assert after != before
    finally:
        engine.dispose()


def test_a_recently_used_connection_is_not_pinged_and_its_failure_renews_the_pool(
    postgresql_url: str,
) -> None:
    engine = connect(postgresql_url, ping_idle_seconds=3600.0)
    try:
        before = _backend_pid(engine)
        _drop_connections(postgresql_url)
        with pytest.raises(OperationalError):  # no ping: the first use finds it dropped
            _backend_pid(engine)
        assert _backend_pid(engine) != before  # … and the pool has new connections
    finally:
        engine.dispose()
