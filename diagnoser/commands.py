"""What each `diagnoser` command does once its arguments are parsed (`diagnoser.cli`
parses them): `diagnose`, `repomap`, `doctor`.

Apart from the parser so that `diagnoser --help`, or a mistyped flag, answers before
any of this is imported — PydanticAI, the ranking, the renderers take a second.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from pydantic import ValidationError

from diagnoser.cli import DEFAULT_REPO, EXIT_FAILED, EXIT_OK, EXIT_USAGE
from diagnoser.constants import MAX_PAYLOAD_BYTES, MAX_REPORT_BYTES
from diagnoser.doctor import check_models, check_review_encoder, check_verification, run_checks
from diagnoser.errors import ConfigError, DiagnoserError
from diagnoser.intake import (
    Intake,
    IntakeError,
    PayloadTooLarge,
    ReportIn,
    from_payload,
    load_json,
    read_limited,
)
from diagnoser.models import check_endpoints, resolve_models
from diagnoser.pipeline import Event, State, diagnose
from diagnoser.render import to_json, to_markdown, to_sarif_json
from diagnoser.settings import Settings, check_data_home, default_database_url, load_settings
from diagnoser.verify import Logs
from diagnoser.workspace import Workspace
from repomap import RepoMapError

LOG_REFERENCE = (
    "a reference is the 16 hex digits of a Finding's reproduction.log or a change's tested.log"
)
RENDERERS = {"json": to_json, "markdown": to_markdown, "sarif": to_sarif_json}


def run(args: argparse.Namespace) -> int:
    try:
        settings = load_settings()
    except ConfigError as exc:
        if args.command == "doctor":  # the doctor reports, as one of its checks
            print(f"FAIL settings: {exc}")
            return EXIT_FAILED
        return _usage(str(exc))
    if args.command == "doctor":  # it reports a bad data directory as a failed check
        return run_doctor(args, settings)
    try:
        check_data_home()
    except ConfigError as exc:
        return _usage(str(exc))
    return COMMANDS[args.command](args, settings)


class _BadInput(Exception):
    """What is wrong with the command's input, in words for the user (exit 2)."""


def run_log(args: argparse.Namespace, settings: Settings) -> int:
    """Print a sandboxed run's stored log."""
    text = Logs().load(args.ref)
    if text is None:
        return _usage(f"no run log {args.ref!r} in this data directory; {LOG_REFERENCE}")
    sys.stdout.write(text if text.endswith("\n") else f"{text}\n")
    return EXIT_OK


def run_diagnose(args: argparse.Namespace, settings: Settings) -> int:
    sink = None if args.quiet else _progress
    asked = {"verify": args.verify, "verify_python": args.python}
    settings = settings.model_copy(update={k: v for k, v in asked.items() if v is not None})
    try:  # models first: a typo in a flag should not wait for an index build
        models = resolve_models(
            settings, model=args.model, formatter_model=args.formatter_model,
            fallback_models=args.fallback_models,
        )  # fmt: skip
        check_endpoints(models)
        workspace, intake = _inputs(args, settings)
        # Here, on the main thread, where Ctrl-C and SIGTERM land and stop the parse pool;
        # the pipeline would build it in a worker thread, out of their reach.
        workspace.warm()
        outcome = diagnose(
            intake.report, workspace, models=models, traces=intake.traces,
            truncated=intake.truncated, sink=sink,
        )  # fmt: skip
    except (_BadInput, DiagnoserError, RepoMapError) as exc:  # e.g. a data dir inside the repo
        return _usage(str(exc))
    if outcome.finding is None:
        print(f"diagnosis {outcome.state.value}: {outcome.reason}", file=sys.stderr)
        return EXIT_FAILED
    sys.stdout.write(RENDERERS[args.format](outcome.finding).rstrip("\n") + "\n")
    return EXIT_OK if outcome.state in (State.COMPLETE, State.NOT_ACTIONABLE) else EXIT_FAILED


def _inputs(args: argparse.Namespace, settings: Settings) -> tuple[Workspace, Intake]:
    raw = _read_report(args.report, json_body=args.provider is not None)
    try:
        intake = _intake(raw, args.provider)
    except ValidationError as exc:  # a ReportIn field out of range
        raise _BadInput(f"invalid report: {exc.errors()[0]['msg']}") from None
    return Workspace(args.repo, settings), intake


def _read_report(name: str, *, json_body: bool) -> bytes:
    """The report's bytes, reading at most its limit (plus one byte to tell it is over)."""
    limit = MAX_PAYLOAD_BYTES if json_body else MAX_REPORT_BYTES
    try:
        if name == "-":
            return read_limited(sys.stdin.buffer, limit)
        with open(name, "rb") as stream:
            return read_limited(stream, limit)
    except OSError as exc:
        raise _BadInput(f"cannot read the report: {exc.strerror}: {name}") from None
    except PayloadTooLarge:
        kind = "a webhook body" if json_body else "a report"
        raise _BadInput(f"the report is over the {limit:,}-byte limit for {kind}") from None


def _intake(raw: bytes, provider: str | None) -> Intake:
    """A plain report, or a webhook body through its provider's adapter."""
    if provider is None:
        text = raw.decode("utf-8", errors="replace")  # a log with stray bytes is still a log
        if not text.strip():
            raise _BadInput("the report is empty")
        return Intake(report=ReportIn(text=text))
    intakes = from_payload(provider, load_json(raw))
    if not intakes:
        raise IntakeError(f"the {provider} payload holds no report", field="")
    return intakes[0]


def run_repomap(args: argparse.Namespace, settings: Settings) -> int:
    """`python -m repomap`, with the settings' deny-list (`DIAGNOSER_DENY`, `…_EXTRA`)."""
    from repomap.__main__ import main as repomap_main  # noqa: PLC0415 (one entry point)

    return repomap_main(args.args, deny=settings.deny_list())


def run_doctor(args: argparse.Namespace, settings: Settings) -> int:
    """One line per check; exit 1 if any fails."""
    database_url = settings.database_url or default_database_url()
    checks = run_checks(
        demo_repo=DEFAULT_REPO, database_url=database_url, repos=settings.repos,
        deny=settings.deny_list(), executor=settings.executor(), git_repos=settings.git_repos,
        verification=check_verification(settings),
        review_encoder=check_review_encoder(settings), models=check_models(
            settings, model=args.model, formatter_model=args.formatter_model,
            fallback_models=args.fallback_models,
        ),
    )  # fmt: skip
    for check in checks:
        print(f"{'ok ' if check.passed else 'FAIL'} {check.name}: {check.detail}")
    return EXIT_OK if all(check.passed for check in checks) else EXIT_FAILED


def _progress(event: Event) -> None:
    print(f"[{event.at:7.3f}s] {event.state.value:<15} {event.detail}", file=sys.stderr)


def _usage(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return EXIT_USAGE


COMMANDS: dict[str, Callable[[argparse.Namespace, Settings], int]] = {
    "diagnose": run_diagnose, "repomap": run_repomap, "log": run_log,
}  # fmt: skip
"""What each command runs once the settings and the data directory are checked (the
doctor reports those as checks of its own)."""
