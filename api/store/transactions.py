"""The store's way to its database: read sessions, write transactions taken in turn, and
the clock every stored time is read from. Each part of `Store` (`api.store`) builds on
`Transactions`.

Synchronous (SQLAlchemy sessions); routes call the store from worker threads, never on
the event loop.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import UTC, datetime

from sqlalchemy import Connection, Engine
from sqlalchemy.orm import Session, sessionmaker

from api.database import SQLITE, SQLITE_WRITE

NUL = "\x00"
"""PostgreSQL text cannot hold it (psycopg raises DataError; SQLite can): a key with one
matches no row, and text we store from a report loses it (`without_nul`)."""


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    return str(uuid.uuid4())


def without_nul(value: str) -> str:
    """`value` as PostgreSQL can store it: without NUL."""
    return value.replace(NUL, "")


class Transactions:
    def __init__(self, engine: Engine, *, clock: Callable[[], datetime] = utcnow) -> None:
        self.engine = engine
        self._session = sessionmaker(engine, expire_on_commit=False)
        # The request path writes with Core statements on one connection (no unit of
        # work, no identity map): a third of the ORM's CPU per accepted report.
        self._writer = engine.execution_options(**SQLITE_WRITE)
        self._write = sessionmaker(self._writer, expire_on_commit=False)
        # SQLite has one writer at a time. Waiting for its lock in SQLite's busy handler
        # sleeps in steps of up to 100 ms, so under load the lock sat free while writers
        # slept (120 ms of wall time per accepted report for 2 ms of CPU); this process's
        # writers queue on a lock of ours instead, and only other processes' wait there.
        self._turn: AbstractContextManager[object] = (
            threading.RLock() if engine.dialect.name == SQLITE else nullcontext()
        )
        self._clock = clock

    @contextmanager
    def _writing(self) -> Iterator[Connection]:
        """A write transaction on one connection, committed at the end."""
        with self._turn, self._writer.begin() as connection:
            yield connection

    def writing(self) -> AbstractContextManager[Connection]:
        """A write transaction for a collaborator that writes in bulk (`api.retention`),
        taking its turn with this process's other writers."""
        return self._writing()

    @contextmanager
    def _write_session(self) -> Iterator[Session]:
        with self._turn, self._write.begin() as session:
            yield session
