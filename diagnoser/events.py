"""The pipeline's states, its one transition table, and the events a run emits.

    received → classified → not_actionable
                          → (reproducing →) mapped → exploring → deep_dive → reporting → structuring
                                   → grounding → (testing →) complete
    every state that is not terminal → failed | timed_out

`Recorder` keeps one run's state and its events. Every event is made, numbered and
delivered on the event loop thread that started the run: code running in a worker
thread (a tool, the funnel's listener) hands its call over with
`loop.call_soon_threadsafe` (`Recorder.soon`), so a sink needs no lock, `seq` is the
order the sink saw, and a thread still running after the run ended (a timeout abandons
it) is not heard from again.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from diagnoser.finding import Usage


class State(StrEnum):
    RECEIVED = "received"  # a report arrived
    CLASSIFIED = "classified"  # intake ran: frames, mentions, classification
    NOT_ACTIONABLE = "not_actionable"  # praise, feature request…: no model call (terminal)
    REPRODUCING = "reproducing"  # the report's reproducer runs in a sandbox (opt-in)
    MAPPED = "mapped"  # frames mapped onto the repository, map focused
    EXPLORING = "exploring"  # funnel stage 1
    DEEP_DIVE = "deep_dive"  # funnel stage 2
    REPORTING = "reporting"  # funnel stage 3: the markdown report
    STRUCTURING = "structuring"  # template → Finding
    GROUNDING = "grounding"  # Finding checked against the files
    TESTING = "testing"  # proposed changes run in a sandbox (after a reproduced failure)
    COMPLETE = "complete"  # terminal
    FAILED = "failed"  # terminal, with a reason
    TIMED_OUT = "timed_out"  # terminal: the run's one timeout fired, in whatever state


TERMINAL = frozenset({State.NOT_ACTIONABLE, State.COMPLETE, State.FAILED, State.TIMED_OUT})
_STOP = frozenset({State.FAILED, State.TIMED_OUT})
"""Where any state that is not terminal may end: a step failed, or time ran out."""

TRANSITIONS: dict[State, frozenset[State]] = {
    State.RECEIVED: frozenset({State.CLASSIFIED}) | _STOP,
    State.CLASSIFIED: frozenset({State.NOT_ACTIONABLE, State.REPRODUCING, State.MAPPED}) | _STOP,
    State.REPRODUCING: frozenset({State.MAPPED}) | _STOP,
    State.MAPPED: frozenset({State.EXPLORING}) | _STOP,
    State.EXPLORING: frozenset({State.DEEP_DIVE, State.REPORTING}) | _STOP,
    State.DEEP_DIVE: frozenset({State.REPORTING}) | _STOP,
    State.REPORTING: frozenset({State.STRUCTURING}) | _STOP,
    State.STRUCTURING: frozenset({State.GROUNDING}) | _STOP,
    State.GROUNDING: frozenset({State.TESTING, State.COMPLETE}) | _STOP,
    State.TESTING: frozenset({State.COMPLETE}) | _STOP,
}
"""Every allowed transition; anything else is a bug and raises. Terminal states have none."""


class Event(BaseModel):
    """One step of a run, as stored and streamed: `event.model_dump(mode="json")`."""

    model_config = ConfigDict(frozen=True)

    seq: int
    """0, 1, 2… per run, strictly increasing: the order the sink received them."""
    time: AwareDatetime
    """When (UTC)."""
    at: float
    """Seconds since the run started."""
    state: State
    """The run's state: the one entered, or the one it was in (for a tool call, a note)."""
    detail: str = ""
    job_id: str | None = None
    """The caller's id for the run (`diagnose_async(..., job_id=…)`), on every event."""
    usage: Annotated[Usage | None, Field(exclude_if=lambda value: value is None)] = None
    """On a usage note (after the explorer, after the formatter): what that step's
    models used; its `detail` says it in words, with the cost."""


Sink = Callable[[Event], None]


class Recorder:
    """One run's state and events; create it on the loop that runs the pipeline."""

    def __init__(self, sink: Sink | None, job_id: str | None = None) -> None:
        self.loop = asyncio.get_running_loop()
        self.thread = threading.get_ident()
        self.sink, self.job_id = sink, job_id
        self.state = State.RECEIVED
        self.started = self.entered = time.monotonic()
        self.events: list[Event] = []
        self.durations: dict[str, float] = {}
        """Seconds spent in each state left so far (for the Finding's provenance)."""
        self.emit(State.RECEIVED, "")

    @property
    def finished(self) -> bool:
        return self.state in TERMINAL

    def emit(self, state: State, detail: str, usage: Usage | None = None) -> None:
        """Record and deliver one event (on the loop thread only; see `soon`)."""
        if threading.get_ident() != self.thread:
            raise RuntimeError("events are emitted on the run's loop thread; use soon()")
        event = Event(
            seq=len(self.events), time=datetime.now(UTC),
            at=round(time.monotonic() - self.started, 4), state=state, detail=detail,
            job_id=self.job_id, usage=usage,
        )  # fmt: skip
        self.events.append(event)
        if self.sink:
            self.sink(event)

    def note(self, detail: str, usage: Usage | None = None) -> None:
        """An event in the current state (a tool call, a change of plan, a step's usage)."""
        self.emit(self.state, detail, usage)

    def move(self, state: State, detail: str = "") -> None:
        if state not in TRANSITIONS.get(self.state, frozenset()):
            raise RuntimeError(f"illegal transition {self.state} → {state}")
        now = time.monotonic()
        self.durations[self.state.value] = round(now - self.entered, 4)
        self.state, self.entered = state, now
        self.emit(state, detail)

    def soon(self, call: Callable[..., None], *args: Any) -> None:
        """`call(*args)` on the loop thread: at once from there, else handed over in order.
        Dropped once the run has ended (a thread a timeout abandoned, a closed loop)."""
        if threading.get_ident() == self.thread:
            self._deliver(call, args)
            return
        with contextlib.suppress(RuntimeError):  # the loop is closed: the run is long over
            self.loop.call_soon_threadsafe(self._deliver, call, args)

    def _deliver(self, call: Callable[..., None], args: tuple[Any, ...]) -> None:
        if not self.finished:
            call(*args)
