"""The `diagnoser` command's entry point (`[project.scripts]`): Ctrl-C while the
service's modules load — the first seconds of every run — ends it with one line and
exit 130, as a Ctrl-C later on does (`repomap.signals`), never a traceback.

It is the one module loaded before that protection, so it imports nothing else: a
top-level module because each package's `__init__` is already seconds of imports.
"""

from __future__ import annotations

import sys

PROG = "diagnoser"
EXIT_INTERRUPTED = 130
"""128 + SIGINT: the shell's code for a run stopped by Ctrl-C (as
`repomap.signals.EXIT_INTERRUPTED`, which cannot be imported here without its package)."""


SERVE = "serve"
"""The one command of the service (`api.cli`); every other is the CLI's (`diagnoser.cli`),
which imports neither FastAPI nor the database layers: it starts in a blink."""


def main() -> int:
    try:
        if sys.argv[1:2] == [SERVE]:
            from api.cli import main as run  # noqa: PLC0415
        else:
            from diagnoser.cli import main as run  # noqa: PLC0415

        return run()
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    raise SystemExit(main())
