"""`GET /jobs/{id}` and its events (JSON, or a live `text/event-stream`)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Header, Path, Request
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from api.backpressure import SlotStream
from api.deps import CALLER_RESPONSES, Caller, ServiceDep
from api.schemas import TERMINAL, EventOut, JobOut
from api.service import Service

router = APIRouter(prefix="/jobs", tags=["jobs"], responses=CALLER_RESPONSES)
STREAM_POLL_SECONDS = 0.2
KEEPALIVE_SECONDS = 15.0
"""A comment line this often keeps proxies from closing a quiet stream."""
EVENT_STREAM = "text/event-stream"
JobId = Annotated[str, Path(max_length=64)]
RETRY_AFTER = {"Retry-After": {"description": "seconds", "schema": {"type": "integer"}}}


@router.get("/{job_id}", response_model=JobOut, responses={404: {"description": "no such job"}})
async def get_job(job_id: JobId, service: ServiceDep, _caller: Caller) -> JobOut:
    """A job: its state, timestamps, reason, Finding id and occurrences."""
    return await run_in_threadpool(service.job, job_id)


@router.get(
    "/{job_id}/events",
    response_model=list[EventOut],
    responses={
        200: {"content": {EVENT_STREAM: {"schema": {"type": "string"}}}},
        404: {"description": "no such job"},
        429: {"description": "too many live streams of this job", "headers": RETRY_AFTER},
        503: {"description": "too many live streams in all", "headers": RETRY_AFTER},
    },
)
async def get_events(
    job_id: JobId,
    request: Request,
    service: ServiceDep,
    _caller: Caller,
    last_event_id: Annotated[int | None, Header(include_in_schema=False)] = None,
) -> list[EventOut] | StreamingResponse:
    """The pipeline's events so far; with `Accept: text/event-stream`, streamed live
    until the job ends (resumes after `Last-Event-ID`; capped per job and in all,
    `api/backpressure.py`)."""
    await run_in_threadpool(service.job, job_id)  # 404 before any stream starts
    if EVENT_STREAM in request.headers.get("accept", ""):
        after = last_event_id if last_event_id is not None else -1
        return SlotStream(
            _stream(service, job_id, after, request), media_type=EVENT_STREAM,
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
            slot=service.backpressure.open_stream(job_id),
        )  # fmt: skip
    return await run_in_threadpool(service.store.events, job_id)


async def _stream(
    service: Service, job_id: str, after: int, request: Request
) -> AsyncIterator[str]:
    quiet = 0.0
    while not await request.is_disconnected():
        events = await run_in_threadpool(service.store.events, job_id, after=after)
        for event in events:
            after = event.seq
            data = json.dumps(event.model_dump(mode="json"))
            yield f"id: {event.seq}\nevent: {event.state}\ndata: {data}\n\n"
        if not events:
            job = await run_in_threadpool(service.job, job_id)
            if job.state in TERMINAL:
                yield f"event: end\ndata: {json.dumps({'state': job.state.value})}\n\n"
                return
            quiet += STREAM_POLL_SECONDS
            if quiet >= KEEPALIVE_SECONDS:
                quiet = 0.0
                yield ": keep-alive\n\n"
        else:
            quiet = 0.0
        await asyncio.sleep(STREAM_POLL_SECONDS)
