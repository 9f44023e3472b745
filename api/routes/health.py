"""`/healthz` (the process answers), `/readyz` (repos indexed, database reachable) and
`/metrics` (Prometheus)."""

from __future__ import annotations

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse
from sqlalchemy import text
from starlette.concurrency import run_in_threadpool

from api.deps import ServiceDep
from api.metrics import CONTENT_TYPE
from api.service import Service

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The process is up."""
    return {"status": "ok"}


@router.get("/readyz", responses={503: {"description": "still warming up, or no database"}})
async def readyz(service: ServiceDep) -> JSONResponse:
    """Ready once every configured repo's index is warm and the database answers."""
    body = await run_in_threadpool(_readiness, service)
    return JSONResponse(body, status_code=200 if body["ready"] else 503)


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


@router.get("/metrics", response_class=Response)
async def metrics(service: ServiceDep) -> Response:
    """Prometheus text format."""
    body = await run_in_threadpool(service.metrics.render)
    return Response(body, media_type=CONTENT_TYPE)
