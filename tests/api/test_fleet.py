"""The fleet's failure detector (`api.fleet`) on SQLite and PostgreSQL: a silent or
stopped member's jobs are handed to DBOS's recovery once and its row forgotten; a live
one is left alone; an id a live process holds is refused. DBOS's recovery itself runs
for real in `test_fleet_processes.py`."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

import pytest

from api.fleet import ALIVE, SILENT, STOPPED, Fleet, beat_seconds, census, member_state
from api.store import Executor, Store
from diagnoser import ConfigError

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
TAKEOVER = 60.0


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        return self.now


def _fleet(store: Store, clock: Clock, recovered: list[list[str]], name: str = "me") -> Fleet:
    def recover(ids: list[str]) -> int:
        recovered.append(ids)
        return 2

    return Fleet(
        store, name, role="worker", takeover_seconds=TAKEOVER, recover=recover, clock=clock
    )


def _member(executor_id: str, *, seen: datetime, host: str = "elsewhere", pid: int = 1) -> Executor:
    return Executor.starting(executor_id, host=host, pid=pid, role="worker", now=seen)


def test_a_silent_member_is_taken_over_once_and_a_live_one_is_left(store: Store) -> None:
    clock, recovered = Clock(), []
    store.register_executor(_member("dead", seen=NOW - timedelta(seconds=TAKEOVER + 1)))
    store.register_executor(_member("alive", seen=NOW - timedelta(seconds=TAKEOVER - 1)))
    fleet = _fleet(store, clock, recovered)
    fleet.check()
    fleet._register()  # as `join` does, without its thread
    assert fleet.tick() == ["dead"]
    assert recovered == [["dead"]]
    assert {member.id for member in store.executors()} == {"me", "alive"}
    assert fleet.tick() == []  # forgotten: not recovered again
    assert recovered == [["dead"]]


def test_a_stopped_member_is_taken_over_at_once(store: Store) -> None:
    clock, recovered = Clock(), []
    store.register_executor(_member("leaving", seen=NOW))
    store.stop_executor("leaving")
    fleet = _fleet(store, clock, recovered)
    fleet._register()
    assert fleet.tick() == ["leaving"]
    assert recovered == [["leaving"]]


def test_a_retired_member_beats_on_but_takes_over_nothing(store: Store) -> None:
    clock, recovered = Clock(), []
    store.register_executor(_member("dead", seen=NOW - timedelta(hours=1)))
    fleet = _fleet(store, clock, recovered)
    fleet._register()
    fleet.retire()
    assert fleet.tick() == [] and recovered == []
    mine = store.executor("me")
    assert mine is not None and mine.seen_at > NOW  # it beat (the store's own clock)


def test_a_member_taken_for_dead_registers_again_at_its_next_beat(store: Store) -> None:
    clock, recovered = Clock(), []
    fleet = _fleet(store, clock, recovered)
    fleet._register()
    mine = store.executor("me")
    assert mine is not None and store.forget_executor(mine)  # another member took it
    fleet.tick()
    assert store.executor("me") is not None


def test_an_id_a_live_process_holds_is_refused_a_dead_or_stopped_ones_is_not(
    store: Store,
) -> None:
    clock, recovered = Clock(), []
    fleet = _fleet(store, clock, recovered, name="busy")
    store.register_executor(_member("busy", seen=NOW, host="another-machine"))
    with pytest.raises(ConfigError, match=r"already running .*DIAGNOSER_EXECUTOR_ID"):
        fleet.check()
    store.stop_executor("busy")
    fleet.check()  # stopped: free
    store.register_executor(_member("busy", seen=NOW - timedelta(seconds=TAKEOVER + 1)))
    fleet.check()  # silent past the takeover time: dead
    here = os.uname().nodename
    store.register_executor(_member("busy", seen=NOW, host=here, pid=os.getpid()))
    fleet.check()  # this very process (a service rebuilt in it)


def test_states_census_and_beat_interval(store: Store) -> None:
    takeover = timedelta(seconds=TAKEOVER)
    seen = _member("a", seen=NOW)
    assert member_state(seen, now=NOW + takeover, takeover=takeover) == ALIVE
    assert member_state(seen, now=NOW + takeover * 2, takeover=takeover) == SILENT
    store.register_executor(_member("b", seen=NOW))
    store.stop_executor("b")
    assert census(store, TAKEOVER) == {ALIVE: 0, SILENT: 0, STOPPED: 1}
    assert beat_seconds(60) == 10 and beat_seconds(3) == 0.75 and beat_seconds(0.1) == 0.2
    assert beat_seconds(3600) == 10  # a long takeover time still beats often enough to show
