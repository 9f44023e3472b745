"""Backpressure: new work is refused while the queue is full, and live event streams are
capped, so a flood of reports or watchers cannot outgrow what the workers drain.

Queue depth is the number of `queued` jobs (`Store.job_counts`), read at most once every
`DEPTH_CACHE_SECONDS` per process — a request reads the cached figure, so the check
costs one query a second, not one per request, and may lag the truth by that second.
Past `DIAGNOSER_MAX_QUEUED_JOBS`, `POST /diagnose` answers 503 + `Retry-After` before
its body is read (nothing stored; the key was checked first). Webhooks, after their
signature or token is checked (a caller without the secret learns nothing of the
queue), per route, by what their sender does with a 5xx:

| route | sender retries a 5xx? | past the limit |
|---|---|---|
| `rollbar` | yes: ×10 unless 200/201/202/204 in 3 s (WEBHOOKS.md) | 503 |
| `standard` | yes: Svix, the reference sender, 7 times over ~27 h (docs.svix.com) | 503 |
| `github` | no: "GitHub does not automatically redeliver" (GitHub docs) | stored anyway |
| `sentry` | not documented (WEBHOOKS.md says nothing) | stored anyway |
| `bugsnag` | not documented | stored anyway |
| `reviews` | a relay or poll our users run: unknown | stored anyway |

A sender that retries loses nothing by a 503: it comes back when the queue has room. One
that never retries would lose the delivery for good, so it is taken past the limit — it
is signed, deduplicated by delivery id and rate-limited per address and route
(`Guard.admit_webhook`), so the overshoot is bounded by what real senders send.

Event streams (`GET /jobs/{id}/events` as `text/event-stream`) each poll the database
five times a second; issue 23 measured 200 on one job at 96% of a core. Past
`MAX_STREAMS_PER_JOB` on one job: 429; past `MAX_STREAMS` in the process: 503.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from starlette.concurrency import run_in_threadpool
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from api.errors import ApiError

DEPTH_CACHE_SECONDS = 1.0
"""How long one read of the queue depth serves every request (see the docstring)."""
QUEUE_FULL_RETRY_SECONDS = 30
"""`Retry-After` of a 503 for a full queue: the queue drains jobs in seconds each, so a
retry half a minute later finds room unless the flood goes on."""
RETRYING_SENDERS = frozenset({"rollbar", "standard"})
"""Webhook routes whose sender retries a 5xx: they get 503 past the queue limit."""
MAX_STREAMS_PER_JOB = 4
"""A person's browser tab, a CLI and a dashboard or two; more on one job is a loop."""
MAX_STREAMS = 32
"""Per process: ~0.5% of a core each (issue 23: 200 streams, 96%), so ~15% in all."""
STREAM_RETRY_SECONDS = 10
"""`Retry-After` for a refused stream: plain `GET /jobs/{id}` works meanwhile."""


@dataclass
class Backpressure:
    """The queue-depth check and the event-stream slots of one process."""

    job_counts: Callable[[], Mapping[str, int]]
    max_queued: int
    clock: Callable[[], float] = time.monotonic
    _depth: tuple[float, int] | None = None
    _streams: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    async def admit(self) -> None:
        """503 + Retry-After when the queue holds `max_queued` jobs or more."""
        depth = self._cached()
        self._refuse_when_full(await run_in_threadpool(self._read) if depth is None else depth)

    def admit_delivery(self, route: str) -> None:
        """`admit` for a verified delivery of a sender that retries (a sender that never
        does is always let in); in a worker thread, after the signature check, so a
        caller without the secret learns nothing of the queue."""
        if route in RETRYING_SENDERS:
            depth = self._cached()
            self._refuse_when_full(self._read() if depth is None else depth)

    def _cached(self) -> int | None:
        """Jobs queued, when read less than `DEPTH_CACHE_SECONDS` ago."""
        cached = self._depth
        if cached is not None and self.clock() - cached[0] < DEPTH_CACHE_SECONDS:
            return cached[1]
        return None

    def _read(self) -> int:
        depth = int(self.job_counts().get("queued", 0))
        self._depth = (self.clock(), depth)
        return depth

    def _refuse_when_full(self, depth: int) -> None:
        if depth >= self.max_queued:
            raise ApiError(
                503, f"the queue is full ({depth:,} jobs waiting, limit {self.max_queued:,}); "
                f"retry in {QUEUE_FULL_RETRY_SECONDS} s",
                headers={"Retry-After": str(QUEUE_FULL_RETRY_SECONDS)},
            )  # fmt: skip

    def open_stream(self, job_id: str) -> StreamSlot:
        """A slot for one live stream of `job_id`; 429/503 past the caps."""
        with self._lock:
            if self._streams.get(job_id, 0) >= MAX_STREAMS_PER_JOB:
                raise _stream_refused(429, f"{MAX_STREAMS_PER_JOB} live streams of this job")
            if sum(self._streams.values()) >= MAX_STREAMS:
                raise _stream_refused(503, f"{MAX_STREAMS} live event streams")
            self._streams[job_id] = self._streams.get(job_id, 0) + 1
        return StreamSlot(self, job_id)

    def streams(self, job_id: str | None = None) -> int:
        with self._lock:
            return self._streams.get(job_id, 0) if job_id else sum(self._streams.values())

    def _close_stream(self, job_id: str) -> None:
        with self._lock:
            left = self._streams.get(job_id, 0) - 1
            if left > 0:
                self._streams[job_id] = left
            else:
                self._streams.pop(job_id, None)


@dataclass
class StreamSlot:
    """One open stream; `close` is idempotent."""

    owner: Backpressure
    job_id: str
    closed: bool = False

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.owner._close_stream(self.job_id)


class SlotStream(StreamingResponse):
    """A StreamingResponse that gives its slot back however it ends: finished, client
    gone, or cancelled before the first byte (a generator never started runs no
    `finally`, so the slot is closed here, around the whole response)."""

    def __init__(self, *args: object, slot: StreamSlot, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.slot = slot

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.slot.close()


def _stream_refused(status: int, what: str) -> ApiError:
    return ApiError(
        status, f"too many event streams: {what} already; poll GET /jobs/{{id}} or retry "
        f"in {STREAM_RETRY_SECONDS} s", headers={"Retry-After": str(STREAM_RETRY_SECONDS)},
    )  # fmt: skip
