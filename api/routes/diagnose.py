"""`POST /diagnose`: a report (JSON or plain text) → a queued job, or the job already
answering an identical report; `?wait=` waits for the Finding."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from api.deps import CALLER_RESPONSES, Caller, ServiceDep, read_body
from api.errors import ApiError, describe
from api.schemas import (
    REPO_DESCRIPTION,
    TERMINAL,
    Accepted,
    DiagnoseIn,
    JobDone,
    diagnose_examples,
)
from api.service import Service
from diagnoser import ReportIn
from diagnoser.constants import MAX_PAYLOAD_BYTES, MAX_REPORT_BYTES
from diagnoser.intake import IntakeError
from diagnoser.intake.report import Source

router = APIRouter(tags=["diagnose"], responses=CALLER_RESPONSES)
WAIT_POLL_SECONDS = 0.1
TEXT_TYPES = ("text/plain",)

OPENAPI_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {"$ref": "#/components/schemas/DiagnoseIn"},
                "examples": diagnose_examples(),
            },
            "text/plain": {
                # Not blank: a body of whitespace only is a 422 (`_parse`).
                "schema": {"type": "string", "pattern": r"\S"},
                "example": "Traceback (most recent call last):\n"
                '  File "backend/jotter/api/notes.py", line 41, in list_notes\n'
                "    return paginate(notes, page)\nIndexError: list index out of range\n",
            },
        },
    }
}


@router.post(
    "/diagnose",
    status_code=202,
    response_model=Accepted,
    responses={
        200: {"model": JobDone, "description": "the job ended within `wait` seconds"},
        400: {"description": "the text/plain body is not UTF-8"},
        404: {"description": "no such repo"},
        413: {"description": "the body is over the size limit"},
        415: {"description": "the body is neither application/json nor text/plain"},
        422: {
            "description": "the report is not valid, or it names no repo while several "
            "are configured; the message says what to fix"
        },
        503: {
            "description": "the queue is full (`DIAGNOSER_MAX_QUEUED_JOBS`); nothing stored",
            "headers": {"Retry-After": {"description": "seconds", "schema": {"type": "integer"}}},
        },
    },
    openapi_extra=OPENAPI_BODY,
)
async def diagnose(
    request: Request,
    response: Response,
    service: ServiceDep,
    _caller: Caller,
    repo: Annotated[str | None, Query(max_length=64, description=REPO_DESCRIPTION)] = None,
    wait: Annotated[
        float, Query(ge=0, le=600, description="seconds to wait for the Finding (capped)")
    ] = 0,
) -> Any:
    """Diagnose a report: JSON `{"repo", "report": ReportIn}`, or a `text/plain` body with
    `?repo=`. Answers 202 with the job; an identical report (same repo and fingerprint)
    while its job runs, or within the dedupe window after, gets that job (`attached`)."""
    await service.backpressure.admit()  # before the body is read
    name, report = await _parse(request, repo, service)
    accepted = await run_in_threadpool(service.submit, service.repo(name), report)
    done = await _wait(service, accepted.job_id, min(wait, service.settings.max_wait_seconds))
    if done is not None:
        return JSONResponse(done.model_dump(mode="json"), status_code=200)
    response.headers["Location"] = accepted.status_url
    return accepted


async def _parse(
    request: Request, repo: str | None, service: Service
) -> tuple[str | None, ReportIn]:
    kind = request.headers.get("content-type", "application/json").split(";")[0].strip().lower()
    if kind in TEXT_TYPES:
        raw = await read_body(request, MAX_REPORT_BYTES)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise IntakeError("the text/plain body is not UTF-8") from None
        if not text.strip():
            raise ApiError(422, "the body is empty: send the crash log or report text")
        return repo, ReportIn(text=text, source=Source.BUG_REPORT)
    if kind != "application/json":
        raise ApiError(415, 'send application/json ({"report": {…}}) or text/plain')
    raw = await read_body(request, MAX_PAYLOAD_BYTES)
    try:
        body = DiagnoseIn.model_validate_json(raw)
    except ValidationError as exc:
        raise ApiError(422, describe(exc.errors(include_url=False))) from None
    if body.repo and repo and body.repo != repo:
        service.repo(repo), service.repo(body.repo)  # a name not configured: 404 first
        raise ApiError(422, f"repo {body.repo!r} in the body and {repo!r} in the query differ")
    return body.repo or repo, body.report


async def _wait(service: Service, job_id: str, seconds: float) -> JobDone | None:
    """The job with its Finding if it ends within `seconds`, else None."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while seconds > 0:
        job = await run_in_threadpool(service.job, job_id)
        if job.state in TERMINAL:
            finding = None
            if job.finding_id:
                found = await run_in_threadpool(service.store.finding, job.finding_id)
                finding = found[1] if found else None
            return JobDone(**job.model_dump(), finding=finding)
        if loop.time() >= deadline:
            return None
        await asyncio.sleep(WAIT_POLL_SECONDS)
    return None
