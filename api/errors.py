"""The service's errors and the one place every error becomes a status code.

    DiagnoserError (diagnoser)        the domain's, mapped by `STATUS` below
    ApiError                          a request we refuse: its status and message
    RequestValidationError (FastAPI)  422, the message names each field to fix
    ClientDisconnect (Starlette)      the client left mid-body: 499 (408 when the body
                                      timeout cut it off), one log line
    anything else                     500 `INTERNAL_ERROR`, logged, never a traceback

Every answer is `{"detail": "…"}` (`Problem`): one line saying what went wrong and what
to change; `document` makes the OpenAPI spec say so.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect

from api.schemas import Problem
from api.server import BODY_TIMED_OUT, SERVER_LOG
from diagnoser import ConfigError, DiagnoserError, PathRefused, ToolError
from diagnoser.errors import UnknownRepo
from diagnoser.intake import IntakeError, PayloadTooLarge

log = logging.getLogger(__name__)
connections = logging.getLogger(SERVER_LOG)
"""Where a client that left is said: uvicorn's log, as the server's own events."""

STATUS: tuple[tuple[type[DiagnoserError], int], ...] = (
    (PayloadTooLarge, 413),
    (IntakeError, 400),
    (UnknownRepo, 404),
    (PathRefused, 400),
    (ToolError, 400),
    (ConfigError, 500),
)
"""Most specific first."""
INTERNAL_ERROR = "internal error; try again or tell the operator"
"""The answer to an unexpected error. It promises nothing about the request's input: the
failure may have come before it was stored (a 500 once said "nothing was lost" there)."""
MAX_DETAILS = 5
"""Validation problems listed in one message."""
PROBLEM_REF = "#/components/schemas/Problem"
CLIENT_CLOSED = 499
"""nginx's status for a client that closed the connection before the answer: no one reads
it, but the metrics count it apart from the server's own errors (500)."""
FASTAPI_ERROR_SCHEMAS = ("HTTPValidationError", "ValidationError")
"""FastAPI's own 422 body (a list of errors), which this service never sends."""


class ApiError(Exception):
    """A refusal with its status: 401, 403, 404, 409, 422, 429…"""

    def __init__(self, status: int, detail: str, *, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status, self.detail, self.headers = status, detail, headers


def document(schema: dict[str, Any]) -> None:
    """Make every 4xx and 5xx answer in the OpenAPI `schema` a `Problem`, as it is."""
    for path in schema.get("paths", {}).values():
        for operation in path.values():
            for code, response in operation.get("responses", {}).items():
                if str(code)[:1] in ("4", "5"):
                    response["content"] = {"application/json": {"schema": {"$ref": PROBLEM_REF}}}
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    for name in FASTAPI_ERROR_SCHEMAS:
        components.pop(name, None)
    components["Problem"] = Problem.model_json_schema()


def status_of(error: DiagnoserError) -> int:
    return next((code for kind, code in STATUS if isinstance(error, kind)), 400)


def install(app: FastAPI) -> None:
    """Register the handlers on `app`."""
    app.add_exception_handler(ApiError, _api_error)  # type: ignore[arg-type]
    app.add_exception_handler(DiagnoserError, _domain_error)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, _invalid)  # type: ignore[arg-type]
    app.add_exception_handler(HTTPException, _http_error)  # type: ignore[arg-type]
    app.add_exception_handler(ClientDisconnect, _client_left)  # type: ignore[arg-type]
    app.add_exception_handler(Exception, _unexpected)


def problem(status: int, detail: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status, headers=headers)


async def _api_error(_request: Request, exc: ApiError) -> JSONResponse:
    return problem(exc.status, exc.detail, exc.headers)


async def _domain_error(_request: Request, exc: DiagnoserError) -> JSONResponse:
    status = status_of(exc)
    if status >= 500:
        log.error("configuration error while serving: %s", exc)
    return problem(status, str(exc))


async def _invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
    return problem(422, describe(exc.errors()))


def describe(errors: object) -> str:
    """Validation errors as one line: `body.report.text: Field required; …`."""
    items = list(errors) if isinstance(errors, list | tuple) else []
    parts = []
    for error in items[:MAX_DETAILS]:
        where = ".".join(str(part) for part in error.get("loc", ()))
        parts.append(f"{where}: {error.get('msg', 'invalid')}" if where else error.get("msg", ""))
    more = f" (and {len(items) - MAX_DETAILS} more)" if len(items) > MAX_DETAILS else ""
    return "; ".join(parts) + more if parts else "the request is not valid"


async def _http_error(_request: Request, exc: HTTPException) -> JSONResponse:
    detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
    return problem(exc.status_code, detail, getattr(exc, "headers", None))


async def _client_left(request: Request, _exc: ClientDisconnect) -> JSONResponse:
    """A normal event (a closed laptop, a sender's timeout) or the body timeout: one line."""
    client = request.client.host if request.client else "a client"
    where = f"{request.method} {request.url.path}"
    if request.scope.get(BODY_TIMED_OUT):
        connections.info("%s from %s: the body timeout cut the request off (408)", where, client)
        return problem(408, "the request body took too long")
    connections.info("%s from %s: the client left before the whole body (499)", where, client)
    return problem(CLIENT_CLOSED, "the client closed the connection before the whole body")


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unexpected error on %s %s", request.method, request.url.path)
    return problem(500, INTERNAL_ERROR)
