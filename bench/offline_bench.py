"""CPU time of one offline diagnosis, two checkouts side by side.

    .venv/bin/python bench/offline_bench.py [--before DIR] [--runs 3] [--reports 40]

What a worker spends per job on the embedded model (the fleet's offline regime, and
every API test that runs a job): in one process, the sample issue is diagnosed once
untimed (imports, the demo app's index), then `--reports` times with its exception
renamed (distinct reports, as a burst of them is), in the process's CPU time (every
thread: pydantic-ai runs sync tools in worker threads). Each run is a fresh process,
the checkouts alternating run by run (a shared, noisy machine: ratios side by side).
A checkout runs with its own sources first on `PYTHONPATH` and this `.venv`'s packages;
`--before` is another checkout's folder (e.g. a `git worktree` of the commit before).
Prints each run's ms per diagnosis, and the median per checkout.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from tests.api.server import server_env  # noqa: E402

RUN = """
import sys, time
from pathlib import Path
from diagnoser.intake import ReportIn
from diagnoser.pipeline import diagnose
from diagnoser.workspace import Workspace

samples = Path("sample_reports")
issue = (samples / "reports" / "issue_load_more_500.md").read_text()
workspace = Workspace(samples / "demo_app")

def one(n):
    text = issue.replace("PageOutOfRangeError: page", f"PageOutOfRangeError{n}: page")
    outcome = diagnose(ReportIn(text=text), workspace)
    assert outcome.finding is not None, outcome.reason

one(0)
start = time.process_time()
for n in range(1, int(sys.argv[1]) + 1):
    one(n)
print((time.process_time() - start) / int(sys.argv[1]))
"""
"""One run: the CPU seconds per diagnosis."""


def per_diagnosis(checkout: Path, reports: int) -> float:
    with tempfile.TemporaryDirectory() as home:
        env = server_env({"PYTHONPATH": str(checkout), "DIAGNOSER_HOME": home})
        done = subprocess.run(
            [sys.executable, "-c", RUN, str(reports)], cwd=checkout, env=env,
            capture_output=True, text=True, check=False,
        )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: exited {done.returncode}:\n{done.stderr}")
    return float(done.stdout.split()[-1])


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument("--before", type=Path, help="another checkout to compare with")
    cli.add_argument("--runs", type=int, default=3)
    cli.add_argument("--reports", type=int, default=40)
    args = cli.parse_args()
    checkouts = {"after": ROOT, **({"before": args.before.resolve()} if args.before else {})}
    times: dict[str, list[float]] = {name: [] for name in checkouts}
    for _ in range(args.runs):
        for name, checkout in checkouts.items():
            times[name].append(per_diagnosis(checkout, args.reports))
    for name, runs in times.items():
        cells = ", ".join(f"{1000 * t:.0f}" for t in runs)
        print(
            f"{name:<7} ms CPU per diagnosis: {cells}; median {1000 * statistics.median(runs):.0f}"
        )


if __name__ == "__main__":
    main()
