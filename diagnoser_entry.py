"""The `diagnoser` command's entry point (`[project.scripts]`): Ctrl-C while the
service's modules load — the first seconds of every run — ends it with one line and
exit 130, as a Ctrl-C later on does (`repomap.signals`), never a traceback.

It is the one module loaded before that protection: a top-level module that imports
only `repomap.signals` and `repomap.collector` (pure Python; the packages export their
names lazily) before the command's modules, which load under `exit_on_interrupt`, with
the garbage collector set for a short process (`repomap.collector`).
"""

from __future__ import annotations

import sys

PROG = "diagnoser"
EXIT_INTERRUPTED = 130
"""128 + SIGINT: the shell's code for a run stopped by Ctrl-C (as
`repomap.signals.EXIT_INTERRUPTED`, which cannot be imported here without its package)."""


SERVICE_COMMANDS = ("serve", "worker")
"""The service's commands (`api.cli`); every other is the CLI's (`diagnoser.cli`), which
imports neither FastAPI nor the database layers: it starts in a blink."""


def main() -> int:
    from repomap import collector  # noqa: PLC0415 (pure Python, light)

    try:
        from repomap.signals import exit_on_interrupt  # noqa: PLC0415 (pure Python, light)

        # A Ctrl-C inside a C extension's start-up included; no garbage collection while
        # the modules load, nor over them afterwards (`repomap.collector`).
        with exit_on_interrupt(PROG), collector.loading():
            if sys.argv[1:2] and sys.argv[1] in SERVICE_COMMANDS:
                from api.cli import main as run  # noqa: PLC0415
            else:
                from diagnoser.cli import main as run  # noqa: PLC0415
        return run()
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        collector.before_exit()


if __name__ == "__main__":
    raise SystemExit(main())
