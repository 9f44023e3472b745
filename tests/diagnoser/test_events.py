"""The run's recorder: numbered events, one transition table, delivery on the loop thread."""

from __future__ import annotations

import asyncio
import threading
from datetime import timedelta

import pytest

from diagnoser.events import Event, Recorder, State


def test_events_are_numbered_in_the_order_the_sink_receives_them() -> None:
    seen: list[Event] = []

    async def run() -> Recorder:
        recorder = Recorder(seen.append, job_id="j")
        recorder.move(State.CLASSIFIED, "crash")
        recorder.note("a note")
        return recorder

    recorder = asyncio.run(run())
    assert seen == recorder.events
    assert [(e.seq, e.state, e.detail) for e in seen] == [
        (0, State.RECEIVED, ""),
        (1, State.CLASSIFIED, "crash"),
        (2, State.CLASSIFIED, "a note"),
    ]
    assert all(e.job_id == "j" and e.time.utcoffset() == timedelta(0) for e in seen)


def test_a_call_from_a_worker_thread_is_delivered_on_the_loop_thread_in_order() -> None:
    threads: list[int] = []

    async def run() -> tuple[Recorder, int]:
        recorder = Recorder(lambda _: threads.append(threading.get_ident()))

        def worker() -> None:
            recorder.soon(recorder.move, State.CLASSIFIED, "from a thread")
            recorder.soon(recorder.note, "then this")

        await asyncio.to_thread(worker)  # its handovers are queued before its completion
        return recorder, threading.get_ident()

    recorder, loop_thread = asyncio.run(run())
    assert [e.detail for e in recorder.events] == ["", "from a thread", "then this"]
    assert set(threads) == {loop_thread}


def test_emitting_off_the_loop_thread_is_refused() -> None:
    async def run() -> None:
        recorder = Recorder(None)
        with pytest.raises(RuntimeError, match="use soon"):
            await asyncio.to_thread(recorder.note, "wrong thread")

    asyncio.run(run())


def test_nothing_is_delivered_after_the_run_ended() -> None:
    async def run() -> Recorder:
        recorder = Recorder(None)
        recorder.move(State.TIMED_OUT, "too slow")
        await asyncio.to_thread(recorder.soon, recorder.note, "an abandoned tool finished")
        await asyncio.sleep(0)  # let the handed-over call run (and be dropped)
        return recorder

    recorder = asyncio.run(run())
    assert [e.state for e in recorder.events] == [State.RECEIVED, State.TIMED_OUT]


def test_a_transition_not_in_the_table_raises() -> None:
    async def run() -> None:
        recorder = Recorder(None)
        with pytest.raises(RuntimeError, match="illegal transition"):
            recorder.move(State.COMPLETE)

    asyncio.run(run())
