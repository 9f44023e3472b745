"""`diagnoser worker` in process (`api.runner`, `api.cli.work`): what `--check` says,
SQLite's one job runner, and who ran a job, in its record and in `/metrics`. The worker
as a real process, in a fleet, is in `test_fleet_processes.py`."""

from __future__ import annotations

import io
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api import ServiceSettings, create_app, preflight
from api.app import build_service
from api.cli import serve, work
from api.runner import health
from api.store import Executor
from diagnoser import ConfigError
from repomap import collector
from tests.api.conftest import DEMO, SAMPLES, wait_for_job
from tests.api.test_metrics import value

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
CRASH = (SAMPLES / "android_logcat_open_shared.txt").read_text()
ROOT = Path(__file__).resolve().parents[2]
HANG_SECONDS = 30
"""A hang guard: the worker below ends in about a second."""


def _member(*, seen: datetime = NOW, ready: bool = True) -> Executor:
    member = Executor.starting("w-1", host="box", pid=7, role="worker", now=seen)
    return replace(member, ready=ready)


def test_check_is_ready_only_for_a_live_warm_worker() -> None:
    assert health(_member(), "w-1", takeover=60, now=NOW + timedelta(seconds=2)).ready
    cold = health(_member(ready=False), "w-1", takeover=60, now=NOW)
    assert not cold.ready and "still indexing" in cold.line
    silent = health(_member(), "w-1", takeover=60, now=NOW + timedelta(seconds=90))
    assert not silent.ready and "silent for 90 s" in silent.line
    missing = health(None, "w-1", takeover=60, now=NOW)
    assert not missing.ready and "not running" in missing.line


def test_worker_check_reads_the_heartbeat_from_the_database(
    service_settings: ServiceSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DIAGNOSER_DATABASE_URL", str(service_settings.database_url))
    monkeypatch.setenv("DIAGNOSER_REPOS", f"demo={DEMO}")
    with TestClient(create_app(service_settings)) as client:  # a runner beating here
        jobs = client.app.state.service.jobs  # type: ignore[attr-defined]
        jobs.fleet.ready = True
        jobs.fleet.tick()
        code, said = _check()
        assert code == 0 and said.startswith(f"{jobs.executor_id}: ready (pid "), said
    code, said = _check()  # stopped with the app
    assert code == 1 and said.startswith(f"{jobs.executor_id}: stopped at "), said


def _check() -> tuple[int, str]:
    """`diagnoser worker --check`: its exit code and line. (Not capsys: DBOS, launched by
    the app, keeps the stream it found for its log, and capsys closes its own.)"""
    out = io.StringIO()
    with redirect_stdout(out):
        code = work(["--check"])
    return code, out.getvalue()


def test_sqlite_refuses_a_second_job_runner_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DIAGNOSER_HOME", str(tmp_path / "home"))
    settings = ServiceSettings(repos={"demo": DEMO})
    first = build_service(settings)
    try:
        with pytest.raises(ConfigError, match="SQLite is one machine's, one job runner's"):
            build_service(settings)
        build_service(settings, runner=False).store.engine.dispose()  # only enqueues: fine
        monkeypatch.setenv("DIAGNOSER_REPOS", f"demo={DEMO}")
        assert work([]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: another process runs the jobs of the SQLite database")
        assert err.count("\n") == 1
    finally:
        first.jobs.shutdown()
        first.store.engine.dispose()
    build_service(settings).jobs.shutdown()  # released: the next runner may start


def test_a_job_records_who_ran_it_and_metrics_name_the_runner(client: TestClient) -> None:
    service = client.app.state.service  # type: ignore[attr-defined]
    accepted = client.post("/diagnose", json={"report": {"text": CRASH, "source": "crash_log"}})
    job = wait_for_job(client, accepted.json()["job_id"])
    assert [(a["number"], a["executor"]) for a in job["attempts"]] == [
        (1, service.jobs.executor_id)
    ]
    page = client.get("/metrics").text
    assert value(page, "diagnoser_executor", executor=service.jobs.executor_id) == 1
    assert value(page, "diagnoser_fleet_executors", state="alive") == 1


def test_worker_check_on_a_database_it_cannot_read_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DIAGNOSER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DIAGNOSER_REPOS", f"demo={DEMO}")
    monkeypatch.setenv("DIAGNOSER_DATABASE_URL", "postgresql://u:hunter2@127.0.0.1:1/x")
    code, said = _check()
    assert code == 1 and ": the database cannot be read: " in said, said
    assert said.count("\n") == 1 and "hunter2" not in said
    monkeypatch.setenv("DIAGNOSER_DATABASE_URL", f"sqlite:///{tmp_path / 'empty.sqlite'}")
    code, said = _check()  # never migrated: no executors table
    assert code == 1 and ": the database cannot be read: " in said, said


STOPPED_WITH_A_STRAY_JOB = """
import os, signal, sys, threading, time
from types import SimpleNamespace
from api.runner import run

class Jobs:
    fleet = SimpleNamespace(ready=False)
    def launch(self):  # a workflow the store never saw start: it runs on, not daemon
        threading.Thread(target=time.sleep, args=(600,), daemon=False).start()
        threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGTERM)).start()
    def held(self):
        return 0
    def shutdown(self):
        pass

engine = SimpleNamespace(dispose=lambda: None)
service = SimpleNamespace(jobs=Jobs(), warm=lambda: None, store=SimpleNamespace(engine=engine))
sys.exit(run(service))
"""


def test_a_stopped_worker_exits_though_a_job_thread_the_store_never_counted_runs_on() -> None:
    # The fleet test's worker hung for 60 s on SIGTERM: a job thread ran on that the
    # store did not call held, and the interpreter waited for it at exit.
    done = subprocess.run(
        [sys.executable, "-c", STOPPED_WITH_A_STRAY_JOB], cwd=ROOT, capture_output=True,
        text=True, timeout=HANG_SECONDS, check=False,
    )  # fmt: skip
    assert done.returncode == 143, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "diagnoser worker: terminated: 0 running jobs ended, 0 handed back to the fleet"
    )


def test_serve_and_worker_load_the_service_with_the_collector_paused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`repomap.collector.loading` around the service's imports and build: the checks
    (`api.preflight`) run inside it, here refusing a made-up model."""
    inside: list[bool] = []
    paused = False

    @contextmanager
    def loading() -> Iterator[None]:
        nonlocal paused
        paused = True
        try:
            yield
        finally:
            paused = False

    real = preflight.preflight

    def checked(*args: Any, **kwargs: Any) -> Any:
        inside.append(paused)
        return real(*args, **kwargs)

    monkeypatch.setattr(collector, "loading", loading)
    monkeypatch.setattr(preflight, "preflight", checked)
    monkeypatch.setenv("DIAGNOSER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DIAGNOSER_MODEL", "nope:model")
    assert work([]) == 2 and serve(["--port", "0"]) == 2
    assert inside == [True, True]
