"""The FastAPI application: `create_app(settings)` wires the service together.

    uvicorn --factory api.app:create_app   # or: diagnoser serve (only it has api.server's bounds)

`build_service` does everything that can fail on a bad setting (database URL, models,
repos) before the server starts; the lifespan launches the job queue, warms every repo's
index in the background (`/readyz` says when), and stops the queue at the end.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from anyio import to_thread
from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.openapi.utils import get_openapi
from pydantic.json_schema import models_json_schema
from starlette.concurrency import run_in_threadpool

from api import errors, fleet
from api.auth import KEY_HEADER, Guard, KeyGate
from api.backpressure import Backpressure
from api.database import is_sqlite, migrate
from api.docs import DOCS_PATH, REDOC_PATH, mount_docs
from api.jobs import Runtime
from api.metrics import MeasureRequests, Metrics
from api.preflight import Preflight, preflight
from api.queue import Jobs
from api.routes import diagnose, findings, health, jobs, repos, webhooks
from api.schemas import DiagnoseIn
from api.service import Service
from api.settings import ServiceSettings, load_service_settings
from api.store import Store
from diagnoser.registry import Workspaces
from repomap import data_home

log = logging.getLogger(__name__)
WEB_WORKER_THREADS = 8
"""Threads for a web worker's blocking work (routes call the database in threads; AnyIO's
default is 40). They take turns at one GIL, so a few keep the core busy and more only
add switching: with `--workers 2`, 8 threads accepted 1.2x the distinct reports of 40
(438 and 390/s against 351 and 320/s, bench/service_bench.py, 2026-11-30). In one
process (no --workers) the request threads share the GIL with the running jobs too,
and fewer of them slowed accepting in favour of the jobs (195/s against 285/s), so
that keeps AnyIO's default."""
TITLE = "diagnoser"
DESCRIPTION = (
    "A read-only diagnosis service: a crash log, stack trace, review, issue or webhook in; "
    "a validated, grounded Finding out. Send a report to `POST /diagnose`, follow the job "
    "at `/jobs/{id}`, read the Finding at `/findings/{id}`."
)


def build_service(
    settings: ServiceSettings, *, runner: bool = True, probe_endpoints: bool = True,
    upgrade: bool | None = None, role: str = "serve", checked: Preflight | None = None,
) -> Service:  # fmt: skip
    """Everything the routes need; ConfigError (one line) on a bad setting, or when this
    process may not run jobs here (`Jobs.claim`). `runner`: this process runs the jobs
    (as `role`: `serve` or `worker`); else it only enqueues them (`serve --no-jobs`, a web
    worker of `serve --workers N`). `upgrade`: migrate the database first (default: when
    `runner`). `checked`: what `api.preflight.preflight` made of `settings` (default:
    run it here, probing the models' endpoints when `probe_endpoints`)."""
    checked = checked or preflight(settings, runner=runner, probe_endpoints=probe_endpoints)
    models, url, engine = checked.models, checked.url, checked.engine
    if runner if upgrade is None else upgrade:
        migrate(engine)
    store = Store(engine)
    workspaces = Workspaces.from_settings(settings)
    metrics = Metrics(
        store.job_counts, census=lambda: fleet.census(store, settings.takeover_seconds),
        executor=settings.executor() if runner else None,
    )  # fmt: skip
    runtime = Runtime(store, workspaces, settings, models, metrics)
    data_dir = Path(engine.url.database or "").parent if is_sqlite(url) else data_home()
    jobs = Jobs(runtime, database_url=url, data_dir=data_dir, runner=runner, role=role)
    jobs.claim()
    return Service(
        settings=settings, store=store, workspaces=workspaces, jobs=jobs,
        guard=Guard.from_settings(settings), metrics=metrics,
        backpressure=Backpressure(store.job_counts, settings.max_queued_jobs),
    )  # fmt: skip


def create_app(
    settings: ServiceSettings | None = None, *, service: Service | None = None
) -> FastAPI:
    """The app for `settings` (default: from the environment)."""
    service = service or build_service(settings or load_service_settings())

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        if not service.jobs.runner:  # a web worker: its threads only serve requests
            to_thread.current_default_thread_limiter().total_tokens = WEB_WORKER_THREADS
        await run_in_threadpool(service.jobs.launch)  # DBOS refuses to start on a loop
        threading.Thread(target=service.warm, name="warm", daemon=True).start()
        try:
            yield
        finally:
            await run_in_threadpool(service.jobs.shutdown)
            service.store.engine.dispose()

    app = FastAPI(
        title=TITLE, description=DESCRIPTION, version="0.1.0", lifespan=lifespan,
        docs_url=None, redoc_url=None,
    )  # fmt: skip
    app.state.service = service
    errors.install(app)
    for module in (diagnose, jobs, findings, repos, webhooks, health):
        app.include_router(module.router)
    mount_docs(app, title=TITLE)
    if service.settings.cors_origins:
        app.add_middleware(
            CORSMiddleware, allow_origins=list(service.settings.cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", KEY_HEADER, "Content-Type"],
        )  # fmt: skip
    if not service.settings.docs_public and not service.guard.open:
        gated = (DOCS_PATH, REDOC_PATH, app.openapi_url or "")
        app.add_middleware(KeyGate, guard=service.guard, prefixes=gated)
    app.add_middleware(MeasureRequests, metrics=service.metrics, routes=app.router.routes)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return app


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's schema, plus the models a route reads by hand (`DiagnoseIn`), with every
    error answer documented as what it is (`errors.document`)."""
    if app.openapi_schema is None:
        schema = get_openapi(
            title=app.title, version=app.version, description=app.description, routes=app.routes
        )
        _, extra = models_json_schema(
            [(DiagnoseIn, "validation")], ref_template="#/components/schemas/{model}"
        )
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        for name, definition in extra.get("$defs", {}).items():
            components.setdefault(name, definition)
        errors.document(schema)
        app.openapi_schema = schema
    return app.openapi_schema
