"""Executors in the store on SQLite and PostgreSQL: registered, beating, stopped, and
forgotten only as they were read (`api.store.executors`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from api.store import Executor, Store

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def _member(executor_id: str = "host-1a2b3c4d", *, pid: int = 41) -> Executor:
    return Executor.starting(executor_id, host="host", pid=pid, role="worker", now=NOW)


def test_a_registered_executor_beats_stops_and_registers_again_afresh(store: Store) -> None:
    store.register_executor(_member())
    assert store.beat("host-1a2b3c4d", ready=True)
    seen = store.executor("host-1a2b3c4d")
    assert seen is not None and seen.ready and seen.seen_at > NOW and seen.stopped_at is None
    store.stop_executor("host-1a2b3c4d")
    stopped = store.executor("host-1a2b3c4d")
    assert stopped is not None and stopped.stopped_at is not None and not stopped.ready
    assert not store.beat("host-1a2b3c4d", ready=True)  # a stopped one does not beat
    store.register_executor(_member(pid=42))  # its restart
    again = store.executor("host-1a2b3c4d")
    assert again is not None and again.pid == 42 and again.stopped_at is None
    assert [member.id for member in store.executors()] == ["host-1a2b3c4d"]


def test_a_member_is_forgotten_only_if_it_did_not_beat_since_it_was_read(store: Store) -> None:
    store.register_executor(_member())
    read = store.executor("host-1a2b3c4d")
    assert read is not None
    assert store.beat("host-1a2b3c4d", ready=False)  # it was alive after all
    assert not store.forget_executor(read)
    assert store.executor("host-1a2b3c4d") is not None
    fresh = store.executor("host-1a2b3c4d")
    assert fresh is not None and store.forget_executor(fresh)
    assert store.executor("host-1a2b3c4d") is None
    assert not store.beat("host-1a2b3c4d", ready=False)  # gone: it must register again


def test_a_long_host_name_is_cut_to_fit(store: Store) -> None:
    member = Executor.starting("x", host="h" * 400, pid=1, role="worker", now=NOW - timedelta(1))
    store.register_executor(member)
    stored = store.executor("x")
    assert stored is not None and stored.host == "h" * 255
    assert store.executor("x\x00") is None
