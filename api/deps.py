"""Route dependencies: the service, the caller's key check, and bodies read within a limit."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from api.errors import ApiError
from api.service import Service
from diagnoser.intake import PayloadTooLarge


async def get_service(request: Request) -> Service:
    """Async, though it awaits nothing: FastAPI runs a plain `def` dependency in a
    worker thread, a thread hop per request for an attribute read."""
    service: Service = request.app.state.service
    return service


ServiceDep = Annotated[Service, Depends(get_service)]


BEARER = HTTPBearer(auto_error=False, description="an API key (DIAGNOSER_API_KEYS)")
API_KEY = APIKeyHeader(
    name="X-API-Key", auto_error=False, description="an API key (DIAGNOSER_API_KEYS)"
)
"""Declared as security schemes, so the spec says how to authenticate and Swagger UI has
an Authorize button; the check itself is `Guard.check`'s."""


async def authorised(
    request: Request,
    service: ServiceDep,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)] = None,
    x_api_key: Annotated[str | None, Depends(API_KEY)] = None,
) -> str:
    """The caller's identity (key digest or address) after the key and rate checks."""
    authorization = f"Bearer {bearer.credentials}" if bearer else None
    return service.guard.check(
        authorization=authorization, api_key=x_api_key, address=client_address(request)
    )


def client_address(request: Request) -> str:
    """The peer's address, as the server saw it (forwarded headers are the server's job)."""
    return request.client.host if request.client else "unknown"


Caller = Annotated[str, Depends(authorised)]


async def identified(
    request: Request,
    service: ServiceDep,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)] = None,
    x_api_key: Annotated[str | None, Depends(API_KEY)] = None,
) -> bool:
    """Whether the caller may see details: True with no keys configured or a valid key,
    False when it sent no key; a wrong key is refused (401, counted) as anywhere."""
    if service.guard.open:
        return True
    if bearer is None and x_api_key is None:
        return False
    await authorised(request, service, bearer, x_api_key)
    return True


Identified = Annotated[bool, Depends(identified)]


async def metrics_reader(
    request: Request,
    service: ServiceDep,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)] = None,
    x_api_key: Annotated[str | None, Depends(API_KEY)] = None,
) -> None:
    """`Caller`, unless `DIAGNOSER_METRICS_PUBLIC` (or no keys) lets everyone scrape."""
    if not (service.settings.metrics_public or service.guard.open):
        await authorised(request, service, bearer, x_api_key)


MetricsReader = Depends(metrics_reader)
CALLER_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: {"description": "an API key is required, or the one sent is not valid"},
    429: {
        "description": "this caller's rate limit is reached",
        "headers": {"Retry-After": {"description": "seconds", "schema": {"type": "integer"}}},
    },
}
"""What `Caller` may answer instead of the route: `responses=` of every router using it."""


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body if it is at most `limit` bytes; else 413, having read no more."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isascii() or not declared.isdigit():
            raise ApiError(400, "Content-Length is not a number")
        if int(declared) > limit:
            raise PayloadTooLarge(f"the body is larger than {limit:,} bytes", limit=limit)
    chunks: list[bytes] = []
    total = 0
    async for chunk in request.stream():
        total += len(chunk)
        if total > limit:
            raise PayloadTooLarge(f"the body is larger than {limit:,} bytes", limit=limit)
        chunks.append(chunk)
    return b"".join(chunks)
