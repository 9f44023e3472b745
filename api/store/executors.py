"""Executors in the store: every process that runs jobs, with its heartbeat (`api.fleet`).

store.register_executor(Executor.starting("host-1a2b3c4d", role="worker", now=…))
store.beat("host-1a2b3c4d", ready=True)       # False: the row is gone (taken over)
store.stop_executor("host-1a2b3c4d")          # stopped: the fleet takes its jobs now
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select, update

from api.store.transactions import NUL, Transactions
from api.tables import HOST_LENGTH, ExecutorRow


@dataclass(frozen=True, slots=True)
class Executor:
    id: str
    host: str
    pid: int
    role: str
    started_at: datetime
    seen_at: datetime
    stopped_at: datetime | None = None
    ready: bool = False

    @classmethod
    def starting(
        cls, executor_id: str, *, host: str, pid: int, role: str, now: datetime
    ) -> Executor:
        return cls(executor_id, host[:HOST_LENGTH], pid, role, now, now)


class ExecutorRecords(Transactions):
    def register_executor(self, executor: Executor) -> None:
        """Insert or replace the executor's row (a restart starts it afresh)."""
        with self._write_session() as session:
            session.merge(ExecutorRow(
                id=executor.id, host=executor.host, pid=executor.pid, role=executor.role,
                started_at=executor.started_at, seen_at=executor.seen_at,
                stopped_at=executor.stopped_at, ready=executor.ready,
            ))  # fmt: skip

    def beat(self, executor_id: str, *, ready: bool) -> bool:
        """The executor is alive now; False when its row is gone (the fleet took it for
        dead and took over its jobs: the caller registers again)."""
        with self._write_session() as session:
            result = session.execute(
                update(ExecutorRow)
                .where(ExecutorRow.id == executor_id, ExecutorRow.stopped_at.is_(None))
                .values(seen_at=self._clock(), ready=ready)
            )
            return bool(result.rowcount)  # type: ignore[attr-defined]

    def stop_executor(self, executor_id: str) -> None:
        """The executor stopped: what it still held is the fleet's to take."""
        with self._write_session() as session:
            session.execute(
                update(ExecutorRow)
                .where(ExecutorRow.id == executor_id)
                .values(stopped_at=self._clock(), ready=False)
            )

    def forget_executor(self, executor: Executor) -> bool:
        """Remove a dead or stopped executor's row, unless it beat since it was read."""
        with self._write_session() as session:
            result = session.execute(
                delete(ExecutorRow).where(
                    ExecutorRow.id == executor.id, ExecutorRow.seen_at == executor.seen_at
                )
            )
            return bool(result.rowcount)  # type: ignore[attr-defined]

    def executor(self, executor_id: str) -> Executor | None:
        if NUL in executor_id:
            return None
        with self._session() as session:
            row = session.get(ExecutorRow, executor_id)
            return _executor(row) if row else None

    def executors(self) -> list[Executor]:
        with self._session() as session:
            return [_executor(row) for row in session.scalars(select(ExecutorRow))]


def _executor(row: ExecutorRow) -> Executor:
    return Executor(
        row.id, row.host, row.pid, row.role, row.started_at, row.seen_at, row.stopped_at,
        row.ready,
    )  # fmt: skip
