"""`GET /findings` (filtered, newest first, cursor pages), `GET /findings/{id}` as
JSON, Markdown (`Accept: text/markdown` or `?format=markdown`) or SARIF (`?format=sarif`),
and `GET /findings/{id}/logs/{ref}`: a sandboxed run's log (`--verify`)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import PlainTextResponse, Response
from pydantic import BeforeValidator
from starlette.concurrency import run_in_threadpool

from api.deps import CALLER_RESPONSES, Caller, ServiceDep
from api.errors import ApiError
from api.schemas import FindingOut, FindingPage
from diagnoser.render import to_markdown, to_sarif_json

router = APIRouter(prefix="/findings", tags=["findings"], responses=CALLER_RESPONSES)
MARKDOWN = "text/markdown"
SARIF = "application/sarif+json"
LOG_REF = "^[0-9a-f]{16}$"
"""A run log's reference (`diagnoser.verify.logs.REF_PATTERN`)."""


class Format(StrEnum):
    JSON = "json"
    MARKDOWN = "markdown"
    SARIF = "sarif"


def _date_time(value: object) -> object:
    """An ISO 8601 date-time with its UTC offset, as the spec says (`format: date-time`);
    pydantic alone would also take a number of seconds, or a naive time."""
    if not isinstance(value, str):
        return value
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        raise ValueError("use an ISO 8601 date-time with its offset: 2024-05-01T00:00:00Z")
    return parsed


@router.get("", response_model=FindingPage, responses={400: {"description": "bad cursor"}})
async def list_findings(  # noqa: PLR0917 (FastAPI passes query parameters by keyword)
    service: ServiceDep,
    _caller: Caller,
    repo: Annotated[str | None, Query(max_length=64)] = None,
    classification: Annotated[str | None, Query(max_length=32)] = None,
    status: Annotated[
        str | None,
        Query(
            max_length=32,
            description="`grounded`, `partially_grounded` or `ungrounded` (the legacy "
            "`verified`, `partially_verified`, `unverified` are read as these)",
        ),
    ] = None,
    since: Annotated[
        datetime | None,
        BeforeValidator(_date_time),
        Query(description="only findings from then on (`2024-05-01T00:00:00Z`)"),
    ] = None,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> FindingPage:
    """Findings, newest first; pass `next_cursor` back as `cursor` for the next page."""
    try:
        return await run_in_threadpool(
            service.store.findings, repo=repo, classification=classification, status=status,
            since=since, cursor=cursor, limit=limit,
        )  # fmt: skip
    except ValueError as exc:
        raise ApiError(400, str(exc)) from None


@router.get(
    "/{finding_id}",
    response_model=FindingOut,
    responses={
        200: {
            "content": {
                MARKDOWN: {"schema": {"type": "string"}},
                SARIF: {"schema": {"type": "object"}},
            }
        },
        404: {"description": "no such finding"},
    },
)
async def get_finding(
    finding_id: Annotated[str, Path(max_length=64)],
    request: Request,
    service: ServiceDep,
    _caller: Caller,
    format: Annotated[Format | None, Query()] = None,
) -> FindingOut | Response:
    """One Finding: JSON by default, Markdown or SARIF on request."""
    found = await run_in_threadpool(service.store.finding, finding_id)
    if found is None:
        raise ApiError(404, f"no finding {finding_id}")
    summary, finding = found
    wanted = format or (Format.MARKDOWN if MARKDOWN in request.headers.get("accept", "") else None)
    if wanted is Format.MARKDOWN:
        return Response(to_markdown(finding), media_type=f"{MARKDOWN}; charset=utf-8")
    if wanted is Format.SARIF:
        return Response(to_sarif_json(finding), media_type=SARIF)
    return FindingOut(**summary.model_dump(), finding=finding)


@router.get(
    "/{finding_id}/logs/{ref}",
    response_class=PlainTextResponse,
    responses={
        200: {"content": {"text/plain": {"schema": {"type": "string"}}}},
        404: {"description": "no such finding or no such log of it"},
    },
)
async def get_run_log(
    finding_id: Annotated[str, Path(max_length=64)],
    ref: Annotated[
        str, Path(pattern=LOG_REF, description="`reproduction.log` or a change's `tested.log`")
    ],
    service: ServiceDep,
    _caller: Caller,
) -> PlainTextResponse:
    """A sandboxed run's command and output (`--verify`), by the reference its Finding
    carries."""
    text = await run_in_threadpool(service.store.run_log, finding_id, ref)
    if text is None:
        raise ApiError(404, f"no run log {ref} for finding {finding_id}")
    return PlainTextResponse(text)
