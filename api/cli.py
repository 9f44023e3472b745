"""`diagnoser serve [--host H] [--port P] [--workers N] [--no-jobs]`: start the HTTP
service; `diagnoser worker [--check]`: run jobs only (`api.runner`); every other
`diagnoser` command is the diagnosis CLI's (`diagnoser.cli`).

One process by default: it answers requests and runs the jobs. `--workers N` starts N
web worker processes and runs the jobs in this one (`api.workers`). `--no-jobs` runs
none here: workers do (`diagnoser worker`, on PostgreSQL any number of them).

Settings come from the environment (`DIAGNOSER_*`, README); a bad one stops the start
with one line naming it (exit 2). With no API keys configured the service only listens
on 127.0.0.1, whatever `--host` says, and says so.
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import shlex
import shutil
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from api.settings import ServiceSettings, load_service_settings
from diagnoser import ConfigError
from diagnoser.cli import EXIT_USAGE
from diagnoser.cli import main as diagnoser_main
from diagnoser.redact import redact_url
from diagnoser.settings import default_database_url
from repomap import allocator, collector

if TYPE_CHECKING:
    import uvicorn

SERVE = "serve"
WORKER = "worker"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
LOOPBACK = "127.0.0.1"
EXAMPLE_REPORT = "sample_reports/reports/issue_load_more_500.md"
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == [SERVE]:
        allocator.configure()
        return serve(args[1:])
    if args[:1] == [WORKER]:
        allocator.configure()
        return work(args[1:])
    return diagnoser_main(args)


def parser() -> argparse.ArgumentParser:
    cli = argparse.ArgumentParser(
        prog="diagnoser serve",
        description="Start the HTTP service (Swagger UI at /docs). Settings: DIAGNOSER_* "
        "variables, see README.",
    )
    cli.add_argument("--host", default=DEFAULT_HOST, help=f"address to bind ({DEFAULT_HOST})")
    cli.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port ({DEFAULT_PORT})")
    _common(cli)
    cli.add_argument(
        "--workers", type=_positive, default=1,
        help="web worker processes (1: one process answers requests and runs the jobs; N > 1: "
        "N processes answer requests, this one runs the jobs)",
    )  # fmt: skip
    cli.add_argument(
        "--no-jobs", action="store_true",
        help="answer requests only: the jobs are run by `diagnoser worker` processes sharing "
        "the database",
    )  # fmt: skip
    return cli


def worker_parser() -> argparse.ArgumentParser:
    cli = argparse.ArgumentParser(
        prog="diagnoser worker",
        description="Run diagnosis jobs, no HTTP: any number of workers share the queue "
        "through DIAGNOSER_DATABASE_URL (PostgreSQL). SIGTERM: the running jobs end within "
        "DIAGNOSER_STOP_GRACE_SECONDS, the rest go back to the fleet; exit 143.",
    )
    _common(cli)
    cli.add_argument(
        "--check", action="store_true",
        help="say whether this machine's worker (its executor id) is alive and its indexes "
        "warm, from its heartbeat in the database: exit 0 ready, 1 not",
    )  # fmt: skip
    return cli


def _common(cli: argparse.ArgumentParser) -> None:
    cli.add_argument(
        "--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"]
    )
    cli.add_argument("--model", help="the explorer model (default: DIAGNOSER_MODEL, else offline)")
    cli.add_argument(
        "--formatter-model", help="the formatter model (default: DIAGNOSER_FORMATTER_MODEL)"
    )
    cli.add_argument(
        "--fallback-models",
        help="comma-separated models tried when the explorer's provider fails; may end in "
        "'offline' (default: DIAGNOSER_FALLBACK_MODELS)",
    )


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {number}")
    return number


def serve(argv: Sequence[str]) -> int:
    """`diagnoser serve`. The service (FastAPI, DBOS, SQLAlchemy, uvicorn) loads once the
    arguments and the settings are read: `--help` and a bad setting answer at once."""
    args = parser().parse_args(argv)
    metrics = _metrics_directory() if args.workers > 1 else None
    try:
        settings = with_flags(load_service_settings(), args)
        with collector.loading():  # the service's modules, and what it keeps, load
            from api.preflight import preflight  # noqa: PLC0415 (settings first)

            checked = preflight(settings, runner=not args.no_jobs)
            from api.app import build_service, create_app  # noqa: PLC0415 (checks first)
            from api.server import connection_limits, server_config  # noqa: PLC0415

            limits = connection_limits(settings)
            service = build_service(
                settings, runner=not args.no_jobs, upgrade=True, checked=checked
            )
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        if metrics is not None:
            shutil.rmtree(metrics, ignore_errors=True)
        return EXIT_USAGE
    host = args.host
    if not settings.api_keys and not _loopback(host):
        print(
            f"no API keys configured (DIAGNOSER_API_KEYS): listening on {LOOPBACK} only, "
            f"not {host}",
            file=sys.stderr,
        )
        host = LOOPBACK
    print(
        banner(settings, host, args.port, args.workers, jobs=not args.no_jobs),
        file=sys.stderr, flush=True,
    )  # fmt: skip
    common: dict[str, Any] = {
        "host": host, "port": args.port, "log_level": args.log_level,
        "access_log": args.log_level == "debug",
    }  # fmt: skip
    if metrics is not None:
        from api import workers  # noqa: PLC0415 (only with --workers)

        config = server_config(
            workers.WEB_APP, settings, limits, factory=True, workers=args.workers,
            timeout_worker_healthcheck=workers.HEALTHCHECK_SECONDS, **common,
        )  # fmt: skip
        return workers.run(service, config, metrics)
    import uvicorn  # noqa: PLC0415 (settings first)

    server = uvicorn.Server(server_config(create_app(service=service), settings, limits, **common))
    _run(server)
    return 0 if server.started else 1


def work(argv: Sequence[str]) -> int:
    """`diagnoser worker`: run jobs until a stop signal (`api.runner`), or `--check`."""
    args = worker_parser().parse_args(argv)
    try:
        settings = with_flags(load_service_settings(), args)
        if args.check:
            from api import runner  # noqa: PLC0415 (settings first)

            health = runner.check(settings)
            print(health.line)
            return 0 if health.ready else 1
        with collector.loading():  # the service's modules, and what it keeps, load
            from api.preflight import preflight  # noqa: PLC0415 (settings first)

            checked = preflight(settings)
            from api import runner  # noqa: PLC0415 (checks first)
            from api.app import build_service  # noqa: PLC0415

            service = build_service(settings, role=WORKER, checked=checked)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    logging.basicConfig(level=args.log_level.upper(), format=runner.LOG_FORMAT)
    print(worker_banner(settings), file=sys.stderr, flush=True)
    return runner.run(service)


def _metrics_directory() -> Path:
    """The folder the web workers share their metrics through (`api.workers`)."""
    from api import workers  # noqa: PLC0415 (only with --workers)

    return workers.metrics_directory()


def with_flags(settings: ServiceSettings, args: argparse.Namespace) -> ServiceSettings:
    """`settings` with the model flags given on the command line (validated again)."""
    given = {"model": args.model, "formatter_model": args.formatter_model}
    update: dict[str, object] = {k: v for k, v in given.items() if v is not None}
    if args.fallback_models is not None:
        update["fallback_models"] = args.fallback_models
    if not update:
        return settings
    try:
        return ServiceSettings.model_validate({**settings.model_dump(), **update})
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(f"--{str(first['loc'][0]).replace('_', '-')}: {first['msg']}") from None


class _Stopped(Exception):
    """SIGINT or SIGTERM, after uvicorn's graceful shutdown."""


