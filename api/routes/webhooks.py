"""Webhooks: each answers within a second — the body is verified over its raw bytes,
stored, and queued; intake runs in the job. A replayed delivery id gets its first job;
an event we do not act on gets a 200 saying it was ignored."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from api.auth import FAILURE_STATUSES, PROBE_STATUSES
from api.deps import ServiceDep, client_address, read_body
from api.schemas import WebhookAck, sample
from diagnoser.constants import MAX_PAYLOAD_BYTES

router = APIRouter(prefix="/webhooks", tags=["webhooks"])
RESPONSES: dict[int | str, dict[str, object]] = {
    200: {"model": WebhookAck, "description": "ignored, or a replayed delivery"},
    202: {"model": WebhookAck, "description": "stored and queued"},
    400: {"description": "the Content-Length header is not a number"},
    401: {"description": "the signature or token does not match"},
    403: {"description": "this webhook is not configured"},
    404: {"description": "no such repo"},
    413: {"description": "the body is over the size limit"},
    429: {
        "description": "this address's delivery limit, or too many failed signatures",
        "headers": {"Retry-After": {"description": "seconds", "schema": {"type": "integer"}}},
    },
    503: {
        "description": "the queue is full (senders that retry: Rollbar, Standard Webhooks)",
        "headers": {"Retry-After": {"description": "seconds", "schema": {"type": "integer"}}},
    },
}
Repo = Annotated[str | None, Query(max_length=64, description="a configured repo")]
Token = Annotated[str, Path(max_length=256)]


async def _deliver(
    request: Request, service: ServiceDep, route: str, repo: str | None, token: str | None = None
) -> JSONResponse:
    address = client_address(request)
    service.guard.admit_webhook(route, address)  # before the body is read
    probes = FAILURE_STATUSES if service.guard.open else PROBE_STATUSES
    with service.guard.counting_failures(address, probes):  # bad signature, token, repo
        name = service.repo(repo, reveal=service.guard.open)
        body = await read_body(request, MAX_PAYLOAD_BYTES)
        status, ack = await run_in_threadpool(
            lambda: service.deliver(
                route, repo=name, headers=request.headers, body=body, token=token
            )
        )
    return JSONResponse(ack.model_dump(mode="json"), status_code=status)


def _body(sample_name: str | None = None) -> dict[str, Any]:
    """The raw JSON body a provider sends (read by hand, so declared here), with a real
    delivery from `sample_reports/` as its example when there is one."""
    media: dict[str, Any] = {"schema": {"type": "object"}}
    if sample_name:
        media["example"] = json.loads(sample(sample_name))
    return {"requestBody": {"required": True, "content": {"application/json": media}}}


@router.post(
    "/sentry", status_code=202, response_model=WebhookAck, responses=RESPONSES,
    openapi_extra=_body("sentry_event_alert_share.json"),
)  # fmt: skip
async def sentry(request: Request, service: ServiceDep, repo: Repo = None) -> JSONResponse:
    """Sentry integration webhooks (`Sentry-Hook-Signature`, deduplicated by `Request-ID`)."""
    return await _deliver(request, service, "sentry", repo)


@router.post(
    "/github", status_code=202, response_model=WebhookAck, responses=RESPONSES,
    openapi_extra=_body("github_issue_opened_share_expiry.json"),
)  # fmt: skip
async def github(request: Request, service: ServiceDep, repo: Repo = None) -> JSONResponse:
    """GitHub `issues` events (`X-Hub-Signature-256`, deduplicated by `X-GitHub-Delivery`)."""
    return await _deliver(request, service, "github", repo)


@router.post(
    "/standard", status_code=202, response_model=WebhookAck, responses=RESPONSES,
    openapi_extra=_body(),
)  # fmt: skip
async def standard(request: Request, service: ServiceDep, repo: Repo = None) -> JSONResponse:
    """Standard Webhooks (`webhook-signature` within ±5 min, deduplicated by `webhook-id`)."""
    return await _deliver(request, service, "standard", repo)


@router.post(
    "/bugsnag/{token}", status_code=202, response_model=WebhookAck, responses=RESPONSES,
    openapi_extra=_body(),
)  # fmt: skip
async def bugsnag(
    token: Token, request: Request, service: ServiceDep, repo: Repo = None
) -> JSONResponse:
    """Bugsnag / Insight Hub error webhooks, authenticated by the URL token."""
    return await _deliver(request, service, "bugsnag", repo, token)


@router.post(
    "/rollbar/{token}", status_code=202, response_model=WebhookAck, responses=RESPONSES,
    openapi_extra=_body(),
)  # fmt: skip
async def rollbar(
    token: Token, request: Request, service: ServiceDep, repo: Repo = None
) -> JSONResponse:
    """Rollbar item webhooks, authenticated by the URL token."""
    return await _deliver(request, service, "rollbar", repo, token)


@router.post(
    "/reviews", status_code=202, response_model=WebhookAck, responses=RESPONSES,
    openapi_extra=_body("google_play_review_freeze_de.json"),
)  # fmt: skip
async def reviews(
    request: Request,
    service: ServiceDep,
    token: Annotated[str, Query(max_length=256, description="DIAGNOSER_WEBHOOK_TOKEN")],
    repo: Repo = None,
) -> JSONResponse:
    """App reviews: AppFollow / Slack-style `{"text": …}`, or a Google Play or App Store
    Connect reviews poll; authenticated by `?token=`."""
    return await _deliver(request, service, "reviews", repo, token)
