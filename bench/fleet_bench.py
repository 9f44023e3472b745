"""Throughput of a fleet against its number of workers (issue 25 §4).

    PYTHONPATH=$PWD .venv/bin/python bench/fleet_bench.py [--workers 1 2 4] [--jobs 32]
        [--delay 0.4] [--concurrency 2] [--offline-jobs 48] [--overhead-jobs 30]
        [--takeover 5] [--no-kill] [--json OUT]

Each run: a fresh PostgreSQL database (127.0.0.1:5432), one `diagnoser serve --no-jobs`
and N `diagnoser worker` processes (real subprocesses, each with its own data directory,
`DIAGNOSER_JOB_CONCURRENCY` each), J distinct reports (the sample issue, its exception
renamed) posted at once, until every job ended. Two regimes:

- `model`: the explorer is `engineer` (bench/token_bench.py, a scripted careful engineer)
  through the real OpenAI client to the fake provider (`tests/fakes/`), every answer
  after `--delay` s: the LLM-bound regime real users are in;
- `offline`: the embedded model, CPU-bound: it flattens at the machine's cores.

Per run: jobs/s from the first job's creation to the last one's end, the speed-up over
one worker, each job's run time (its first attempt → its end, p50). In the largest model
fleet one worker is `kill -9`-ed when a third of the jobs ended (`--no-kill`: not):
jobs ended, lost (not ended), duplicated Findings, and how long the killed worker's jobs
waited for another (`--takeover` s is the fleet's setting there).

Queue overhead: jobs posted one at a time (`?wait=`) to an idle one-worker offline fleet;
enqueue → start is the job's creation → its first attempt (`attempts.started_at`), p50
and p99.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(HERE)]

from sqlalchemy import func, select  # noqa: E402
from token_bench import engineer  # noqa: E402

from api.schemas import TERMINAL  # noqa: E402
from api.store import Store  # noqa: E402
from api.tables import FindingRow  # noqa: E402
from tests.api.databases import postgres_database  # noqa: E402
from tests.api.server import Server, fleet, until  # noqa: E402
from tests.fakes.provider import FakeProvider  # noqa: E402

ISSUE = (ROOT / "sample_reports" / "reports" / "issue_load_more_500.md").read_text()
EXCEPTION = "PageOutOfRangeError: page"
DEADLINE_SECONDS = 900.0
"""Hang guard of every wait."""
KILL_AFTER = 1 / 3
"""The kill comes when this share of the jobs ended."""


@dataclass(frozen=True)
class Run:
    regime: str
    workers: int
    concurrency: int
    jobs: int
    seconds: float
    jobs_per_second: float
    run_p50: float
    ended: int
    failed: int
    lost: int
    duplicates: int
    killed: bool = False
    takeover_wait_max: float | None = None


def distinct(n: int) -> str:
    return ISSUE.replace(EXCEPTION, f"PageOutOfRangeError{n}: page")


def submit(api: Server, count: int, offset: int = 0) -> list[str]:
    ids = []
    for n in range(offset, offset + count):
        answer = api.client.post("/diagnose", json={"report": {"text": distinct(n)}})
        if answer.status_code != 202:
            raise SystemExit(f"refused: {answer.status_code} {answer.text}")
        ids.append(str(answer.json()["job_id"]))
    return ids


def ended(store: Store, job_ids: list[str]) -> int:
    return sum(1 for job_id in job_ids if _state_ended(store, job_id))


def _state_ended(store: Store, job_id: str) -> bool:
    job = store.job(job_id)
    return job is not None and job.state in TERMINAL


def measure(
    regime: str, url: str, workers: int, args: argparse.Namespace, settings: dict[str, str],
    *, jobs: int, kill: bool,
) -> Run:  # fmt: skip
    with (
        tempfile.TemporaryDirectory(prefix="fleet-bench-") as tmp,
        fleet(url, Path(tmp), {f"w{n}": {} for n in range(workers)}, settings) as (
            api,
            running,
            store,
        ),
    ):
        job_ids = submit(api, jobs)
        killed_at: datetime | None = None
        held: set[str] = set()
        if kill:
            until("a third ended", lambda: ended(store, job_ids) >= jobs * KILL_AFTER)
            victim = running["w0"]
            name = next(m.id for m in store.executors() if m.pid == victim.process.pid)
            victim.kill()
            killed_at = datetime.now().astimezone()
            held = {
                i for i in store.unfinished()
                if (job := store.job(i)) and job.attempts and job.attempts[-1].executor == name
            }  # fmt: skip
        deadline = time.monotonic() + DEADLINE_SECONDS
        while ended(store, job_ids) < jobs and time.monotonic() < deadline:
            time.sleep(0.2)
        done = [store.job(job_id) for job_id in job_ids]
        with store.engine.connect() as connection:
            per_job = dict(connection.execute(
                select(FindingRow.job_id, func.count()).group_by(FindingRow.job_id)
            ).all())  # fmt: skip
    finished = [job for job in done if job is not None and job.state in TERMINAL]
    start = min(job.created_at for job in done if job is not None)
    end = max(job.finished_at for job in finished if job.finished_at is not None)
    seconds = (end - start).total_seconds()
    runs = [
        (job.finished_at - job.attempts[0].started_at).total_seconds()
        for job in finished if job.finished_at is not None and job.attempts
    ]  # fmt: skip
    waits = [
        (min(a.started_at for a in job.attempts if a.started_at > killed_at) - killed_at)
        .total_seconds()
        for job in done
        if killed_at is not None and job is not None and job.id in held
        and any(a.started_at > killed_at for a in job.attempts)
    ]  # fmt: skip
    return Run(
        regime=regime, workers=workers, concurrency=args.concurrency, jobs=jobs,
        seconds=round(seconds, 2), jobs_per_second=round(len(finished) / seconds, 3),
        run_p50=round(statistics.median(runs), 2), ended=len(finished),
        failed=sum(1 for job in finished if job.state.value == "failed"),
        lost=jobs - len(finished), duplicates=sum(1 for n in per_job.values() if n > 1),
        killed=kill, takeover_wait_max=round(max(waits), 2) if waits else None,
    )  # fmt: skip


def overhead(url: str, args: argparse.Namespace) -> tuple[float, float, int]:
    """Enqueue → start (s) of jobs posted one at a time to an idle one-worker fleet."""
    settings = {"DIAGNOSER_JOB_CONCURRENCY": str(args.concurrency)}
    with (
        tempfile.TemporaryDirectory(prefix="fleet-bench-") as tmp,
        fleet(url, Path(tmp), {"w0": {}}, settings) as (api, _running, store),
    ):
        waits = []
        for n in range(args.overhead_jobs):
            body = {"report": {"text": distinct(10_000 + n)}}
            answer = api.client.post("/diagnose?wait=60", json=body)
            body_out = answer.json()
            job = store.job(str(body_out.get("id") or body_out["job_id"]))
            assert job is not None and job.attempts, answer.text
            waits.append((job.attempts[0].started_at - job.created_at).total_seconds())
    waits.sort()
    p99 = waits[min(len(waits) - 1, round(0.99 * (len(waits) - 1)))]
    return round(statistics.median(waits), 3), round(p99, 3), len(waits)


def table(runs: list[Run]) -> str:
    lines = [
        "| regime | workers × concurrency | jobs | s | jobs/s | × one worker | run p50 s | "
        "ended | lost | duplicate Findings | takeover wait max s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    base = {r.regime: r.jobs_per_second for r in runs if r.workers == 1 and not r.killed}
    for r in runs:
        speedup = r.jobs_per_second / base[r.regime] if base.get(r.regime) else float("nan")
        kill = " (one killed)" if r.killed else ""
        lines.append(
            f"| {r.regime} | {r.workers} × {r.concurrency}{kill} | {r.jobs} | {r.seconds} | "
            f"{r.jobs_per_second} | {speedup:.2f} | {r.run_p50} | {r.ended} | {r.lost} | "
            f"{r.duplicates} | {r.takeover_wait_max if r.takeover_wait_max is not None else '—'} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    cli.add_argument("--jobs", type=int, default=32, help="reports per model-regime run")
    cli.add_argument("--offline-jobs", type=int, default=48)
    cli.add_argument("--overhead-jobs", type=int, default=30)
    cli.add_argument("--delay", type=float, default=0.4, help="the fake model's answer time")
    cli.add_argument("--concurrency", type=int, default=2)
    cli.add_argument("--takeover", type=float, default=5.0)
    cli.add_argument("--no-kill", action="store_true")
    cli.add_argument("--json", type=Path)
    args = cli.parse_args(argv)
    runs: list[Run] = []
    common = {
        "DIAGNOSER_JOB_CONCURRENCY": str(args.concurrency),
        "DIAGNOSER_TAKEOVER_SECONDS": str(args.takeover),
        "DIAGNOSER_MAX_QUEUED_JOBS": str(max(args.jobs, args.offline_jobs) * 2),
    }
    with FakeProvider(engineer, delay_seconds=args.delay) as fake:
        model = {
            **common, "DIAGNOSER_MODEL": "openai:gpt-bench",
            "DIAGNOSER_MODEL_BASE_URL": fake.url + "/v1", "DIAGNOSER_MODEL_API_KEY": "bench",
        }  # fmt: skip
        kills = [] if args.no_kill else [max(args.workers)]
        for workers, kill in [(n, False) for n in args.workers] + [(n, True) for n in kills]:
            with postgres_database() as url:
                runs.append(measure("model", url, workers, args, model, jobs=args.jobs, kill=kill))
            print(table(runs[-1:]).splitlines()[-1], flush=True)
        requests = len(fake.requests)
        if fake.failures:
            raise SystemExit(f"the fake model's script failed:\n{fake.failures[0]}")
    for workers in args.workers:
        with postgres_database() as url:
            runs.append(measure("offline", url, workers, args, common, jobs=args.offline_jobs,
                                kill=False))  # fmt: skip
        print(table(runs[-1:]).splitlines()[-1], flush=True)
    with postgres_database() as url:
        p50, p99, count = overhead(url, args)
    print()
    print(table(runs))
    print(f"\nmodel answers: {requests}, each after {args.delay} s")
    print(f"queue overhead (enqueue → start), {count} jobs one at a time: p50 {p50} s, p99 {p99} s")
    if args.json:
        args.json.write_text(json.dumps(
            {"runs": [asdict(r) for r in runs], "overhead": {"p50": p50, "p99": p99}}, indent=1
        ))  # fmt: skip


if __name__ == "__main__":
    main()
