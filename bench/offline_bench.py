"""CPU time of one offline diagnosis, two checkouts side by side.

    .venv/bin/python bench/offline_bench.py [--before DIR] [--runs 3] [--reports 40] [--service]

What a worker spends per job on the embedded model (the fleet's offline regime, and
every API test that runs a job): in one process, the sample issue is diagnosed once
untimed (imports, the demo app's index), then `--reports` times with its exception
renamed (distinct reports, as a burst of them is), in the process's CPU time (every
thread: pydantic-ai runs sync tools in worker threads). Each run is a fresh process,
the checkouts alternating run by run (a shared, noisy machine: ratios side by side).
A checkout runs with its own sources first on `PYTHONPATH` and this `.venv`'s packages;
`--before` is another checkout's folder (e.g. a `git worktree` of the commit before).
Prints each run's ms per diagnosis, and the median per checkout.

`--service`: the same through a real `diagnoser serve` (SQLite, a fresh data directory,
the checkout's own code): one report posted and waited for untimed, then `--reports`
distinct ones posted at once and waited for (each job polled every POLL_SECONDS); the
server's CPU time over the burst (every thread, `/proc/PID/stat`), per job — what a job
costs the process that runs it: the diagnosis, and the job's store writes, its events and
the queue's bookkeeping (and the posts and polls, a few ms of it).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from service_load import cpu_seconds  # noqa: E402
from service_server import server, wait_ready  # noqa: E402

from api.schemas import TERMINAL  # noqa: E402
from tests.api.server import free_port, server_env  # noqa: E402

POLL_SECONDS = 0.2
ENDED = {state.value for state in TERMINAL}
ISSUE = (ROOT / "sample_reports" / "reports" / "issue_load_more_500.md").read_text()

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


def per_job(checkout: Path, reports: int) -> float:
    """One run through `diagnoser serve`: the server's CPU seconds per job."""
    port = free_port()
    with (
        tempfile.TemporaryDirectory() as home,
        server(port, None, Path(home), None, checkout=checkout) as process,
        httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client,
    ):
        wait_ready(str(client.base_url), process)
        _wait(client, [_post(client, 0)])
        before = cpu_seconds([process.pid])
        _wait(client, [_post(client, n) for n in range(1, reports + 1)])
        return (cpu_seconds([process.pid]) - before) / reports


def _post(client: httpx.Client, n: int) -> str:
    text = ISSUE.replace("PageOutOfRangeError: page", f"PageOutOfRangeError{n}: page")
    answer = client.post("/diagnose", json={"report": {"text": text}})
    if answer.status_code != 202:
        raise SystemExit(f"POST /diagnose: {answer.status_code} {answer.text}")
    return str(answer.json()["job_id"])


def _wait(client: httpx.Client, job_ids: list[str]) -> None:
    for job_id in job_ids:
        while (state := client.get(f"/jobs/{job_id}").json()["state"]) not in ENDED:
            time.sleep(POLL_SECONDS)
        if state != "complete":
            raise SystemExit(f"job {job_id} ended {state}")


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument("--before", type=Path, help="another checkout to compare with")
    cli.add_argument("--runs", type=int, default=3)
    cli.add_argument("--reports", type=int, default=40)
    cli.add_argument("--service", action="store_true", help="through a real diagnoser serve")
    args = cli.parse_args()
    checkouts = {"after": ROOT, **({"before": args.before.resolve()} if args.before else {})}
    times: dict[str, list[float]] = {name: [] for name in checkouts}
    measure, unit = (per_job, "job, server") if args.service else (per_diagnosis, "diagnosis")
    for _ in range(args.runs):
        for name, checkout in checkouts.items():
            times[name].append(measure(checkout, args.reports))
    for name, runs in times.items():
        cells = ", ".join(f"{1000 * t:.0f}" for t in runs)
        median = 1000 * statistics.median(runs)
        print(f"{name:<7} ms CPU per {unit}: {cells}; median {median:.0f}")


if __name__ == "__main__":
    main()
