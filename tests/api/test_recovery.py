"""Restart recovery (issue 10 §5): `diagnoser serve`, a real process, killed with SIGKILL
while it investigates, then started again on the same database, finishes every job it
had accepted, each once: one Finding per job, and the interrupted one says `restarted`.
Stopped with SIGTERM instead, it lets the running job end first and leaves the queued
ones to the next start.

Catching the server mid-investigation without a test hook: the offline model diagnoses
a demo report in a few tenths of a second, too quick to kill reliably by timing alone.
So the test freezes the server with SIGSTOP, reads from the database what it has
committed (a frozen process commits nothing more, and what it had not committed is lost
to SIGKILL anyway), and either kills it there, when a job is running and has started
exploring without ending, or lets it go on with SIGCONT for a few milliseconds and looks
again. The kill point is then known exactly, not guessed. With one job at a time
(`DIAGNOSER_JOB_CONCURRENCY=1`) the other accepted jobs are still queued at the kill.

With `--workers 2` the process killed is the supervisor, which runs the jobs; its web
workers stop with it, and the next start's runner recovers the jobs the same way.
"""

from __future__ import annotations

import signal
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.exc import OperationalError

from api.database import connect
from api.store import Store
from tests.api.conftest import SAMPLES
from tests.api.databases import BACKENDS, fresh_database
from tests.api.server import STOP_DEADLINE_SECONDS, Server, serve

REPORTS = (
    {"text": (SAMPLES / "android_logcat_open_shared.txt").read_text(), "source": "crash_log"},
    {"text": (SAMPLES / "issue_load_more_500.md").read_text(), "source": "github"},
    {"text": (SAMPLES / "browser_console_save.txt").read_text(), "source": "bug_report"},
    {"text": (SAMPLES / "review_praise.txt").read_text(), "source": "review", "rating": 5},
)
"""Distinct reports (no two attach to one job): three to investigate, one not to."""
TERMINAL_EVENTS = {"complete", "not_actionable", "failed", "timed_out"}
ENDED = {"complete", "not_actionable", "failed", "timed_out", "duplicate"}
CATCH_DEADLINE_SECONDS = 120.0
JOBS_DEADLINE_SECONDS = 180.0
"""Hang guards: the jobs take a few seconds in all."""
RUN_SLICE_SECONDS = 0.01
"""How long the server runs between two looks; an investigation takes ~100× that."""


@dataclass(frozen=True)
class Seen:
    """A job as the database held it when the server was frozen."""

    state: str
    events: tuple[str, ...]

    @property
    def investigating(self) -> bool:
        return (
            self.state == "running"
            and "exploring" in self.events
            and not TERMINAL_EVENTS & set(self.events)
        )


@contextmanager
def reader(url: str) -> Iterator[Store]:
    """The test's own view of the server's database."""
    engine = connect(url)
    try:
        yield Store(engine)
    finally:
        engine.dispose()


def catch_investigating(server: Server, store: Store, job_ids: list[str]) -> dict[str, Seen]:
    """Freeze the server at a moment a job is investigating (it stays frozen until sent
    SIGCONT or killed); what each job was then."""
    deadline = time.monotonic() + CATCH_DEADLINE_SECONDS
    while time.monotonic() < deadline:
        server.freeze()
        try:
            seen = {job_id: _seen(store, job_id) for job_id in job_ids}
        except OperationalError:  # frozen inside an SQLite lock the reader needs: go on
            seen = {}
        if any(job.investigating for job in seen.values()):
            return seen
        if seen and all(job.state in ENDED for job in seen.values()):
            raise AssertionError(f"every job ended before one was caught investigating: {seen}")
        server.send(signal.SIGCONT)
        time.sleep(RUN_SLICE_SECONDS)
    raise AssertionError(f"no job was investigating within {CATCH_DEADLINE_SECONDS} s")


def _seen(store: Store, job_id: str) -> Seen:
    job = store.job(job_id)
    assert job is not None
    return Seen(job.state.value, tuple(event.state for event in store.events(job_id)))


def submit_all(server: Server) -> list[str]:
    accepted = [server.client.post("/diagnose", json={"report": r}) for r in REPORTS]
    assert [response.status_code for response in accepted] == [202] * len(REPORTS)
    return [str(response.json()["job_id"]) for response in accepted]


def _settings(tmp_path: Path, url: str) -> dict[str, str]:
    return {
        "DIAGNOSER_HOME": str(tmp_path / "home"),
        "DIAGNOSER_DATABASE_URL": url,
        "DIAGNOSER_JOB_CONCURRENCY": "1",
    }


