"""`Service`: what the routes call — accept a report, accept a webhook delivery, wait for
a job. Synchronous (database and file work); routes run it in a worker thread.

A `/diagnose` report is fingerprinted in the request (frames mapped onto the warm file
list) so an identical report attaches to the job already answering it and the caller
gets that job's id at once. A webhook body is only verified, stored and queued here;
intake runs in the job (`api.jobs.prepare`), which folds identical reports there.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass

from api import deliveries, signatures
from api.auth import Guard
from api.backpressure import Backpressure
from api.errors import ApiError
from api.inputs import DIAGNOSE
from api.metrics import Metrics
from api.queue import Jobs
from api.schemas import Accepted, JobOut, WebhookAck
from api.settings import ServiceSettings
from api.store import Queue, Store
from diagnoser import DiagnoserError, ReportIn
from diagnoser.intake import report_fingerprint
from diagnoser.registry import Workspaces
from repomap import RepoMapError

log = logging.getLogger(__name__)

JOBS_PATH = "/jobs/"
SECRET_SETTINGS = {
    "sentry": ("sentry_secret", "DIAGNOSER_SENTRY_SECRET"),
    "github": ("github_secret", "DIAGNOSER_GITHUB_SECRET"),
    "standard": ("standard_webhook_secret", "DIAGNOSER_STANDARD_WEBHOOK_SECRET"),
    "bugsnag": ("webhook_token", "DIAGNOSER_WEBHOOK_TOKEN"),
    "rollbar": ("webhook_token", "DIAGNOSER_WEBHOOK_TOKEN"),
    "reviews": ("webhook_token", "DIAGNOSER_WEBHOOK_TOKEN"),
}
"""Webhook route → the setting holding its secret or URL token."""
STORED_HEADERS = ("sentry-hook-resource", "x-github-event", "webhook-id", "request-id")
"""Headers intake may need later (never signatures or tokens)."""


def status_url(job_id: str) -> str:
    return f"{JOBS_PATH}{job_id}"


@dataclass
class Service:
    settings: ServiceSettings
    store: Store
    workspaces: Workspaces
    jobs: Jobs
    guard: Guard
    metrics: Metrics
    backpressure: Backpressure

    def repo(self, requested: str | None, *, reveal: bool = True) -> str:
        """The repository a request names, or the only one configured. `reveal`: the
        error may list the configured repos (never to an unauthenticated caller)."""
        names = self.workspaces.names()
        listed = ", ".join(names) if reveal else ""
        if requested is None:
            if len(names) == 1:
                return names[0]
            known = f"one of {listed}" if reveal else "GET /repos lists them, with a key"
            raise ApiError(422, f'name a repo (?repo= or "repo"): {known}')
        if requested not in names:
            known = f"configured: {listed}" if reveal else "GET /repos lists them, with a key"
            raise ApiError(404, f"no repo named {requested!r}; {known}")
        return requested

    def warm(self) -> None:
        """Index every served repository now (blocking: the start's background thread).
        One that cannot be read (a folder gone, a git remote that does not answer) is
        one log line, and `/readyz` keeps saying so; a bug is a traceback."""
        for name in self.workspaces.names():
            started = time.monotonic()
            try:
                self.workspaces.warm(name)
            except (DiagnoserError, RepoMapError) as exc:
                log.error("could not index repo %s: %s", name, exc)
                continue
            except Exception:
                log.exception("could not index repo %s", name)
                continue
            log.info("repo %s indexed in %.1f s", name, time.monotonic() - started)

    def submit(self, repo: str, report: ReportIn) -> Accepted:
        """Queue a diagnosis, or attach to the job answering an identical report."""
        workspace = self.workspaces.current(repo)  # no fetch while the caller waits
        pinned = self.workspaces.pinned_revision(repo, report)
        fingerprint = report_fingerprint(report, files=workspace.file_paths, revision=pinned)
        queue = self._queue()
        submitted = self.store.submit(
            repo=repo, source=DIAGNOSE, raw=report.model_dump_json().encode(),
            content_type="application/json", fingerprint=fingerprint,
            window=self.settings.dedupe_window_seconds, queue=queue,
        )  # fmt: skip
        if not submitted.attached and queue is None:
            self.jobs.enqueue(submitted.job.id)
        return _accepted(submitted.job, attached=submitted.attached)

    def deliver(
        self, route: str, *, repo: str, headers: Mapping[str, str], body: bytes,
        token: str | None = None,
    ) -> tuple[int, WebhookAck]:  # fmt: skip
        """Verify, deduplicate, store and queue one webhook delivery: (status, answer)."""
        self._verify(route, headers, body, token, repo)
        delivery = deliveries.inspect(route, headers, body)
        if not delivery.act:
            return 200, WebhookAck(ignored=True, reason=delivery.reason or "not acted on")
        self.backpressure.admit_delivery(route)  # 503 past the queue limit, when it retries
        kept = _stored(headers)
        queue = self._queue()
        job, first = self.store.deliver(
            provider=route, delivery_id=delivery.delivery_id, repo=repo,
            source=delivery.provider, raw=body, headers=kept,
            content_type=headers.get("content-type", ""), queue=queue,
        )  # fmt: skip
        url = status_url(job.id)
        if not first:
            reason = f"delivery {delivery.delivery_id} was received before"
            return 200, WebhookAck(job_id=job.id, status_url=url, replayed=True, reason=reason)
        if queue is None:
            self.jobs.enqueue(job.id)
        return 202, WebhookAck(job_id=job.id, status_url=url)

    def _queue(self) -> Queue | None:
        """Queue new jobs in the transaction that stores them when the database allows
        (PostgreSQL: one commit per report); else (None) `jobs.enqueue` after it."""
        return self.jobs.enqueue_in if self.jobs.transactional else None

    def _verify(
        self, route: str, headers: Mapping[str, str], body: bytes, token: str | None, repo: str
    ) -> None:
        field, variable = SECRET_SETTINGS[route]
        secret: str | None = getattr(self.settings, field)
        if not secret:
            raise ApiError(403, f"the {route} webhook is off: set {variable} to turn it on")
        try:
            if route == "sentry":
                signatures.verify_sentry(body, headers, secret)
            elif route == "github":
                signatures.verify_github(body, headers, secret)
            elif route == "standard":
                signatures.verify_standard(body, headers, secret)
            else:
                signatures.verify_token(token or "", secret)
        except signatures.SecretNotConfigured as exc:
            raise ApiError(403, f"the {route} webhook is misconfigured: {exc}") from None
        except signatures.SignatureError as exc:
            self._refuse(route, headers, body, repo, f"signature: {exc}")
            raise ApiError(401, str(exc)) from None

    def _refuse(
        self, route: str, headers: Mapping[str, str], body: bytes, repo: str, reason: str
    ) -> None:
        """Keep what diagnosing a refused delivery needs (`Store.refuse`). The answer is
        401 whether or not that is stored: a failure here is logged, never a 500."""
        try:
            self.store.refuse(
                repo=repo, source=route, body=body, content_type=headers.get("content-type", ""),
                headers=_stored(headers), reason=reason,
                budget=self.settings.refused_budget_bytes,
            )  # fmt: skip
        except Exception:
            log.exception("could not keep a refused %s delivery", route)

    def job(self, job_id: str) -> JobOut:
        job = self.store.job(job_id)
        if job is None:
            raise ApiError(404, f"no job {job_id}")
        return job


def _stored(headers: Mapping[str, str]) -> dict[str, str]:
    """The headers kept with a delivery (the store bounds their values)."""
    return {k: v for k in STORED_HEADERS if (v := headers.get(k)) is not None}


def _accepted(job: JobOut, *, attached: bool) -> Accepted:
    return Accepted(
        job_id=job.id, status_url=status_url(job.id), state=job.state, attached=attached,
        occurrences=job.occurrences,
    )  # fmt: skip
