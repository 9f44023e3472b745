"""Wall time of the CLI's everyday commands, two checkouts side by side (issue 24 §2).

    bash ../shared/bench/get_sources.sh bench/.cache/devbench Django   # once
    .venv/bin/python bench/cli_start_bench.py [--before DIR] [--runs 7]

Each command runs in a fresh interpreter, `--runs` times per checkout, the checkouts
alternating run by run (a shared, noisy machine: ratios side by side, not absolutes):

- `diagnoser --help`;
- `diagnoser serve --help` (the service loads only after the settings are read);
- `diagnoser serve` with an unknown model and with a database that does not answer
  (both stop in `api.preflight`, before the web service loads);
- `diagnoser diagnose` of a sample report on the demo repository, offline, warm index;
- `python -m repomap` of Django 4.2, warm index.

A checkout is run with its own sources first on `PYTHONPATH`, this `.venv`'s packages;
`--before` is another checkout's folder (e.g. a `git worktree` of the commit before).
Its entry is `diagnoser_entry.py` when it has one, else `python -m api.cli`. Prints the
median and the fastest wall time (s) of each command per checkout, and the machine's
speed before and after: the CPU seconds of a loop of PROBE_ADDITIONS additions (this
machine's has ranged from 0.6 s to 2.4 s between hours of one day, and the commands'
times with it), so that runs of different hours can be told apart.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DJANGO = ROOT / "bench" / ".cache" / "devbench" / "src" / "Django-4.2"
REPORT = ROOT / "sample_reports" / "reports" / "issue_load_more_500.md"
DATABASE_DOWN = "postgresql://nobody@127.0.0.1:1/x"
"""Nothing listens on port 1: the connection is refused at once."""
EXIT_USAGE = 2
"""A bad setting's exit code (the serve rows end with it)."""
PROBE_ADDITIONS = 10**7


Command = tuple[list[str], dict[str, str]]
"""A command line and the settings it runs with (beside `DIAGNOSER_HOME`)."""


def commands(checkout: Path) -> dict[str, Command]:
    entry = checkout / "diagnoser_entry.py"
    cli = [sys.executable, str(entry)] if entry.exists() else [sys.executable, "-m", "api.cli"]
    return {
        "diagnoser --help": ([*cli, "--help"], {}),
        "diagnoser serve --help": ([*cli, "serve", "--help"], {}),
        "serve, unknown model": ([*cli, "serve"], {"DIAGNOSER_MODEL": "nope:model"}),
        "serve, database down": ([*cli, "serve"], {"DIAGNOSER_DATABASE_URL": DATABASE_DOWN}),
        "diagnoser diagnose (warm)": ([*cli, "diagnose", str(REPORT), "--quiet"], {}),
        "python -m repomap Django (warm)": ([sys.executable, "-m", "repomap", str(DJANGO)], {}),
    }


def wall(command: Command, checkout: Path, home: Path) -> float:
    argv, settings = command
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIAGNOSER_")}
    env |= {"PYTHONPATH": str(checkout), "DIAGNOSER_HOME": str(home), **settings}
    start = time.perf_counter()
    done = subprocess.run(
        argv, cwd=checkout, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True, check=False,
    )  # fmt: skip
    if done.returncode not in (0, EXIT_USAGE):
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr}")
    return time.perf_counter() - start


def machine_speed() -> float:
    """CPU seconds of PROBE_ADDITIONS integer additions in this interpreter."""
    start, total = time.process_time(), 0
    for number in range(PROBE_ADDITIONS):
        total += number
    return time.process_time() - start


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument("--before", type=Path, help="another checkout to compare with")
    cli.add_argument("--runs", type=int, default=7)
    args = cli.parse_args()
    if not DJANGO.is_dir():
        raise SystemExit(
            f"no {DJANGO}: bash ../shared/bench/get_sources.sh bench/.cache/devbench Django"
        )
    checkouts = {"after": ROOT, **({"before": args.before.resolve()} if args.before else {})}
    times: dict[tuple[str, str], list[float]] = {}
    speed = [machine_speed()]
    with tempfile.TemporaryDirectory() as scratch:
        homes = {name: Path(scratch) / name for name in checkouts}
        for name, checkout in checkouts.items():  # warm every index once, untimed
            for command in commands(checkout).values():
                wall(command, checkout, homes[name])
        for _ in range(args.runs):
            for name, checkout in checkouts.items():
                for label, command in commands(checkout).items():
                    times.setdefault((label, name), []).append(wall(command, checkout, homes[name]))
    speed.append(machine_speed())
    print(f"{'command':<34}" + "".join(f"{name:>20}" for name in checkouts))
    for label in commands(ROOT):
        cells = (times[label, name] for name in checkouts)
        print(
            f"{label:<34}" + "".join(f"{statistics.median(t):>10.2f} ({min(t):.2f})" for t in cells)
        )
    print(f"machine: {PROBE_ADDITIONS:.0e} additions took {speed[0]:.2f} s of CPU before, "
          f"{speed[1]:.2f} s after")  # fmt: skip


if __name__ == "__main__":
    main()
