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
    address = request.client.host if request.client else "unknown"
    authorization = f"Bearer {bearer.credentials}" if bearer else None
    return service.guard.check(authorization=authorization, api_key=x_api_key, address=address)


Caller = Annotated[str, Depends(authorised)]
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
