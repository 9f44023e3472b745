"""`diagnoser serve --workers 2` (`api/workers.py`) as a real process tree: two web
workers answer, the supervisor runs the jobs, `/metrics` adds up every process's
counters; a stop signal ends every process with exit 0; a supervisor killed outright
takes its workers with it; a worker that dies is replaced, and a job stored but not yet
queued is queued then."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from api.database import connect
from api.store import Store
from tests.api.conftest import SAMPLES
from tests.api.server import STOP_DEADLINE_SECONDS, Server, serve

WORKERS = ("--workers", "2")
CRASH = (SAMPLES / "android_logcat_open_shared.txt").read_text()
DEADLINE_SECONDS = 120.0
"""Hang guard of every wait here (each takes a few seconds at most)."""
POLL_SECONDS = 0.1


def _settings(tmp_path: Path) -> dict[str, str]:
    return {
        "DIAGNOSER_HOME": str(tmp_path / "home"),
        "DIAGNOSER_DATABASE_URL": f"sqlite:///{tmp_path / 'db' / 'diagnoser.sqlite'}",
    }


def workers(pid: int) -> set[int]:
    """The web workers of supervisor `pid`: its children started by multiprocessing's
    spawn (not its resource tracker)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            line = (entry / "cmdline").read_bytes()
        except (OSError, IndexError):  # gone meanwhile
            continue
        if ppid == pid and b"spawn_main" in line:
            found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def until(condition: str, check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(POLL_SECONDS)
    raise AssertionError(f"not within {DEADLINE_SECONDS} s: {condition}")


def two_workers(server: Server) -> set[int]:
    until("two workers run", lambda: len(workers(server.process.pid)) == 2)
    return workers(server.process.pid)


def metric(page: str, name: str, **labels: str) -> float:
    return sum(
        sample.value
        for family in text_string_to_metric_families(page)
        for sample in family.samples
        if sample.name == name and labels.items() <= sample.labels.items()
    )


def test_workers_answer_and_the_supervisor_runs_the_jobs(tmp_path: Path) -> None:
    with serve(_settings(tmp_path), args=WORKERS, log=tmp_path / "log") as server:
        server.wait_ready()
        assert len(two_workers(server)) == 2
        body = {"report": {"text": CRASH, "source": "crash_log"}}
        done = server.client.post("/diagnose?wait=60", json=body)
        assert done.status_code == 200 and done.json()["state"] == "complete", done.text
        for _ in range(10):
            assert server.client.get("/healthz").status_code == 200
        page = server.client.get("/metrics").text
        # Requests are counted in a worker, the Finding's tool calls in the supervisor:
        # one worker's scrape reads both.
        assert metric(page, "diagnoser_http_requests_total", route="/healthz") == 10
        assert metric(page, "diagnoser_tool_calls_total") > 0
        assert metric(page, "diagnoser_jobs", state="complete") == 1
        # a worker process exists before its start-up is logged: on a loaded machine the
        # second one may still be starting here
        until(
            "both web workers started",
            lambda: server.output.count("Application startup complete") == 2,
        )
        assert "2 web workers; jobs run in this process" in server.output


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_signal_ends_every_process(stop: signal.Signals, tmp_path: Path) -> None:
    with serve(_settings(tmp_path), args=WORKERS, log=tmp_path / "log") as server:
        server.wait_ready()
        children = two_workers(server)
        assert server.send(stop) == 0, server.output
        until("the workers exit", lambda: not any(alive(pid) for pid in children))
        assert "Traceback" not in server.output


def test_a_killed_supervisor_takes_its_workers_with_it(tmp_path: Path) -> None:
    with serve(_settings(tmp_path), args=WORKERS, log=tmp_path / "log") as server:
        server.wait_ready()
        children = two_workers(server)
        server.kill()
        until("the orphaned workers exit", lambda: not any(alive(pid) for pid in children))


def test_a_dead_worker_is_replaced_and_unqueued_jobs_are_queued(tmp_path: Path) -> None:
    """A worker killed between storing a job and queueing it would leave the job to the
    next start; the supervisor queues every unfinished job again when it replaces one."""
    settings = _settings(tmp_path)
    with serve(settings, args=WORKERS, log=tmp_path / "log") as server:
        server.wait_ready()
        children = two_workers(server)
        engine = connect(settings["DIAGNOSER_DATABASE_URL"])
        try:  # what a worker stores before it dies: the job, not on the queue
            stored = Store(engine).submit(
                repo="demo", source="diagnose", content_type="application/json",
                raw=b'{"text": "IndexError in list_notes", "source": "bug_report"}',
                fingerprint=None, window=0,
            ).job.id  # fmt: skip
        finally:
            engine.dispose()
        victim = min(children)
        os.kill(victim, signal.SIGKILL)
        until(f"worker {victim} dies", lambda: not alive(victim))
        until("the worker is replaced", lambda: len(workers(server.process.pid) - children) == 1)
        until("the stored job ends", lambda: _ended(server, stored))
        assert server.client.get(f"/jobs/{stored}").json()["state"] == "complete"


def _ended(server: Server, job_id: str) -> bool:
    return server.client.get(f"/jobs/{job_id}").json()["state"] not in ("queued", "running")


def test_workers_must_be_at_least_one(tmp_path: Path) -> None:
    with serve(_settings(tmp_path), args=("--workers", "0"), log=tmp_path / "log") as server:
        assert server.process.wait(timeout=STOP_DEADLINE_SECONDS) == 2
        assert "--workers: must be at least 1, not 0" in server.output
