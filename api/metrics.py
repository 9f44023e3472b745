"""Prometheus metrics (`GET /metrics`): requests, jobs by state, queue depth, tool calls,
tokens and durations. One registry per app, so tests and several apps in one process do
not share counters; job counts are read from the database at each scrape, so they hold
across processes and restarts. With several processes (`diagnoser serve --workers N`)
the counters are kept in files of one directory (`share_between_processes`), and a
scrape of any worker adds up every process's.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest, values
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.schemas import JobState
from diagnoser import Finding

SHARED_DIRECTORY = "PROMETHEUS_MULTIPROC_DIR"
"""prometheus_client's multiprocess mode: the directory where each process keeps its
counters (read at import, so children started after `share_between_processes` use it)."""
UNMATCHED = "unmatched"
"""The route label of a request no route matched."""
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
JOB_BUCKETS = (0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600)


class _JobGauges(Collector):
    def __init__(self, counts: Callable[[], Mapping[str, int]]) -> None:
        self._counts = counts

    def collect(self) -> Iterable[Metric]:
        counts = self._counts()
        jobs = GaugeMetricFamily("diagnoser_jobs", "Jobs by state", labels=["state"])
        for state in JobState:
            jobs.add_metric([state.value], counts.get(state.value, 0))
        yield jobs
        depth = counts.get(JobState.QUEUED.value, 0)
        yield GaugeMetricFamily("diagnoser_queue_depth", "Jobs waiting on the queue", depth)


class _FleetGauges(Collector):
    def __init__(self, census: Callable[[], Mapping[str, int]], executor: str | None) -> None:
        self._census = census
        self._executor = executor

    def collect(self) -> Iterable[Metric]:
        members = GaugeMetricFamily(
            "diagnoser_fleet_executors", "Job runners of the fleet by state", labels=["state"]
        )
        for state, count in self._census().items():
            members.add_metric([state], count)
        yield members
        if self._executor is not None:
            info = GaugeMetricFamily(
                "diagnoser_executor", "The job runner in this process", labels=["executor"]
            )
            info.add_metric([self._executor], 1)
            yield info


class Metrics:
    def __init__(
        self, job_counts: Callable[[], Mapping[str, int]],
        census: Callable[[], Mapping[str, int]] | None = None, executor: str | None = None,
    ) -> None:  # fmt: skip
        """`census`: the fleet's job runners by state; `executor`: this process's, when
        it runs jobs."""
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "diagnoser_http_requests", "HTTP requests", ["method", "route", "status"],
            registry=self.registry,
        )  # fmt: skip
        self.request_seconds = Histogram(
            "diagnoser_http_request_seconds", "HTTP request duration", ["route"],
            buckets=REQUEST_BUCKETS, registry=self.registry,
        )  # fmt: skip
        self.tool_calls = Counter(
            "diagnoser_tool_calls", "Tool calls of finished jobs", ["stage"],
            registry=self.registry,
        )  # fmt: skip
        self.tokens = Counter(
            "diagnoser_model_tokens", "Model tokens of finished jobs", ["kind"],
            registry=self.registry,
        )  # fmt: skip
        self.job_seconds = Histogram(
            "diagnoser_job_seconds", "Diagnosis duration", buckets=JOB_BUCKETS,
            registry=self.registry,
        )  # fmt: skip
        self._jobs = _JobGauges(job_counts)
        self.registry.register(self._jobs)
        self._fleet = _FleetGauges(census, executor) if census is not None else None
        if self._fleet is not None:
            self.registry.register(self._fleet)

    def observe_request(self, method: str, route: str, status: int, seconds: float) -> None:
        self.requests.labels(method, route, str(status)).inc()
        self.request_seconds.labels(route).observe(seconds)

    def observe_finding(self, finding: Finding) -> None:
        provenance = finding.provenance
        for stage, count in provenance.tool_calls.items():
            self.tool_calls.labels(stage).inc(count)
        self.tokens.labels("input").inc(provenance.input_tokens or 0)
        self.tokens.labels("output").inc(provenance.output_tokens or 0)
        self.job_seconds.observe(sum(provenance.durations.values()))

    def render(self) -> bytes:
        directory = os.environ.get(SHARED_DIRECTORY)
        if directory is None:
            return generate_latest(self.registry)
        registry = CollectorRegistry()  # every process's counters, read from their files
        MultiProcessCollector(registry, path=directory)  # type: ignore[no-untyped-call]
        registry.register(self._jobs)
        if self._fleet is not None:
            registry.register(self._fleet)
        return generate_latest(registry)


def share_between_processes(directory: Path) -> None:
    """Keep the counters of every `Metrics` made from now on, in this process and in the
    processes it starts, in files under `directory` (an empty one)."""
    os.environ[SHARED_DIRECTORY] = str(directory)
    # prometheus_client chose where values live when it was imported: choose again.
    values.ValueClass = values.get_value_class()  # type: ignore[no-untyped-call]


def route_template(answered: Scope, asked: Scope, routes: Iterable[BaseRoute]) -> str:
    """The template of the route that answered a request (`answered`: its scope after the
    app ran; `asked`: a copy from before). FastAPI's routes put themselves in the scope;
    Starlette's (the OpenAPI schema, the docs' static files) are matched again, as the
    router did, on the scope as asked (a mount changes `root_path`); else `UNMATCHED`."""
    route = answered.get("route")
    if route is not None:
        return str(route.path)
    partial = UNMATCHED
    for candidate in routes:
        template = getattr(candidate, "path_format", None)
        if template is None:  # an included router: its routes put themselves in the scope
            continue
        match, _ = candidate.matches(asked)
        if match is Match.FULL:
            return str(template)
        if match is Match.PARTIAL and partial == UNMATCHED:  # another method: 405
            partial = str(template)
    return partial


class MeasureRequests:
    """ASGI middleware: every HTTP request counted by method, route template and status,
    and timed until its answer starts (a stream's body is not counted). A plain ASGI
    middleware: Starlette's `BaseHTTPMiddleware` (`@app.middleware("http")`) runs each
    request in a task group with memory streams, ~0.3 ms of CPU a request. `routes`: the
    app's, to label the requests Starlette's own routes answered."""

    def __init__(self, app: ASGIApp, metrics: Metrics, routes: Sequence[BaseRoute] = ()) -> None:
        self.app = app
        self.metrics = metrics
        self.routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        asked = dict(scope)  # the router updates `scope` in place
        answered = False

        def observe(status: int) -> None:
            route = route_template(scope, asked, self.routes)
            seconds = time.perf_counter() - started
            self.metrics.observe_request(scope["method"], route, status, seconds)

        async def measured(message: Message) -> None:
            nonlocal answered
            if message["type"] == "http.response.start" and not answered:
                answered = True
                observe(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, measured)
        except Exception:  # answered 500 by the outermost handler, after this middleware
            if not answered:
                observe(500)
            raise
