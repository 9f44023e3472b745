"""The server under `bench/service_bench.py`'s load: the real `diagnoser serve` in a
subprocess on a fresh data directory and database, started, awaited and stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import psycopg
from service_load import cpu_seconds

ROOT = Path(__file__).resolve().parent.parent
PROFILER = ROOT / "bench" / "service_profile.py"
SERVER_LOG = ROOT / "bench" / ".cache" / "service_bench_server.log"
"""The last run's server log (warnings and errors: `--log-level warning`)."""
POSTGRES_ADMIN_URL = os.environ.get(
    "DIAGNOSER_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"
)
"""Where the bench's database is created (as `tests/api/databases.py` does)."""
GITHUB_SECRET = "bench-github-secret"
RATE_LIMIT_PER_MINUTE = 1_000_000_000
"""High enough that the limiter never answers 429 to the load."""
READY_SECONDS = 300.0
STOP_SECONDS = 60.0


@contextmanager
def database(backend: str) -> Iterator[str | None]:
    """None (the default SQLite file in DIAGNOSER_HOME) or a fresh PostgreSQL URL."""
    if backend == "sqlite":
        yield None
        return
    name = f"diagnoser_bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True, connect_timeout=5) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield f"{POSTGRES_ADMIN_URL.rsplit('/', 1)[0]}/{name}"
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def server(
    port: int, database_url: str | None, home: Path, profile: tuple[str, Path] | None,
    workers: int = 1, *, checkout: Path = ROOT,
) -> Iterator[subprocess.Popen[bytes]]:  # fmt: skip
    """`diagnoser serve` of `checkout` (its own code first on the path: this one's, or a
    `git worktree` of another commit's), stopped with SIGINT at the end."""
    env = dict(os.environ, DIAGNOSER_HOME=str(home), DIAGNOSER_GITHUB_SECRET=GITHUB_SECRET)
    env["DIAGNOSER_RATE_LIMIT_PER_MINUTE"] = str(RATE_LIMIT_PER_MINUTE)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(checkout), env.get("PYTHONPATH")]))
    env.pop("DIAGNOSER_DATABASE_URL", None)
    if database_url:
        env["DIAGNOSER_DATABASE_URL"] = database_url
    serve = ["--port", str(port), "--log-level", "warning", "--workers", str(workers)]
    command = (
        [sys.executable, str(PROFILER), profile[0], str(profile[1]), *serve]
        if profile
        else [sys.executable, "-m", "api.cli", "serve", *serve]
    )
    log = (home / "server.log").open("wb")
    process = subprocess.Popen(command, cwd=checkout, env=env, stdout=log, stderr=log)
    failed = True
    try:
        yield process
        failed = False
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
        SERVER_LOG.parent.mkdir(parents=True, exist_ok=True)
        SERVER_LOG.write_bytes((home / "server.log").read_bytes())
        if failed or process.returncode not in (0, -signal.SIGINT):
            lines = SERVER_LOG.read_text(errors="replace").splitlines()
            errors = sorted({line for line in lines if line[:1].isalpha()})
            print(f"server log ({SERVER_LOG}):", *errors[-20:], sep="\n  ", file=sys.stderr)


def wait_ready(base: str, process: subprocess.Popen[bytes]) -> float:
    started = time.monotonic()
    while time.monotonic() - started < READY_SECONDS:
        if process.poll() is not None:
            raise SystemExit(f"the server exited with {process.returncode}")
        try:
            if httpx.get(f"{base}/readyz", timeout=5).status_code == 200:
                return time.monotonic() - started
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"the server was not ready within {READY_SECONDS:.0f} s")


def postgres_cpu(database: str | None) -> dict[int, float]:
    """CPU seconds so far of each PostgreSQL backend serving `database` (none: {})."""
    if database is None:
        return {}
    with psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s", (database,)
        ).fetchall()
    return {pid: cpu_seconds([pid]) for (pid,) in rows}
