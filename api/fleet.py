"""The fleet: every process that runs jobs, and the takeover of a dead one's jobs.

DBOS Transact runs the jobs across processes and machines: each process is an executor
with an id (`diagnoser.executor`) that DBOS tags the workflows it dequeues with; a
queue's worker and global concurrency bound what one process and the whole fleet run at
once; recovery (`DBOS._recover_pending_workflows`) puts a dead executor's unfinished
workflows back on their queue, where exactly one live executor dequeues each. What DBOS
leaves to its hosted Conductor, and self-hosting has to supply, is the failure detector
that says which executor is dead. That is this module, and nothing more: each runner
beats in its `executors` row every `beat_seconds`, and at each beat takes over every
executor whose last beat is older than `DIAGNOSER_TAKEOVER_SECONDS`, or that stopped
(a stop hands back the jobs it could not finish in its grace): it asks DBOS to recover
their workflows, then forgets their rows. Several live runners may do so at once:
recovery is idempotent, and `Store.finish` ends a job once.

    fleet = Fleet(store, "host-1a2b3c4d", role="worker", takeover_seconds=60,
                  recover=jobs.recover)
    fleet.join()      # refuses an id another live process holds; starts the heartbeat
    fleet.leave()     # stops it; the fleet takes what this process still held

Clocks: a beat is stamped with the beating machine's clock and judged by the judging
one's, so machines must agree within a small part of the takeover time (NTP does).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from datetime import datetime, timedelta

from api.store import Executor, Store
from api.store.transactions import utcnow
from diagnoser import ConfigError

log = logging.getLogger(__name__)

BEATS_PER_TAKEOVER = 4
"""A live executor beats this many times within the takeover time: missing a few beats
(a slow database, a long pause) does not get it taken for dead."""
MIN_BEAT_SECONDS = 0.2
MAX_BEAT_SECONDS = 10.0
Recover = Callable[[list[str]], int]
"""Put the unfinished workflows of these executors back on the queue; how many."""
ALIVE, SILENT, STOPPED = "alive", "silent", "stopped"
"""What the fleet makes of a member: beating; silent past the takeover time (dead, its
jobs are taken over at the next beat of a live one); stopped (its jobs too)."""


def beat_seconds(takeover_seconds: float) -> float:
    return min(max(takeover_seconds / BEATS_PER_TAKEOVER, MIN_BEAT_SECONDS), MAX_BEAT_SECONDS)


def member_state(member: Executor, *, now: datetime, takeover: timedelta) -> str:
    if member.stopped_at is not None:
        return STOPPED
    return SILENT if now - member.seen_at > takeover else ALIVE


def census(store: Store, takeover_seconds: float) -> dict[str, int]:
    """Members by state (`/metrics`)."""
    now, takeover = utcnow(), timedelta(seconds=takeover_seconds)
    counts = dict.fromkeys((ALIVE, SILENT, STOPPED), 0)
    for member in store.executors():
        counts[member_state(member, now=now, takeover=takeover)] += 1
    return counts


class Fleet:
    """This process's membership: its heartbeat, and the takeovers it makes."""

    def __init__(
        self, store: Store, executor_id: str, *, role: str, takeover_seconds: float,
        recover: Recover, clock: Callable[[], datetime] = utcnow,
    ) -> None:  # fmt: skip
        self.store = store
        self.executor_id = executor_id
        self.role = role
        self.takeover = timedelta(seconds=takeover_seconds)
        self.interval = beat_seconds(takeover_seconds)
        self.recover = recover
        self.clock = clock
        self.ready = False
        """Set when every served repository's index is warm (`worker --check` says)."""
        self._stop = threading.Event()
        self._taking_over = True
        self._thread: threading.Thread | None = None

    def check(self) -> None:
        """ConfigError when another live process holds this executor id."""
        held = self.store.executor(self.executor_id)
        if held is not None and self._alive_elsewhere(held):
            raise ConfigError(
                f"executor {self.executor_id!r} is already running (pid {held.pid} on "
                f"{held.host}, seen {self._age(held):.0f} s ago): give each job runner "
                "its own DIAGNOSER_HOME or DIAGNOSER_EXECUTOR_ID"
            )

    def join(self) -> None:
        """Register this process (after `check`); then beat and take over in the
        background."""
        self._register()
        self._stop.clear()
        self._taking_over = True
        self._thread = threading.Thread(target=self._run, name="fleet", daemon=True)
        self._thread.start()

    def retire(self) -> None:
        """Beat on, take over no more (a stop: DBOS is going away)."""
        self._taking_over = False

    def tick(self) -> list[str]:
        """One beat, then the takeover of every dead or stopped executor; their ids."""
        if not self.store.beat(self.executor_id, ready=self.ready):
            log.warning("executor %s was taken for dead: registering again", self.executor_id)
            self._register()
        now = self.clock()
        taken: list[str] = []
        if not self._taking_over:
            return taken
        for member in self.store.executors():
            if member.id == self.executor_id:
                continue
            if member_state(member, now=now, takeover=self.takeover) == ALIVE:
                continue
            recovered = self.recover([member.id])
            if self.store.forget_executor(member):
                taken.append(member.id)
                stopped = member.stopped_at is not None
                log.log(
                    logging.INFO if stopped else logging.WARNING,
                    "took over executor %s (%s since %s): %d jobs back on the queue",
                    member.id, STOPPED if stopped else SILENT,
                    (member.stopped_at or member.seen_at).isoformat(), recovered,
                )  # fmt: skip
        return taken

    def leave(self) -> None:
        """Stop beating and say so: the fleet takes over what this process still holds
        at its next beat, without waiting for the takeover time."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self.store.stop_executor(self.executor_id)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.tick()
            except Exception:  # a lost database: beat again later, never die
                log.exception("fleet heartbeat failed")

    def _register(self) -> None:
        self.store.register_executor(Executor.starting(
            self.executor_id, host=socket.gethostname(), pid=os.getpid(), role=self.role,
            now=self.clock(),
        ))  # fmt: skip

    def _alive_elsewhere(self, held: Executor) -> bool:
        """`held` (this id's row) is another process that is still alive."""
        if member_state(held, now=self.clock(), takeover=self.takeover) != ALIVE:
            return False
        if held.host != socket.gethostname():
            return True
        return held.pid != os.getpid() and _running(held.pid)

    def _age(self, held: Executor) -> float:
        return (self.clock() - held.seen_at).total_seconds()


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True
