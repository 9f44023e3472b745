"""`/healthz` (the process answers), `/readyz` (repos indexed, database reachable) and
`/metrics` (Prometheus).

With `DIAGNOSER_API_KEYS` set: `/healthz` stays open; `/readyz` tells a caller without a
key only whether the service is ready (200/503), no repo names; `/metrics` wants a key
unless `DIAGNOSER_METRICS_PUBLIC`. With no keys (127.0.0.1 only) all three are open."""

from __future__ import annotations

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse
from sqlalchemy import text
from starlette.concurrency import run_in_threadpool

from api.deps import CALLER_RESPONSES, Identified, MetricsReader, ServiceDep
from api.metrics import CONTENT_TYPE
from api.service import Service

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The process is up."""
    return {"status": "ok"}


@router.get(
    "/readyz",
    responses={503: {"description": "still warming up, or no database"}, **CALLER_RESPONSES},
    # FastAPI appends this to the key schemes it lists: `{}` makes the key optional.
    openapi_extra={"security": [{}]},
)
async def readyz(service: ServiceDep, detailed: Identified) -> JSONResponse:
    """Ready once every configured repo's index is warm and the database answers; the
    details (repos, database, jobs) only with a key when keys are set."""
    body = await run_in_threadpool(_readiness, service)
    status = 200 if body["ready"] else 503
    return JSONResponse(body if detailed else {"ready": body["ready"]}, status_code=status)


def _readiness(service: Service) -> dict[str, object]:
    repos = {name: service.workspaces.is_warm(name) for name in service.workspaces.names()}
    try:
        with service.store.engine.connect() as connection:
            connection.execute(text("SELECT 1"))
        database = True
    except Exception:
        database = False
    ready = database and all(repos.values()) and service.jobs.launched
    return {"ready": ready, "database": database, "repos": repos, "jobs": service.jobs.launched}


@router.get(
    "/metrics", response_class=Response, dependencies=[MetricsReader], responses=CALLER_RESPONSES
)
async def metrics(service: ServiceDep) -> Response:
    """Prometheus text format; wants a key when keys are set (`DIAGNOSER_METRICS_PUBLIC`)."""
    body = await run_in_threadpool(service.metrics.render)
    return Response(body, media_type=CONTENT_TYPE)
