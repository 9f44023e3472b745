"""The real service's Swagger UI in headless chromium: it loads with no outside network,
lists `POST /diagnose`, and "Try it out" with the bundled examples starts real jobs.

Not parametrised over databases: the browser is what is under test (SQLite is enough).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from api import ServiceSettings, create_app
from api.docs import DOCS_PATH
from tests.api.browser import (
    browser_page,
    outside_requests,
    save_screenshot,
    serve_in_thread,
    try_it_out,
)
from tests.api.conftest import DEMO, JOB_DEADLINE_SECONDS

SCREENSHOT = "service_swagger_ui_diagnose"
NOT_ENDED = ("queued", "running")


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FastAPI:
    monkeypatch.setenv("DIAGNOSER_HOME", str(tmp_path / "home"))
    database = f"sqlite:///{tmp_path / 'service' / 'diagnoser.sqlite'}"
    return create_app(ServiceSettings(database_url=database, repos={"demo": DEMO}))


@pytest.fixture
def served(app: FastAPI) -> Iterator[str]:
    with serve_in_thread(app) as base_url:
        yield base_url


def _accepted_job(status: int, body: str) -> str:
    """The job id Swagger UI shows: 202 Accepted, or 200 when the job already ended."""
    assert status in (200, 202), (status, body)
    shown = json.loads(body)
    return str(shown["job_id"] if status == 202 else shown["id"])


def _ended(base_url: str, job_id: str) -> dict[str, Any]:
    """Poll a job until it ends (a hang guard with a generous bound, not a timing)."""
    deadline = time.monotonic() + JOB_DEADLINE_SECONDS
    with httpx.Client(base_url=base_url) as http:
        while time.monotonic() < deadline:
            job: dict[str, Any] = http.get(f"/jobs/{job_id}").json()
            if job["state"] not in NOT_ENDED:
                if job["finding_id"]:
                    job["finding"] = http.get(f"/findings/{job['finding_id']}").json()["finding"]
                return job
            time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not end within {JOB_DEADLINE_SECONDS} s")


def test_try_it_out_with_the_bundled_examples_starts_jobs(served: str) -> None:
    with browser_page() as page:
        page.goto(f"{served}{DOCS_PATH}")
        page.locator(".opblock-summary-path[data-path='/diagnose']").wait_for()
        listed = page.locator(".opblock-post .opblock-summary-path[data-path='/diagnose']")
        assert listed.count() == 1
        crash = try_it_out(page, "POST", "/diagnose")
        save_screenshot(page, SCREENSHOT)
        praise = try_it_out(page, "POST", "/diagnose", example="praise")
        assert outside_requests(page) == []
    crash_job = _ended(served, _accepted_job(crash.status, crash.body))
    assert crash_job["state"] == "complete", crash_job
    assert crash_job["finding"]["classification"] == "crash"
    assert any(f["path"].endswith("NoteRepository.kt") for f in crash_job["finding"]["files"])
    # The select box sent the chosen example, not the first one again.
    praise_job = _ended(served, _accepted_job(praise.status, praise.body))
    assert praise_job["id"] != crash_job["id"]
    assert praise_job["state"] == "not_actionable", praise_job
    assert praise_job["finding"]["classification"] == "praise"
