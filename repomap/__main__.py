"""`python -m repomap PATH [--tokens N] [--focus FILE_OR_IDENT ...] [--stats] [--deny PATTERN]`.

Secret files stay out of the map: the default deny-list, plus `$DIAGNOSER_DENY_EXTRA`
and every `--deny PATTERN` (`repomap.deny`).
Exit codes: 0 map printed; 2 bad arguments, deny pattern or repository path; 1 unexpected
failure; 130 / 143 stopped by Ctrl-C / SIGTERM (`repomap.signals`).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence

from repomap import collector
from repomap.build import Progress
from repomap.constants import DEFAULT_MAP_TOKENS, DENY_EXTRA_ENV_VAR
from repomap.deny import DenyList, parse_patterns
from repomap.errors import RepoMapError
from repomap.languages import LANGUAGES
from repomap.render import estimate_tokens
from repomap.repository import Repository
from repomap.signals import run_stoppable

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2


def parser() -> argparse.ArgumentParser:
    cli = argparse.ArgumentParser(
        prog="python -m repomap",
        description="Print a ranked, token-budgeted map of a repository's definitions.",
        epilog=f"Languages: {', '.join(sorted(LANGUAGES))}. The index is cached under "
        "$DIAGNOSER_HOME (default: the user cache dir), never inside the repository. "
        "Secret files (.env*, keys, credentials, .aws/, .ssh/, .git/, ...) are never mapped, "
        f"nor symlinks or hard links to them; ${DENY_EXTRA_ENV_VAR} (comma-separated or a "
        "JSON list) and --deny add patterns.",
    )
    cli.add_argument("path", help="the repository's root folder")
    cli.add_argument(
        "--tokens",
        type=int,
        default=DEFAULT_MAP_TOKENS,
        help=f"token budget of the map (default {DEFAULT_MAP_TOKENS})",
    )
    cli.add_argument(
        "--focus",
        nargs="+",
        default=[],
        metavar="FILE_OR_IDENT",
        help="files (path, path suffix, or path:line) and identifiers to centre on",
    )
    cli.add_argument("--stats", action="store_true", help="print build statistics to stderr")
    cli.add_argument("--no-cache", action="store_true", help="ignore and do not write the cache")
    cli.add_argument(
        "--deny",
        action="append",
        default=[],
        metavar="PATTERN",
        help="also leave out files matching this gitignore-style pattern (repeatable)",
    )
    return cli


def main(argv: Sequence[str] | None = None, *, deny: DenyList | None = None) -> int:
    """Print the map. `deny` replaces the default list and `$DIAGNOSER_DENY_EXTRA` (the
    diagnoser passes its settings' list); `--deny` patterns extend either."""
    args = parser().parse_args(argv)
    return run_stoppable(lambda: _run(args, deny), prog="repomap")


def _run(args: argparse.Namespace, deny: DenyList | None) -> int:
    if args.tokens < 1:
        print("error: --tokens must be a positive number", file=sys.stderr)
        return EXIT_USAGE
    started = time.perf_counter()
    progress = _progress_printer() if sys.stderr.isatty() else None
    try:
        rule = (deny or _environment_deny()).extended(args.deny)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        repo = Repository.open(args.path, use_cache=not args.no_cache, progress=progress, deny=rule)
    except RepoMapError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    text = repo.map(focus=args.focus, tokens=args.tokens)
    sys.stdout.write(text)
    if args.stats:
        stats = repo.stats
        print(
            f"files {stats.files}  parsed {stats.parsed}  cached {stats.reused}  "
            f"definitions {sum(len(t.definitions) for t in repo.tags.values())}  "
            f"warnings {len(repo.warnings)}\n"
            f"build {stats.seconds:.3f}s  total {time.perf_counter() - started:.3f}s  "
            f"map ~{estimate_tokens(text)} tokens  cache {stats.cache_dir}",
            file=sys.stderr,
        )
    return EXIT_OK


def _environment_deny() -> DenyList:
    """The default list plus `$DIAGNOSER_DENY_EXTRA`; ValueError names a bad pattern."""
    extra = os.environ.get(DENY_EXTRA_ENV_VAR, "")
    try:
        return DenyList.default().extended(parse_patterns(extra))
    except ValueError as exc:
        raise ValueError(f"{DENY_EXTRA_ENV_VAR}: {exc}") from None


def _progress_printer() -> Progress:
    def progress(done: int, total: int) -> None:
        end = "\n" if done == total else ""
        print(f"\rparsing {done}/{total} files", end=end, file=sys.stderr, flush=True)

    return progress


if __name__ == "__main__":
    code = main()
    collector.before_exit()  # the interpreter's collections at exit skip the map's objects
    sys.exit(code)