def _run(server: uvicorn.Server) -> None:
    """`server.run()`, returning after a SIGINT or SIGTERM. uvicorn shuts down gracefully,
    then raises the signal again to the handler it found (since 0.29): with Python's own,
    a stop would end the process killed by SIGTERM (exit -15) or in a KeyboardInterrupt
    traceback. Ours ends it here, and `serve` exits 0."""

    def stopped(_signal: int, _frame: FrameType | None) -> None:
        raise _Stopped

    previous = {number: signal.signal(number, stopped) for number in STOP_SIGNALS}
    try:
        server.run()
    except _Stopped:
        pass
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def banner(
    settings: ServiceSettings, host: str, port: int, processes: int = 1, *, jobs: bool = True
) -> str:
    """What to open and what to paste, printed at start."""
    shown = "localhost" if host in ("0.0.0.0", "::", LOOPBACK) else host
    base = f"http://{shown}:{port}"
    auth = " -H 'Authorization: Bearer YOUR_KEY'" if settings.api_keys else ""
    curl = (
        f"curl -s -X POST '{base}/diagnose?wait=30' -H 'Content-Type: text/plain'{auth} "
        f"--data-binary @{shlex.quote(EXAMPLE_REPORT)}"
    )
    repos = shown_repos(settings)
    database = settings.database_url or default_database_url()
    web = f"; {processes} web workers" if processes > 1 else ""
    if jobs:
        runs = f"; jobs run in this process (executor {settings.executor()})"
    else:
        runs = "; no jobs run here (--no-jobs): start `diagnoser worker`"
    return "\n".join([
        f"diagnoser: model {' → '.join((settings.model, *settings.fallback_models))}; "
        f"repos {repos}{web}{runs}",
        f"database: {redact_url(database)}",
        f"Swagger UI: {base}/docs",
        f"try it:     {curl}",
    ])  # fmt: skip


def worker_banner(settings: ServiceSettings) -> str:
    """What a worker says at start: which models, repos and database, under which id."""
    repos = shown_repos(settings)
    database = settings.database_url or default_database_url()
    models = " → ".join((settings.model, *settings.fallback_models))
    return (
        f"diagnoser worker {settings.executor()}: model {models}; repos {repos}; "
        f"database {redact_url(database)}; {settings.job_concurrency} jobs at a time"
    )


def shown_repos(settings: ServiceSettings) -> str:
    """The served repositories as a start line shows them (git URLs without password)."""
    folders = [f"{name}={path}" for name, path in settings.repos.items()]
    mirrored = [f"{name}={redact_url(url)} (git)" for name, url in settings.git_repos.items()]
    return ", ".join(folders + mirrored)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


if __name__ == "__main__":
    code = main()
    collector.before_exit()  # the interpreter's collections at exit skip the service's objects
    raise SystemExit(code)
