"""`diagnoser`: diagnose a report against a repository, print a repo map, or check the set-up.

    diagnoser diagnose [--repo PATH] [REPORT_FILE | -] [--format json|markdown|sarif]
                       [--model offline] [--formatter-model MODEL] [--fallback-models M,…]
                       [--provider sentry|github|…] [--verify [--python PYTHON]]
    diagnoser log REF
    diagnoser repomap PATH [--tokens N] [--focus …]
    diagnoser doctor [--model MODEL] [--formatter-model MODEL] [--fallback-models M,…]

The Finding goes to stdout; progress (one line per pipeline event) to stderr.
Exit codes: 0 a Finding was produced (complete or not actionable); 1 the diagnosis
failed or timed out (the reason is on stderr); 2 bad arguments, input or settings (one
line naming what to fix); 130 / 143 stopped by Ctrl-C / SIGTERM (`repomap.signals`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from diagnoser.constants import DEMO_REPO, PROVIDERS
from repomap import allocator
from repomap.signals import exit_on_interrupt, run_stoppable

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
DEFAULT_REPO = DEMO_REPO
"""The demo application: a new user sees real findings at once."""
FORMATS = ("json", "markdown", "sarif")
SERVE_HELP = (
    "diagnoser serve [--host H] [--port P] [--workers N] [--no-jobs] starts the HTTP service "
    "(Swagger UI at /docs); diagnoser worker runs jobs only (a fleet on PostgreSQL): see "
    "diagnoser serve --help, diagnoser worker --help"
)
FALLBACK_HELP = (
    "comma-separated models tried in order when the explorer's provider fails; may end in "
    "'offline' (default: DIAGNOSER_FALLBACK_MODELS)"
)


def parser() -> argparse.ArgumentParser:
    cli = argparse.ArgumentParser(
        prog="diagnoser", description=__doc__.split("\n\n")[0], epilog=SERVE_HELP
    )
    commands = cli.add_subparsers(dest="command", required=True)
    run = commands.add_parser("diagnose", help="diagnose one report (a file, or - for stdin)")
    run.add_argument("report", nargs="?", default="-", help="report file (text or webhook JSON)")
    run.add_argument(
        "--repo", type=Path, default=DEFAULT_REPO, help="repository root (default: the demo app)"
    )
    run.add_argument("--format", choices=FORMATS, default="json")
    run.add_argument(
        "--model",
        help="'offline' or a PydanticAI model string (default: DIAGNOSER_MODEL, else offline)",
    )
    run.add_argument(
        "--provider",
        choices=PROVIDERS,
        metavar="PROVIDER",
        help=f"the report is this provider's webhook JSON: {', '.join(PROVIDERS)}",
    )
    run.add_argument(
        "--formatter-model",
        help="a PydanticAI model that structures a report off the template, and refines an "
        "uncertain classification unless DIAGNOSER_TRIAGE_MODEL names another "
        "(default: DIAGNOSER_FORMATTER_MODEL, else the explorer's own; offline needs none)",
    )
    run.add_argument("--fallback-models", help=FALLBACK_HELP)
    run.add_argument(
        "--verify",
        action="store_true",
        default=None,
        help="run the report's reproducer (a failing test it names, or its Python code) in a "
        "bubblewrap sandbox on a throwaway copy; this RUNS the repository's code and code "
        "from the report (default: DIAGNOSER_VERIFY, off)",
    )
    run.add_argument(
        "--python",
        help="the interpreter --verify runs with; it should have the project's dependencies "
        "(default: DIAGNOSER_VERIFY_PYTHON, else python3 on PATH)",
    )
    run.add_argument("--quiet", action="store_true", help="no progress on stderr")
    log = commands.add_parser("log", help="print a sandboxed run's log (a Finding's log reference)")
    log.add_argument("ref", help="the reference: 16 hex digits, as in reproduction.log")
    repomap = commands.add_parser("repomap", help="print the repo map (same as python -m repomap)")
    repomap.add_argument("args", nargs=argparse.REMAINDER)
    check = commands.add_parser(
        "doctor",
        help="check grammars, data dir, database, models (resolve and reach), demo repo, "
        "and how many source files each served repository's map indexes",
    )
    check.add_argument("--model", help="the model to check (default: DIAGNOSER_MODEL)")
    check.add_argument(
        "--formatter-model",
        help="a formatter model to check too (default: DIAGNOSER_FORMATTER_MODEL)",
    )
    check.add_argument("--fallback-models", help=FALLBACK_HELP)
    return cli


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    allocator.configure(allocator.ONE_RUN_ARENAS)
    return run_stoppable(lambda: _run(args), prog="diagnoser")


def _run(args: argparse.Namespace) -> int:
    with exit_on_interrupt("diagnoser"):  # the imports: see `repomap.signals`
        from diagnoser import commands  # noqa: PLC0415 (after parsing: --help loads none of it)

    return commands.run(args)