def wait_for_jobs(server: Server, job_ids: list[str]) -> dict[str, dict[str, Any]]:
    """Every job once it has ended (a hang guard, not a timing)."""
    deadline = time.monotonic() + JOBS_DEADLINE_SECONDS
    while time.monotonic() < deadline:
        jobs = {job_id: server.client.get(f"/jobs/{job_id}").json() for job_id in job_ids}
        if all(job["state"] in ENDED for job in jobs.values()):
            return jobs
        time.sleep(0.1)
    raise AssertionError(f"jobs did not end within {JOBS_DEADLINE_SECONDS} s:\n{server.output}")


def findings_by_job(server: Server) -> Counter[tuple[str, str]]:
    """(job id, finding id) of every listed Finding, counted."""
    page = server.client.get("/findings?limit=100").json()
    assert page["next_cursor"] is None
    return Counter((item["job_id"], item["id"]) for item in page["items"])


@pytest.mark.parametrize("workers", [1, 2], ids=["one-process", "two-workers"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_killed_server_finishes_every_accepted_job_once(
    backend: str, workers: int, tmp_path: Path
) -> None:
    args = ("--workers", str(workers))
    with fresh_database(backend, tmp_path) as url, reader(url) as store:
        settings = _settings(tmp_path, url)
        with serve(settings, log=tmp_path / "first.log", args=args) as first:
            first.wait_ready()
            job_ids = submit_all(first)
            at_kill = catch_investigating(first, store, job_ids)
            first.kill()

        interrupted = {job_id for job_id, job in at_kill.items() if job.investigating}
        not_started = {job_id for job_id, job in at_kill.items() if not job.events}
        assert interrupted and not_started, at_kill  # what this test is about

        with serve(settings, log=tmp_path / "second.log", args=args) as second:
            second.wait_ready()
            jobs = wait_for_jobs(second, job_ids)
            events = {i: second.client.get(f"/jobs/{i}/events").json() for i in job_ids}
            listed = findings_by_job(second)
            second.kill()

        for job_id, job in jobs.items():
            assert job["state"] in ("complete", "not_actionable"), job
            states = [event["state"] for event in events[job_id]]
            assert [e["seq"] for e in events[job_id]] == list(range(len(states)))
            assert sum(state in TERMINAL_EVENTS for state in states) == 1, states  # once
            assert states[-1] == job["state"], states
            assert ("restarted" in states) == (job_id in interrupted), (job_id, states)
            if job_id in interrupted:  # its first run, and its run after the restart
                assert len(job["attempts"]) >= 2, job
        assert listed == Counter((job_id, job["finding_id"]) for job_id, job in jobs.items())

        with serve(settings, log=tmp_path / "third.log", args=args) as third:  # nothing again
            third.wait_ready()
            assert findings_by_job(third) == listed
            for job_id in job_ids:
                assert third.client.get(f"/jobs/{job_id}").json() == jobs[job_id]
                assert third.client.get(f"/jobs/{job_id}/events").json() == events[job_id]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_stop_lets_the_running_job_end_and_keeps_the_queue(backend: str, tmp_path: Path) -> None:
    with fresh_database(backend, tmp_path) as url, reader(url) as store:
        settings = _settings(tmp_path, url)
        with serve(settings, log=tmp_path / "first.log") as first:
            first.wait_ready()
            job_ids = submit_all(first)
            at_stop = catch_investigating(first, store, job_ids)
            first.process.send_signal(signal.SIGTERM)  # handled once it goes on
            first.send(signal.SIGCONT)
            assert first.process.wait(timeout=STOP_DEADLINE_SECONDS) == 0, first.output
            assert "Traceback" not in first.output

        after = {job_id: _seen(store, job_id) for job_id in job_ids}
        running = next(job_id for job_id, job in at_stop.items() if job.investigating)
        assert after[running].state == "complete", after  # it ended before the process
        assert {job.state for job in after.values()} <= ENDED | {"queued"}, after  # none halfway

        with serve(settings, log=tmp_path / "second.log") as second:
            second.wait_ready()
            jobs = wait_for_jobs(second, job_ids)
            events = {i: second.client.get(f"/jobs/{i}/events").json() for i in job_ids}
            assert findings_by_job(second) == Counter(
                (job_id, job["finding_id"]) for job_id, job in jobs.items()
            )
        for job_id, job in jobs.items():
            states = [event["state"] for event in events[job_id]]
            assert job["state"] in ("complete", "not_actionable") and "restarted" not in states
